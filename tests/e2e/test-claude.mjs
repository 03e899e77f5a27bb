// The real Claude Code CLI (the native binary from npm) against a local
// mock of the Messages API that scripts its tool calls, in a project set up
// by `bpfsbx init`. What is asserted is what the model received: the
// tool_result in the request that follows each scripted tool_use.
import fs from 'node:fs';
import path from 'node:path';
import { here, initProject, approver, run, assert, sudoApprover, chownTree } from './lib.mjs';
import { startMock, resultText } from './mock-api.mjs';

// The native executable: the wrapper package's postinstall copies it over
// bin/claude.exe; without install scripts it stays in the platform package.
export function claudeBinary() {
  const nm = path.join(here, 'node_modules', '@anthropic-ai');
  const wrapper = path.join(nm, 'claude-code', 'bin', 'claude.exe');
  try {
    if (fs.statSync(wrapper).size > 1 << 20) return wrapper;
  } catch { /* not installed */ }
  const plat = `${process.platform}-${process.arch === 'x64' ? 'x64' : process.arch}`;
  for (const p of [`claude-code-${plat}`, `claude-code-${plat}-musl`]) {
    const b = path.join(nm, p, 'claude');
    if (fs.existsSync(b)) return b;
  }
  return null;
}

// One Claude Code run on a scripted conversation; returns the mock.
async function claude(p, script, extraEnv = {}, as = {}) {
  const bin = claudeBinary();
  assert(bin, 'the Claude Code native binary is not in node_modules (npm ci)');
  const mock = await startMock(script);
  const env = {
    PATH: process.env.PATH,
    HOME: p.home,
    LANG: 'C.UTF-8',
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${mock.port}`,
    ANTHROPIC_API_KEY: 'dummy-e2e-key',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    BPFSBX_HOOK_WAIT_MS: '30000',
    ...extraEnv,
  };
  const r = await run(bin, ['-p', 'Do the scripted e2e task.', '--output-format', 'json',
    '--permission-mode', 'default', '--allowedTools', 'Bash', 'Write', 'Read', 'mcp__bpfsbx'],
  { env, cwd: p.project, ms: 150000, uid: as.uid, gid: as.gid });
  await mock.close();
  mock.run = r;
  if (r.code !== 0 || r.timedOut)
    throw new Error(`claude exited ${r.code}${r.timedOut ? ' (timeout)' : ''}: ${r.err.slice(0, 500)} ${r.out.slice(0, 500)}`);
  return mock;
}

function expectResult(mock, id, mustContain, what) {
  const tr = mock.toolResult(id);
  assert(tr, `${what}: no tool_result for ${id} reached the model (${mock.requests.length} requests)`);
  const t = resultText(tr);
  for (const s of mustContain)
    assert(t.includes(s), `${what}: the model got ${JSON.stringify(t.slice(0, 600))}, without ${JSON.stringify(s)}`);
  return tr;
}

export const tests = {
  async 'claude: a safe Bash command runs normally'() {
    const p = initProject('cc-safe');
    const mock = await claude(p, [
      { tool: 'Bash', input: { command: 'echo safe-$((40+2)) && pwd', description: 'echo' } },
      { text: 'done' },
    ]);
    const tr = expectResult(mock, 'toolu_e2e_0', ['safe-42', p.project], 'safe command');
    assert(!tr.is_error, `safe command: is_error ${JSON.stringify(tr)}`);
    // the SessionStart hook told the model what is confined
    const all = JSON.stringify(mock.requests.map((r) => r.body));
    assert(all.includes('bpfsbx sandbox, project') && all.includes('Mode: '), 'SessionStart context (with the mode in force) did not reach the model');
    // and PostToolUse wrote an audit record
    const audit = fs.readdirSync(path.join(p.project, '.sandbox', 'audit')).filter((f) => f.endsWith('.jsonl'));
    assert(audit.length === 1, `audit logs: ${audit}`);
    const log = fs.readFileSync(path.join(p.project, '.sandbox', 'audit', audit[0]), 'utf8');
    assert(log.includes('safe-$((40+2))'), `audit: ${log.slice(0, 300)}`);
  },

  async 'claude: an escalated command is approved and its output reaches the model'() {
    const p = initProject('cc-ask');
    fs.writeFileSync(path.join(p.project, '.env'), 'E2E_TOKEN=e2e-secret-1234\n');
    const ap = approver(p.project, (req) => (req.kind === 'command' ? { verdict: 'approve' } : null),
      { HOME: p.home });
    let mock;
    try {
      mock = await claude(p, [
        { tool: 'Bash', input: { command: 'cat .env', description: 'read env' } },
        { text: 'done' },
      ]);
    } finally {
      await ap.stop();
    }
    expectResult(mock, 'toolu_e2e_0',
      ['e2e-secret-1234', 'run for you outside the sandbox', 'do not run it again', 'exit code: 0'],
      'approved command');
    assert(ap.log.length === 1 && ap.log[0].verdict === 'approve', `approver: ${JSON.stringify(ap.log)}`);
  },

  async 'claude: a command the policy denies is refused with the reason'() {
    const p = initProject('cc-deny');
    const mock = await claude(p, [
      { tool: 'Bash', input: { command: 'su -c id', description: 'whoami as root' } },
      { text: 'done' },
    ]);
    expectResult(mock, 'toolu_e2e_0', ['denied by the sandbox policy', 'su opens a shell'], 'su');
  },

  // The main loop: the agent asks for sudo, a person approves, it runs
  // outside the agent as the approver (whose sudoers entry allows it),
  // and the model gets the output; the audit chain has every step.
  async 'claude: sudo is escalated, approved, run as the approver and its output reaches the model'() {
    const u = sudoApprover();
    if (u.skip) return u;
    const p = initProject('cc-sudo');
    chownTree(p.base, u.uid, u.gid);
    const ap = approver(p.project, (req) => (req.kind === 'command' ? { verdict: 'approve' } : null),
      { HOME: p.home });
    let mock;
    try {
      mock = await claude(p, [
        { tool: 'Bash', input: { command: 'sudo -n true && echo sudo-ok-$((6*7)) && id -un', description: 'check sudo' } },
        { text: 'done' },
      ], {}, u);
    } finally {
      await ap.stop();
      u.cleanup();
    }
    expectResult(mock, 'toolu_e2e_0', ['sudo-ok-42', u.user, 'exit code: 0'], 'approved sudo');
    assert(ap.log.length === 1 && ap.log[0].verdict === 'approve', `approver: ${JSON.stringify(ap.log)}`);
    const done = JSON.parse(fs.readFileSync(path.join(p.project, '.sandbox', 'escalations', 'done', ap.log[0].id + '.json'), 'utf8'));
    assert(done.result.user === u.user && done.result.uid === u.uid, `ran as ${done.result.user}`);
    const audit = fs.readdirSync(path.join(p.project, '.sandbox', 'audit')).filter((f) => f.endsWith('.jsonl'))
      .map((f) => fs.readFileSync(path.join(p.project, '.sandbox', 'audit', f), 'utf8')).join('');
    for (const d of ['"decision":"ask"', '"decision":"approved"', '"output_sha256"', `"user":"${u.user}"`])
      assert(audit.includes(d), `audit log lacks ${d}: ${audit.slice(0, 800)}`);
  },

  async 'claude: a command a person denies is refused with the note'() {
    const p = initProject('cc-pdeny');
    const ap = approver(p.project, () => ({ verdict: 'deny', note: 'e2e: use the staging key' }), { HOME: p.home });
    let mock;
    try {
      mock = await claude(p, [
        { tool: 'Bash', input: { command: 'cat ~/.aws/credentials', description: 'creds' } },
        { text: 'done' },
      ]);
    } finally {
      await ap.stop();
    }
    expectResult(mock, 'toolu_e2e_0', ['e2e: use the staging key', 'denied'], 'person denial');
  },

  async 'claude: a Write to CLAUDE.md is refused'() {
    const p = initProject('cc-write');
    const ap = approver(p.project, () => ({ verdict: 'deny', note: 'e2e: instructions are mine' }), { HOME: p.home });
    let mock;
    try {
      mock = await claude(p, [
        { tool: 'Write', input: { file_path: path.join(p.project, 'CLAUDE.md'), content: 'Always push --force.\n' } },
        { text: 'done' },
      ]);
    } finally {
      await ap.stop();
    }
    expectResult(mock, 'toolu_e2e_0', ['instruction files', 'e2e: instructions are mine'], 'Write CLAUDE.md');
    assert(!fs.existsSync(path.join(p.project, 'CLAUDE.md')), 'CLAUDE.md was written');
  },

  async 'claude: the MCP tool run_privileged works from Claude Code'() {
    const p = initProject('cc-mcp');
    const ap = approver(p.project, () => ({ verdict: 'approve' }), { HOME: p.home });
    let mock;
    try {
      mock = await claude(p, [
        { tool: 'mcp__bpfsbx__run_privileged', input: { command: 'echo via-mcp-$((7*11))', reason: 'e2e' } },
        { text: 'done' },
      ]);
    } finally {
      await ap.stop();
    }
    // Claude Code hands the model the structuredContent (as JSON text)
    const tr = expectResult(mock, 'toolu_e2e_0', ['via-mcp-77', 'do not run it again'], 'MCP run_privileged');
    assert(!tr.is_error, `MCP run_privileged: is_error ${JSON.stringify(tr).slice(0, 300)}`);
  },
};
