// `bpfsbx watch` in a real terminal (tmux): a person sees the whole request
// before the approve key works. Two commands hide their tail from a
// screen that cuts lines: one padded with 400 spaces, one of 40 lines.
// The hook (the real `bpfsbx hook pre-tool-use`) files each request and
// waits; the keys are sent with tmux send-keys, the screen is read with
// capture-pane.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { bpfsbx, initProject, pendingIds, run, sleep, assert } from './lib.mjs';

const haveTmux = () => spawnSync('tmux', ['-V']).status === 0;

function tmux(...args) {
  return execFileSync('tmux', args, { stdio: 'pipe' }).toString();
}

async function screenUntil(sess, pred, what, ms = 15000) {
  const end = Date.now() + ms;
  let s = '';
  while (Date.now() < end) {
    s = tmux('capture-pane', '-p', '-t', sess);
    if (pred(s)) return s;
    await sleep(150);
  }
  throw new Error(`${what}: the screen never showed it:\n${s}`);
}

function askPolicy(p) {
  const f = path.join(p.project, '.sandbox', 'policy.yaml');
  fs.appendFileSync(f, '\ncommands:\n  rules:\n    - command: echo\n      args: ["ask-me*"]\n' +
    '      verdict: ask\n      reason: "e2e: echo ask-me needs a person"\n');
}

// file the command through the hook, open watch in tmux; returns handles
async function setup(name, command) {
  const p = initProject(name);
  askPolicy(p);
  const input = JSON.stringify({ session_id: 's', transcript_path: '/x', cwd: p.project,
    hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command, description: 'check status' },
    tool_use_id: 'toolu_w' });
  const hook = run(bpfsbx, ['hook', 'pre-tool-use'], { env: { ...process.env, HOME: p.home,
    BPFSBX_HOOK_WAIT_MS: '60000' }, cwd: p.project, input, ms: 90000 });
  for (let i = 0; i < 100 && !pendingIds(p.project).length; i++) await sleep(100);
  assert(pendingIds(p.project).length === 1, 'the hook filed no request');
  const sess = `bpfsbx-e2e-${process.pid}-${name}`;
  tmux('new-session', '-d', '-s', sess, '-x', '100', '-y', '30', '-e', `HOME=${p.home}`,
    `${bpfsbx} watch ${p.project}`);
  return { p, hook, sess };
}

export const tests = {
  async 'watch: a command padded with 400 spaces shows its tail before it can be approved'() {
    if (!haveTmux()) return { skip: 'tmux is not installed (make deps)' };
    const cmd = 'echo ask-me start' + ' '.repeat(400) + '; echo TAIL-400-SHOWN';
    const { p, hook, sess } = await setup('w400', cmd);
    try {
      const s = await screenUntil(sess, (t) => t.includes('1 pending') && t.includes('command'), 'the request');
      assert(s.includes('TAIL-400-SHOWN'), `the tail is not on the screen:\n${s}`);
      assert(/\u2420\u00d7400/.test(s), `the run of spaces is not shown as its length:\n${s}`);
      assert(s.includes('run of spaces (longest 400)'), `no warning line:\n${s}`);
      assert(s.includes('check status'), `the agent's description is not shown:\n${s}`);
      tmux('send-keys', '-t', sess, 'o');
      const r = await hook;
      const out = JSON.parse(r.out);
      const reason = out.hookSpecificOutput.permissionDecisionReason;
      assert(reason.includes('TAIL-400-SHOWN'), `the approved command's output: ${reason.slice(0, 400)}`);
    } finally {
      spawnSync('tmux', ['kill-session', '-t', sess]);
    }
  },

  async 'watch: a 40-line command must be scrolled to its end before the approve key works'() {
    if (!haveTmux()) return { skip: 'tmux is not installed (make deps)' };
    const lines = ['echo ask-me L1'];
    for (let i = 2; i < 40; i++) lines.push(`echo L${i}`);
    lines.push('echo L40-TAIL-SHOWN');
    const { p, hook, sess } = await setup('w40', lines.join('\n'));
    try {
      let s = await screenUntil(sess, (t) => t.includes('1 pending') && t.includes('rows 1-'), 'the scrolled view');
      assert(!s.includes('L40-TAIL-SHOWN'), `the whole command fit a 30-row screen?\n${s}`);
      tmux('send-keys', '-t', sess, 'o');
      s = await screenUntil(sess, (t) => t.includes('read it to the end'), 'the refusal of o');
      assert(pendingIds(p.project).length === 1, 'approved before the end was shown');
      for (let i = 0; i < 10 && !s.includes('L40-TAIL-SHOWN'); i++) {
        tmux('send-keys', '-t', sess, 'Space');
        await sleep(300);
        s = tmux('capture-pane', '-p', '-t', sess);
      }
      assert(s.includes('L40-TAIL-SHOWN') && s.includes('the end'), `never scrolled to the end:\n${s}`);
      tmux('send-keys', '-t', sess, 'o');
      const r = await hook;
      const reason = JSON.parse(r.out).hookSpecificOutput.permissionDecisionReason;
      assert(reason.includes('L40-TAIL-SHOWN'), `output: ${reason.slice(0, 400)}`);
    } finally {
      spawnSync('tmux', ['kill-session', '-t', sess]);
    }
  },
};
