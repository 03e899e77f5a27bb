// Helpers for the end-to-end tests: scratch folders, the bpfsbx binary,
// a scripted approver that answers the folder queue with `bpfsbx approve`
// and `bpfsbx deny`, and child processes with time limits.
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '..', '..');
export const bpfsbx = process.env.BPFSBX_BIN || path.join(root, 'build', 'bpfsbx');

export function tmpdir(name) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `bpfsbx-e2e-${name}-`));
}

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

// A project with .sandbox/ from `bpfsbx init` (the real registration).
export function initProject(name, args = ['--claude', '--mcp']) {
  const base = tmpdir(name);
  const home = path.join(base, 'home');
  const project = path.join(home, 'proj');
  fs.mkdirSync(project, { recursive: true });
  execFileSync(bpfsbx, ['init', project, ...args], { stdio: 'pipe', env: { ...process.env, HOME: home } });
  return { base, home, project };
}

export function pendingIds(project) {
  const dir = path.join(project, '.sandbox', 'escalations', 'pending');
  try {
    return fs.readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).sort();
  } catch {
    return [];
  }
}

export function readPending(project, id) {
  return JSON.parse(fs.readFileSync(path.join(project, '.sandbox', 'escalations', 'pending', id + '.json'), 'utf8'));
}

// bpfsbx approve/deny ID: what a person does from a terminal.
export function decide(project, id, verdict, note, env = {}) {
  const args = [verdict, id, '--dir', project];
  if (note) args.push('--note', note);
  return execFileSync(bpfsbx, args, { stdio: 'pipe', env: { ...process.env, ...env } }).toString();
}

// Background approver: polls pending/ and answers each new request with
// answer(request) -> {verdict:'approve'|'deny', note} or null (leave it).
export function approver(project, answer, env = {}) {
  const seen = new Set();
  const log = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      for (const id of pendingIds(project)) {
        if (seen.has(id)) continue;
        seen.add(id);
        let req;
        try { req = readPending(project, id); } catch { continue; }
        const a = answer(req);
        if (!a) continue;
        try {
          decide(project, id, a.verdict, a.note, env);
          log.push({ id, verdict: a.verdict, kind: req.kind });
        } catch (e) {
          log.push({ id, error: String(e.stderr || e) });
        }
      }
      await sleep(100);
    }
  })();
  return { log, stop: async () => { stopped = true; await loop; } };
}

// Run a program, collect output, kill it after ms.
export function run(cmd, args, { env = process.env, cwd, input, ms = 120000, uid, gid } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { env, cwd, uid, gid, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '', err = '', timedOut = false;
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const t = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, ms);
    child.on('close', (code, signal) => {
      clearTimeout(t);
      resolve({ code, signal, out, err, timedOut });
    });
    if (input !== undefined) child.stdin.end(input);
    else child.stdin.end();
  });
}

export function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

// Every regular file under dir: relative path -> {mode, bytes (base64)}.
export function snapshot(dir) {
  const out = {};
  const walk = (rel) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      const st = fs.lstatSync(path.join(dir, r));
      if (e.isDirectory()) {
        out[r + '/'] = { mode: st.mode };
        walk(r);
      } else {
        out[r] = { mode: st.mode, bytes: fs.readFileSync(path.join(dir, r)).toString('base64') };
      }
    }
  };
  walk('');
  return out;
}

export function diffSnapshots(a, b) {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  const diffs = [];
  for (const k of keys) {
    if (JSON.stringify(a[k]) !== JSON.stringify(b[k])) diffs.push(k);
  }
  return diffs;
}

// The approver of the privileged-command tests: a user who may run exactly
// `sudo -n true` (a NOPASSWD sudoers entry for /usr/bin/true), the owner of
// the project. Needs root and sudo; returns {skip} otherwise. cleanup()
// removes the sudoers entry again (the user stays, unprivileged).
export const E2E_USER = 'bpfsbx-e2e';
export function sudoApprover() {
  if (process.getuid() !== 0) return { skip: 'needs root to create the approver and its sudoers entry' };
  if (spawnSync('sh', ['-c', 'command -v sudo && command -v visudo']).status !== 0)
    return { skip: 'sudo is not installed (make deps installs it)' };
  if (spawnSync('id', ['-u', E2E_USER]).status !== 0)
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/bin/sh', E2E_USER]);
  const uid = Number(execFileSync('id', ['-u', E2E_USER]).toString());
  const gid = Number(execFileSync('id', ['-g', E2E_USER]).toString());
  const f = '/etc/sudoers.d/bpfsbx-e2e';
  fs.writeFileSync(f, `${E2E_USER} ALL=(root) NOPASSWD: /usr/bin/true\n`, { mode: 0o440 });
  if (spawnSync('visudo', ['-cf', f]).status !== 0) {
    fs.rmSync(f, { force: true });
    throw new Error('the sudoers entry does not validate');
  }
  return { uid, gid, user: E2E_USER, cleanup: () => fs.rmSync(f, { force: true }) };
}

// chown -R (the project tree becomes the approver's)
export function chownTree(dir, uid, gid) {
  execFileSync('chown', ['-R', `${uid}:${gid}`, dir]);
}
