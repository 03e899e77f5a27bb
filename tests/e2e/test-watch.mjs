// `bpfsbx watch` in a real terminal (tmux): a person sees the whole request
// before the approve key works. Two commands hide their tail from a
// screen that cuts lines: one padded with 400 spaces, one of 40 lines.
// The hook (the real `bpfsbx hook pre-tool-use`) files each request and
// waits; the keys are sent with tmux send-keys, the screen is read with
// capture-pane.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { bpfsbx, initProject, pendingIds, run, sleep, assert } from './lib.mjs';
import { project, submit, pendingDir, doneDir, readDone, exists } from './dashboard-lib.mjs';
import { hostileCommand, hostileFile, renderings, mustShow } from './hostile.mjs';

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

// The rows of the request on one screen (capture-pane): the rows between
// the "count" line and the "rows a-b of n" line (or the keys), each
// {label, cont, text}: label on a field's first row, cont on a soft-wrapped
// row (gutter "↪"), neither on a row after a real line break. first/total:
// where this page is in the whole.
function pageRows(screen, labels) {
  const lines = screen.split('\n');
  const c = lines.findIndex((l) => l.startsWith('  count '));
  assert(c >= 0, `no count line:\n${screen}`);
  const out = [];
  let first = 1, total = null;
  for (const l of lines.slice(c + 1)) {
    const m = l.match(/^ +rows (\d+)-(\d+) of (\d+)/);
    if (m) { first = +m[1]; total = +m[3]; break; }
    if (/^  (scroll to the end|o run it|o once)/.test(l)) break;
    const lab = l.slice(2, 12).trimEnd();
    if (l.slice(0, 2) === '  ' && labels.has(lab) && l[12] === ' ') out.push({ label: lab, text: l.slice(13) });
    else if (l.startsWith(' '.repeat(11) + '\u21aa ')) out.push({ cont: true, text: l.slice(13) });
    else if (l.startsWith(' '.repeat(13)) || l === '') {
      // a row after a line break (or an empty one, trimmed by tmux); a
      // wrapped warning line is indented 2, never 13
      if (out.length || l !== '') out.push({ text: l.slice(13) });
    }
  }
  if (total === null) total = out.length;
  return { first, total, rows: out };
}

// the fields again, from the rows: what a person could have read
function assemble(rows) {
  const f = [];
  for (const r of rows) {
    if (r.label) f.push([r.label, r.text]);
    else if (!f.length) throw new Error('a row before any label');
    else f[f.length - 1][1] += (r.cont ? '' : '\n') + r.text;
  }
  return f;
}

// the keys line says the approve keys wait
const armHint = (screen) => /^  scroll to the end to arm approve/m.test(screen);

// tmux trims the ends of rows: spaces are compared as absent
const nospace = (s) => s.replace(/ /g, '');

