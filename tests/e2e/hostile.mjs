// Hostile requests for the two approvers (test-watch.mjs in tmux,
// test-dashboard.mjs in Chromium): both are fed exactly these, and both
// must show them by the one rule of queue/render.c. Each hides something
// a different way: length (a command of 62 lines, a reason of 300
// characters), real line breaks (in a command, a file name, an argument,
// the agent's words), terminal escapes, bidi overrides, zero-width and
// tag characters, look-alike spaces, a run of 400 spaces, and wide
// characters that make a row longer than its count of characters.
import { execFileSync } from 'node:child_process';
import { bpfsbx } from './lib.mjs';

export const SESSION = '20261201T100000Z-a1b2c3';
const ESC = '\x1b', RLO = '\u202e', LRI = '\u2066', ZWSP = '\u200b', BOM = '\ufeff', NBSP = '\u00a0';
const TAGS = '\u{e0049}\u{e0067}\u{e006e}';	// "Ign" in tag characters

export function hostileCommand(cwd) {
  const lines = [`echo ask-me L1 ${ESC}[2J${ESC}]0;title\x07 ${RLO}gnp.exe ${LRI}x zero${ZWSP}width${BOM} tag${TAGS} nb${NBSP}sp\ttab wide 中文字符🙂`];
  for (let i = 2; i < 62; i++) lines.push(`echo L${i} ${'中'.repeat(i % 7)}`);
  lines.push('echo L62-TAIL' + ' '.repeat(400) + '; echo TAIL-AFTER-SPACES');
  return {
    kind: 'command', session: SESSION,
    process: {
      pid: 777, uid: process.getuid(), comm: 'claude', exe: '/usr/bin/node',
      cmdline: ['claude', 'two words', '', 'line\nbreak', "it's", `esc${ESC}[31m`, `${RLO}fdp.sh`], cwd,
    },
    object: { command: lines.join('\n'), cwd },
    rule: { pattern: 'echo *', verdict: 'ask', reason: 'R'.repeat(290) + ' REASON-END', source: 'policy.yaml:31' },
    agent_reason: 'A'.repeat(150) + '\nsecond line of the agent ' + RLO + 'txt.exe AGENT-END',
  };
}

export function hostileFile() {
  const file = `/home/alice/.aws/credentials\n/tmp/innocent-${RLO}fdp.txt${ZWSP}`;
  return {
    kind: 'file', session: SESSION,
    process: { pid: 4242, uid: process.getuid(), comm: 'cat', exe: '/usr/bin/cat', cmdline: ['cat', file, '--', 'a  b'], cwd: '/home/alice/proj' },
    object: { path: file, access: 'read' },
    rule: { id: 12, pattern: '~/.aws/', verdict: 'ask', reason: 'cloud credentials:\na person may allow one ' + 'deploy '.repeat(30) + 'REASON-END', source: 'agent-default.yaml:140' },
    agent_reason: 'I need it ' + '中文'.repeat(40) + ' AGENT-END',
  };
}

// The C rendering of what is pending in DIR, from `bpfsbx watch --lines
// --once` (queue/render.c): id -> {fields, summary, warning, counts}
export function renderings(dir) {
  const out = execFileSync(bpfsbx, ['watch', '--lines', '--once', dir], { input: '' }).toString();
  const m = new Map();
  for (const l of out.split('\n').filter(Boolean)) {
    const j = JSON.parse(l);
    m.set(j.id, j.render);
  }
  return m;
}

// What a rendering must show somewhere, escaped: the test's own list, so
// that a renderer that drops or mangles them fails
export const mustShow = {
  command: ['\\x1b[2J', '\\x1b]0;title\\x07', '\\u202egnp.exe', '\\u2066x', 'zero\\u200bwidth\\ufeff',
    'tag\\U000e0049\\U000e0067\\U000e006e', 'nb\\u00a0sp\\ttab', '中文字符🙂', 'echo L62-TAIL\u2420\u00d7400; echo TAIL-AFTER-SPACES',
    "claude 'two words' '' 'line\u23ce\nbreak' 'it'\\''s' 'esc\\x1b[31m' '\\u202efdp.sh'", 'REASON-END', 'AGENT-END',
    'the agent \\u202etxt.exe'],
  file: ['/home/alice/.aws/credentials\u23ce\n/tmp/innocent-\\u202efdp.txt\\u200b (read)', "'a  b'", 'REASON-END', 'AGENT-END'],
};
