// Helpers for the dashboard's tests: a daemon-less queue fixture written
// through the queue library (build/queue-fixture), `bpfsbx dashboard`
// started on it, raw HTTP (so that Host, Origin and bodies are exactly
// what a test says), and headless Chromium driven by playwright-core.
//
// Used by test-dashboard.mjs on the host and by live-dashboard.mjs in the VM.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { bpfsbx, root, tmpdir, sleep, assert } from './lib.mjs';

export const fixture = process.env.BPFSBX_QUEUE_FIXTURE || path.join(root, 'build', 'queue-fixture');
export const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';

// A project with .sandbox/ and nothing else: the queue is made as the tests go.
export function project(name) {
  const base = tmpdir(name);
  const dir = path.join(base, 'proj');
  fs.mkdirSync(path.join(dir, '.sandbox'), { recursive: true });
  return { base, dir };
}

export function submit(dir, req) {
  assert(fs.existsSync(fixture), `${fixture} is not built (make build/queue-fixture)`);
  return execFileSync(fixture, ['submit', dir], { input: JSON.stringify(req) }).toString().trim();
}

export function audit(dir, session, records) {
  execFileSync(fixture, ['audit', dir, session], { input: records.map((r) => JSON.stringify(r)).join('\n') + '\n' });
}

export function fileRequest(session, file, extra = {}) {
  return {
    kind: 'file', session,
    process: { pid: 4242, uid: process.getuid(), comm: 'cat', exe: '/usr/bin/cat', cmdline: ['cat', file], cwd: '/home/alice/proj' },
    // no dev/ino: a daemon-less fixture has no kernel identity to record, so
    // the approval is not checked against one (queue/resolve.c ident_holds)
    object: { path: file, access: 'read' },
    rule: { id: 12, pattern: '~/.aws/', verdict: 'ask', reason: 'cloud credentials: a person may allow one deploy', source: 'agent-default.yaml:140' },
    ...extra,
  };
}

export function commandRequest(session, command, cwd, extra = {}) {
  return {
    kind: 'command', session,
    process: { pid: 777, uid: process.getuid(), comm: 'claude', exe: '/usr/bin/node', cmdline: ['claude', '--resume'], cwd },
    object: { command, cwd },
    rule: { pattern: 'git push *', verdict: 'ask', reason: 'pushing publishes the work: a person looks first', source: 'policy.yaml:31' },
    agent_reason: 'the user asked me to publish the branch',
    ...extra,
  };
}

export function kernelEvent(session, verdict, operation, object, extra = {}) {
  return {
    event: 'kernel', time: new Date().toISOString(), session, pid: 4242, tid: 4242, uid: process.getuid(),
    comm: 'cat', exe: '/usr/bin/cat', operation, object, verdict, errno: verdict === 'deny' || verdict === 'ask' ? 1 : 0,
    rule: { id: 3, pattern: '~/.ssh/', verdict, reason: `test: ${verdict} ${operation}` }, ...extra,
  };
}

export const pendingDir = (dir) => path.join(dir, '.sandbox', 'escalations', 'pending');
export const doneDir = (dir) => path.join(dir, '.sandbox', 'escalations', 'done');
export const exists = (p) => fs.existsSync(p);
export const readDone = (dir, id) => JSON.parse(fs.readFileSync(path.join(doneDir(dir), id + '.json'), 'utf8'));
export const listIds = (d) => { try { return fs.readdirSync(d).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).sort(); } catch { return []; } };