async function hostileRun(name, req, key, sizes) {
  if (!haveTmux()) return { skip: 'tmux is not installed (make deps)' };
  const p = project(name);
  const id = submit(p.dir, req(p.dir));
  const rd = renderings(p.dir).get(id);
  assert(rd, 'watch --lines gave no rendering');
  for (const t of mustShow[req(p.dir).kind]) {
    assert(rd.fields.some(([, v]) => v.includes(t)), `the rendering lacks ${JSON.stringify(t)}: ${JSON.stringify(rd.fields)}`);
  }
  const labels = new Set(rd.fields.map(([l]) => l));
  const sess = `bpfsbx-e2e-${process.pid}-${name}`;
  const [w0, h0] = sizes[0];
  tmux('new-session', '-d', '-s', sess, '-x', String(w0), '-y', String(h0), `${bpfsbx} watch ${p.dir}`);
  try {
    let s = await screenUntil(sess, (t) => t.includes('1 pending') && t.includes('  count '), 'the request');
    // the warning is on the screen, whole, before anything else of it
    const warnText = s.split('\n').filter((l) => /^  \S/.test(l) && !/^  (count|request|scroll|o )/.test(l))
      .join('');
    assert(rd.warning && nospace(warnText).includes(nospace(rd.warning)), `the warning "${rd.warning}" is not drawn whole:\n${s}`);
    const all = [];
    let total = null, pages = 0;
    for (let si = 0; si < sizes.length; si++) {
      if (si) {
        // SIGWINCH: the rows are wrapped anew; what was read stays read
        tmux('resize-window', '-t', sess, '-x', String(sizes[si][0]), '-y', String(sizes[si][1]));
        all.length = 0;
        await sleep(400);
      }
      for (let guard = 0; guard < 60; guard++) {
        s = tmux('capture-pane', '-p', '-t', sess);
        const pg = pageRows(s, labels);
        total = pg.total;
        pg.rows.forEach((r, k) => { all[pg.first - 1 + k] = r; });
        pages++;
        const seenAll = all.length === total && [...all.keys()].every((k) => all[k]);
        if (seenAll && si === sizes.length - 1) break;
        if (!armHint(s)) break;
        // not every row yet: the approve key must do nothing
        tmux('send-keys', '-t', sess, key);
        s = await screenUntil(sess, (t) => t.includes('Not approved: scroll to the end to arm approve'), `the refusal of ${key}`);
        assert(exists(path.join(pendingDir(p.dir), id + '.json')), `approved by ${key} after ${pages} page(s) of ${w0}x${h0}, before every row was drawn`);
        if (si < sizes.length - 1 && pages >= 2) break;	// resize mid-way
        tmux('send-keys', '-t', sess, 'Space');
        await sleep(250);
      }
    }
    s = tmux('capture-pane', '-p', '-t', sess);
    assert(!armHint(s), `every row was drawn but approve is not armed:\n${s}`);
    if (sizes.length > 1) {
      // armed by what was read at either size; the rows at this size, from
      // the top, for the comparison below (paging back never disarms)
      for (let i = 0; i < 8; i++) tmux('send-keys', '-t', sess, 'b');
      await sleep(400);
      all.length = 0;
      for (let guard = 0; guard < 20; guard++) {
        s = tmux('capture-pane', '-p', '-t', sess);
        const pg = pageRows(s, labels);
        pg.rows.forEach((r, k) => { all[pg.first - 1 + k] = r; });
        if (all.length === pg.total && [...all.keys()].every((k) => all[k])) break;
        tmux('send-keys', '-t', sess, 'Space');
        await sleep(250);
      }
      assert(!armHint(s), `paging back disarmed approve:\n${s}`);
    }
    // every row was on the screen, and together they are the rendering
    assert(all.length === total && [...all.keys()].every((k) => all[k]), `rows missing: ${all.length} of ${total}`);
    const got = assemble(all);
    assert(got.length === rd.fields.length, `fields drawn: ${got.map(([l]) => l)}; rendered: ${rd.fields.map(([l]) => l)}`);
    got.forEach(([l, v], k) => {
      assert(l === rd.fields[k][0], `field ${k}: drawn ${l}, rendered ${rd.fields[k][0]}`);
      assert(nospace(v) === nospace(rd.fields[k][1]), `field ${l} drawn:\n${v}\nrendered:\n${rd.fields[k][1]}`);
    });
    tmux('send-keys', '-t', sess, key);
    for (let i = 0; i < 150 && !exists(path.join(doneDir(p.dir), id + '.json')); i++) await sleep(100);
    const done = readDone(p.dir, id);
    assert(done.decision && done.decision.verdict === 'approve', `not approved: ${JSON.stringify(done.decision)}`);
    return { pages };
  } finally {
    spawnSync('tmux', ['kill-session', '-t', sess]);
  }
}

export const tests = {
  async 'watch: hostile file request at 80x24: approve arms only once every row was drawn, and the rows are the rendering'() {
    return hostileRun('wh-f80', () => hostileFile(), 'o', [[80, 24]]);
  },
  async 'watch: hostile file request at 200x60'() {
    return hostileRun('wh-f200', () => hostileFile(), 's', [[200, 60]]);
  },
  async 'watch: hostile 62-line command at 80x24: paged by the rows drawn, approve arms at the end'() {
    return hostileRun('wh-c80', (d) => hostileCommand(d), 'o', [[80, 24]]);
  },
  async 'watch: hostile 62-line command at 200x60'() {
    return hostileRun('wh-c200', (d) => hostileCommand(d), 'o', [[200, 60]]);
  },
  async 'watch: a resize (SIGWINCH) mid-way re-wraps the rows and still arms only at the end'() {
    return hostileRun('wh-cwinch', (d) => hostileCommand(d), 'o', [[80, 24], [200, 60]]);
  },

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
      s = await screenUntil(sess, (t) => t.includes('scroll to the end to arm approve'), 'the refusal of o');
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

  // "always", widened: r shows the rule below the request, y writes it only
  // once every row of the rule was on the screen, and the rule answers the
  // other waiting request below the same directory (but not the third)
  async 'watch: r shows the widened rule, y writes it only once all of it was read'() {
    if (!haveTmux()) return { skip: 'tmux is not installed (make deps)' };
    const p = project('wrule');
    const pol = path.join(p.dir, '.sandbox', 'policy.yaml');
    fs.writeFileSync(pol, '# the person\'s own words\nversion: 1\nextends: agent-default\nfiles:\n' +
      '  default: {write: ask}\n  rules:\n    - path: ${PROJECT}/out/\n      access: write\n' +
      '      verdict: allow\n      reason: build output\n');
    const home = os.userInfo().homedir;
    const req = (f) => ({ kind: 'file', session: 'wr-1',
      process: { pid: 4242, uid: process.getuid(), comm: 'pnpm', exe: '/usr/bin/node', cmdline: ['pnpm', 'i'], cwd: p.dir },
      object: { path: f, access: 'write' } });
    const a = submit(p.dir, req(`${home}/.local/share/pnpm/store/v3/a`));
    const b = submit(p.dir, req(`${home}/.local/share/pnpm/store/v3/files/b`));
    const c = submit(p.dir, req(`${home}/.local/share/other/c`));
    const sess = `bpfsbx-e2e-${process.pid}-wrule`;
    tmux('new-session', '-d', '-s', sess, '-x', '100', '-y', '30', `${bpfsbx} watch ${p.dir}`);
    try {
      let s = await screenUntil(sess, (t) => t.includes('3 pending'), 'the requests');
      // the two below one tool directory are marked as one rule's
      assert((s.match(/\+1 alike: r/g) || []).length === 2, `alike marks:\n${s}`);
      tmux('send-keys', '-t', sess, 'r');
      s = await screenUntil(sess, (t) => t.includes('The rule for it is below'), 'the proposal');
      // its end is not on a 30-row screen yet: y writes nothing
      tmux('send-keys', '-t', sess, 'y');
      s = await screenUntil(sess, (t) => t.includes('Not written: scroll to the end of the rule'), 'the refusal of y');
      assert(!fs.readFileSync(pol, 'utf8').includes('pnpm'), 'written before the rule was read');
      for (let i = 0; i < 40 && !/y\s+write the rule/.test(s); i++) {
        tmux('send-keys', '-t', sess, 'Space');
        await sleep(250);
        s = tmux('capture-pane', '-p', '-t', sess);
      }
      assert(/y\s+write the rule/.test(s), `never armed:\n${s}`);
      tmux('send-keys', '-t', sess, 'y');
      s = await screenUntil(sess, (t) => t.includes('rule written to'), 'the outcome');
      assert(/approved 2 of the 2/.test(s), `what it answered:\n${s}`);
      const text = fs.readFileSync(pol, 'utf8');
      assert(text.startsWith('# the person\'s own words\n') && text.includes('      reason: build output\n'),
        `the person's text was not kept:\n${text}`);
      assert(/\n    - path: ~\/.local\/share\/pnpm\/\n      access: write\n      verdict: allow\n/.test(text),
        `the rule:\n${text}`);
      assert(/    # rule from request /.test(text), `no note of where it came from:\n${text}`);
      const chk = await run(bpfsbx, ['policy', 'check', pol, '--no-resolve'], { cwd: p.dir });
      assert(chk.code === 0, `policy check: ${chk.out}${chk.err}`);
      for (const id of [a, b]) {
        const d = readDone(p.dir, id).decision;
        assert(d.verdict === 'approve' && d.scope === 'session' && /a rule now in .sandbox\/policy.yaml/.test(d.note),
          `${id}: ${JSON.stringify(d)}`);
      }
      assert(exists(path.join(pendingDir(p.dir), c + '.json')), 'the request the rule does not answer was decided');
    } finally {
      spawnSync('tmux', ['kill-session', '-t', sess]);
    }
  },
};