// bpfsbx dashboard DIR... in the background; resolves when it printed its URL
export async function startDashboard(dirs, { args = [], daemon = false, env = {}, base } = {}) {
  base = base || tmpdir('dash');
  const tokenFile = path.join(base, 'dashboard-token.json');
  const e = { ...process.env, ...env };
  if (!daemon) e.BPFSBX_CONTROL_SOCK = path.join(base, 'no-daemon.sock');
  const child = spawn(bpfsbx, ['dashboard', ...dirs, '--token-file', tokenFile, ...args],
    { env: e, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '', err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const t0 = Date.now();
  while (!/token=[0-9a-f]{64}/.test(out)) {
    if (child.exitCode !== null) throw new Error(`dashboard exited ${child.exitCode}: ${err}`);
    if (Date.now() - t0 > 20000) { child.kill('SIGKILL'); throw new Error(`dashboard did not start: ${out} ${err}`); }
    await sleep(20);
  }
  const token = out.match(/token=([0-9a-f]{64})/)[1];
  const m = out.match(/http:\/\/127\.0\.0\.1:(\d+)\//);
  const port = m ? Number(m[1]) : null;
  const d = {
    child, token, tokenFile, port, base,
    url: port ? `http://127.0.0.1:${port}/?token=${token}` : null,
    origin: port ? `http://127.0.0.1:${port}` : null,
    get stdout() { return out; },
    get stderr() { return err; },
    alive: () => child.exitCode === null && child.signalCode === null,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const done = new Promise((r) => child.once('exit', (code) => r(code)));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 10000);
      const code = await done;
      clearTimeout(t);
      return code;
    },
  };
  return d;
}

// One HTTP request with exactly these headers. {status, headers, body, json}
export function request(d, method, p, { headers = {}, body, socketPath, timeout = 15000 } = {}) {
  return new Promise((resolve, reject) => {
    const opt = { method, path: p, headers: { ...headers }, timeout };
    if (socketPath) opt.socketPath = socketPath;
    else { opt.host = '127.0.0.1'; opt.port = d.port; }
    if (!('Host' in opt.headers) && !('host' in opt.headers)) opt.headers.Host = socketPath ? 'localhost:8080' : `127.0.0.1:${d.port}`;
    if (body !== undefined && !('Content-Length' in opt.headers) && !opt.headers['Transfer-Encoding']) opt.headers['Content-Length'] = Buffer.byteLength(body);
    const req = http.request(opt, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let json = null;
        try { json = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode, headers: res.headers, body: text, json });
        if (!req.writableEnded) req.destroy();	// answered before the body was asked for
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${p}: no answer in ${timeout} ms`)));
    req.on('error', reject);
    // Expect: 100-continue sends the body only once the server asks for
    // it: a server that refuses on the headers (413) answers before any
    // of the body is written, so the client never races the server's close
    if (body !== undefined && opt.headers.Expect === '100-continue') {
      req.on('continue', () => { req.write(body); req.end(); });
      req.flushHeaders();
      return;
    }
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export const auth = (d) => ({ Authorization: `Bearer ${d.token}` });

export async function csrf(d, opts = {}) {
  const r = await request(d, 'GET', '/api/info', { headers: auth(d), ...opts });
  assert(r.status === 200 && r.json && r.json.csrf, `GET /api/info: ${r.status} ${r.body}`);
  return r.json.csrf;
}

// POST a decision the way the page does (token, CSRF, JSON)
export async function post(d, p, obj, { token, headers = {}, raw } = {}) {
  const h = { ...auth(d), 'Content-Type': 'application/json', 'X-CSRF-Token': token || await csrf(d), ...headers };
  return request(d, 'POST', p, { headers: h, body: raw !== undefined ? raw : JSON.stringify(obj) });
}

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

// headless Chromium with a fresh profile (its --user-data-dir)
export async function browser({ bypassCSP = false, viewport = { width: 1280, height: 900 }, timeout = 60000 } = {}) {
  assert(fs.existsSync(chromiumPath), `${chromiumPath} is not installed (make deps installs chromium)`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bpfsbx-chromium-'));
  const ctx = await chromium.launchPersistentContext(dir, {
    executablePath: chromiumPath, headless: true, args: CHROMIUM_ARGS, viewport, bypassCSP, timeout,
  });
  const page = ctx.pages()[0] || await ctx.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push('pageerror: ' + e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
  page.on('dialog', (dlg) => { errors.push('dialog: ' + dlg.message()); dlg.dismiss(); });
  return {
    ctx, page, errors,
    async close() { await ctx.close(); fs.rmSync(dir, { recursive: true, force: true }); },
  };
}

// open the page with the URL the dashboard printed; wait for the live feed
export async function openPage(b, d) {
  await b.page.goto(d.url);
  await b.page.waitForFunction(() => document.getElementById('live').textContent.includes('connected'), null, { timeout: 30000 });
}

export async function until(what, fn, ms = 5000, step = 25) {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - t0 > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(step);
  }
}

// ms since a request id's own timestamp (YYYYMMDDTHHMMSS.uuuuuuZ-...)
export function sinceId(id) {
  const m = id.match(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})\.(\d{6})Z/);
  const t = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6], Math.floor(+m[7] / 1000));
  return Date.now() - t;
}
