// Events where a fleet already looks (issue 33, part 2): kernel events go
// through the daemon's own event path (build/event-fixture calls the ring
// buffer's callback, sbx_events_handle) into its sinks, and real receivers
// take them: rsyslog, an OTLP/HTTP endpoint that decodes with the
// OpenTelemetry project's own protobuf definitions, systemd-journal-remote
// fed by systemd-journal-upload, and promtool for the metrics and the
// shipped alert rules.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { root, here, tmpdir, sleep, assert, run } from './lib.mjs';
import { otlpReceiver } from './otlp.mjs';

const fixture = process.env.SBX_EVENT_FIXTURE || path.join(root, 'build', 'event-fixture');
const SESSION = 'fleet-test';
const PROJECT = '/srv/fleet-project';
const REASON = 'SSH keys stay with the person';
const objectOf = (i) => `/home/u/.ssh/"id]\\N-${i}`;

function need(cmd, pkg) {
  const found = [process.env.PATH, '/usr/sbin:/sbin:/lib/systemd:/usr/lib/systemd'].join(':').split(':')
    .map((d) => path.join(d, cmd)).find((p) => fs.existsSync(p));
  assert(found, `${cmd} is not installed (Debian package ${pkg}; make deps installs it)`);
  return found;
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function events(args, ms = 30000) {
  assert(fs.existsSync(fixture), `${fixture} is not built (make build/event-fixture)`);
  const r = await run(fixture, args, { ms });
  assert(r.code === 0, `event-fixture ${args.join(' ')}: exit ${r.code} ${r.signal || ''}: ${r.err}`);
  return JSON.parse(r.out);
}

// ---- OTLP -----------------------------------------------------------------

const attrs = (list) => Object.fromEntries((list || []).map((a) => [a.key, a.value.stringValue ?? a.value.intValue]));

// one decoded request: its one record, with resource and attributes flattened
function record(req) {
  assert(req.resourceLogs.length === 1, 'one resource per request');
  const rl = req.resourceLogs[0];
  const lr = rl.scopeLogs[0].logRecords;
  assert(lr.length === 1, 'one record per request');
  return { resource: attrs(rl.resource.attributes), scope: rl.scopeLogs[0].scope, ...lr[0], attributes: attrs(lr[0].attributes) };
}

function checkRecord(r, i) {
  const res = { 'service.name': 'bpfsbx', 'host.name': os.hostname(), 'user.name': os.userInfo().username,
    'bpfsbx.project': PROJECT, 'bpfsbx.session': SESSION };
  assert(isDeepStrictEqual(r.resource, res), `resource ${JSON.stringify(r.resource)}`);
  assert(r.severityNumber === 13 && r.severityText === 'WARN', `severity ${r.severityNumber} ${r.severityText}`);
  assert(r.body.stringValue === `deny open_read ${objectOf(i)} (session ${SESSION}): ${REASON}`, `body ${JSON.stringify(r.body)}`);
  const a = r.attributes;
  for (const [k, v] of Object.entries({ 'bpfsbx.verdict': 'deny', 'bpfsbx.tier': 'bpf-lsm', 'bpfsbx.operation': 'open_read', 'bpfsbx.access': 'read',
    'bpfsbx.object': objectOf(i), 'bpfsbx.rule.id': '1', 'bpfsbx.rule.pattern': '~/.ssh/**', 'bpfsbx.rule.reason': REASON,
    'bpfsbx.errno': '1', 'process.command': 'cat', 'bpfsbx.event': 'kernel' }))
    assert(a[k] === v, `attribute ${k}: ${JSON.stringify(a[k])}, not ${JSON.stringify(v)}`);
  assert(/^\d{19}$/.test(r.timeUnixNano), `timeUnixNano ${r.timeUnixNano}`);
}

async function otlpArgs(name, port, extra = []) {
  const dir = tmpdir(name);
  return { dir, args: ['--otlp', `http://127.0.0.1:${port}/v1/logs`, '--otlp-queue', path.join(dir, 'queue'), ...extra] };
}

// ---- rsyslog ----------------------------------------------------------------

// rsyslog parses RFC 5424 itself (pmrfc5424) and its structured data with
// mmpstrucdata; the file holds what it understood, one field per column.
async function rsyslog() {
  const rsyslogd = need('rsyslogd', 'rsyslog');
  const dir = tmpdir('rsyslog');
  const udp = await freePort(), tcp = await freePort();
  const conf = `global(workDirectory="${dir}")
module(load="imudp")
module(load="imtcp")
module(load="imuxsock" SysSock.Use="off")
module(load="mmpstrucdata")
input(type="imudp" address="127.0.0.1" port="${udp}")
input(type="imtcp" address="127.0.0.1" port="${tcp}")
input(type="imuxsock" Socket="${dir}/log.sock" UseSpecialParser="off" ParseHostname="on")
template(name="fields" type="list") {
  property(name="pri") constant(value="\\t")
  property(name="hostname") constant(value="\\t")
  property(name="app-name") constant(value="\\t")
  property(name="procid") constant(value="\\t")
  property(name="msgid") constant(value="\\t")
  property(name="$!rfc5424-sd") constant(value="\\t")
  property(name="msg") constant(value="\\n")
}
action(type="mmpstrucdata")
action(type="omfile" file="${dir}/out.tsv" template="fields")
`;
  fs.writeFileSync(path.join(dir, 'rsyslog.conf'), conf);
  const child = spawn(rsyslogd, ['-n', '-f', path.join(dir, 'rsyslog.conf'), '-i', path.join(dir, 'pid')], { stdio: 'ignore' });
  const exited = new Promise((r) => child.on('exit', r));
  // listening once the TCP port takes a connection (the inputs start together)
  for (let t = 0; ; t++) {
    const ok = await new Promise((r) => {
      const s = net.connect(tcp, '127.0.0.1', () => { s.destroy(); r(true); });
      s.on('error', () => r(false));
    });
    if (ok && fs.existsSync(path.join(dir, 'log.sock'))) break;
    assert(t < 100, 'rsyslogd did not start listening in 10 s');
    await sleep(100);
  }
  return {
    dir, udp, tcp, sock: path.join(dir, 'log.sock'),
    lines: () => (fs.existsSync(path.join(dir, 'out.tsv')) ? fs.readFileSync(path.join(dir, 'out.tsv'), 'utf8').split('\n').filter(Boolean) : []),
    stop: async () => { child.kill('SIGTERM'); await exited; },
  };
}

export const tests = {
  'fleet.syslog: RFC 5424 structured data over udp, tcp and a unix socket, as a real rsyslog parses it': async () => {
    const rs = await rsyslog();
    try {
      const log = path.join(rs.dir, 'events.jsonl');
      const targets = [`udp:127.0.0.1:${rs.udp}`, `tcp:127.0.0.1:${rs.tcp}`, `unix:${rs.sock}`];
      for (const t of targets) {
        const st = await events(['--syslog', t, '--log', log, '--emit', '1']);
        assert(st.syslog.sent === 1 && st.syslog.failures === 0, `${t}: ${JSON.stringify(st.syslog)}`);
      }
      let lines = [];
      for (let t = 0; t < 50 && lines.length < targets.length; t++) {
        await sleep(100);
        lines = rs.lines();
      }
      assert(lines.length === targets.length, `rsyslog wrote ${lines.length} lines, not ${targets.length}:\n${lines.join('\n')}`);
      const logged = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
      lines.forEach((line, n) => {
        const [pri, host, app, procid, msgid, sd, ...msg] = line.split('\t');
        const ev = logged[n];
        assert(pri === '36', `${targets[n]}: PRI ${pri} (auth.warning is 36)`);
        assert(host === os.hostname() && app === 'bpfsbx' && msgid === 'kernel', `${targets[n]}: header ${host} ${app} ${msgid}`);
        assert(procid === String(ev.pid), `${targets[n]}: PROCID ${procid}, the fixture was ${ev.pid}`);
        const fields = JSON.parse(sd)['bpfsbx@32473'];
        assert(fields, `${targets[n]}: no bpfsbx@32473 element in ${sd}`);
        // field by field, against the event log line of the same record
        const want = { session: SESSION, project: PROJECT, user: os.userInfo().username, uid: String(ev.uid),
          pid: String(ev.pid), comm: 'cat', exe: ev.exe, operation: 'open_read', access: 'read', object: objectOf(0),
          verdict: 'deny', tier: 'bpf-lsm', rule_id: '1', rule: '~/.ssh/**', reason: REASON, source: '.sandbox/policy.yaml:4:7', errno: '1' };
        assert(ev.object === want.object, `event log object ${ev.object}`);
        assert(isDeepStrictEqual(fields, want), `${targets[n]}: rsyslog read\n ${JSON.stringify(fields)}\n not\n ${JSON.stringify(want)}`);
        assert(msg.join('\t') === `deny open_read ${objectOf(0)} (session ${SESSION}): ${REASON}`, `${targets[n]}: MSG ${msg}`);
      });
    } finally {
      await rs.stop();
    }
  },

  'fleet.syslog: a target that is down loses the message, counted, and the event log keeps it': async () => {
    const dir = tmpdir('syslog-down');
    const port = await freePort();
    const st = await events(['--syslog', `tcp:127.0.0.1:${port}`, '--log', path.join(dir, 'ev.jsonl'), '--emit', '2']);
    assert(st.syslog.sent === 0 && st.syslog.failures === 2, JSON.stringify(st.syslog));
    assert(fs.readFileSync(path.join(dir, 'ev.jsonl'), 'utf8').trim().split('\n').length === 2, 'the event log lost a line');
  },

  'fleet.otlp: records arrive decoded by opentelemetry-proto, with host, user, project and session': async () => {
    const port = await freePort();
    const rx = await otlpReceiver(port);
    try {
      const { args } = await otlpArgs('otlp', port);
      const st = await events([...args, '--emit', '3', '--wait-ms', '10000']);
      assert(rx.errors.length === 0, rx.errors.join('; '));
      assert(rx.got.length === 3, `${rx.got.length} requests arrived, not 3`);
      rx.got.map(record).forEach(checkRecord);
      assert(st.otlp.sent === 3 && st.otlp.queued === 0 && st.otlp.lost === 0, JSON.stringify(st.otlp));
    } finally {
      await rx.close();
    }
  },

  'fleet.otlp: endpoint down, then up: every record arrives, in order': async () => {
    const port = await freePort();
    const { args } = await otlpArgs('otlp-down', port);
    const running = events([...args, '--emit', '3', '--wait-ms', '20000']);
    await sleep(1200);
    const rx = await otlpReceiver(port);
    try {
      const st = await running;
      assert(rx.errors.length === 0, rx.errors.join('; '));
      assert(st.otlp.failures >= 1, `no failed attempt while the endpoint was down: ${JSON.stringify(st.otlp)}`);
      assert(rx.got.length === 3 && st.otlp.sent === 3, `${rx.got.length} arrived: ${JSON.stringify(st.otlp)}`);
      rx.got.map(record).forEach(checkRecord);
    } finally {
      await rx.close();
    }
  },

  'fleet.otlp: what waits on disk is sent by the next start, first and in order': async () => {
    const port = await freePort();
    const { args } = await otlpArgs('otlp-restart', port);
    const first = await events([...args, '--emit', '2']);
    assert(first.otlp.queued === 2 && first.otlp.sent === 0, `before: ${JSON.stringify(first.otlp)}`);
    const rx = await otlpReceiver(port);
    try {
      const second = await events([...args, '--emit', '1', '--wait-ms', '10000']);
      assert(rx.errors.length === 0, rx.errors.join('; '));
      const recs = rx.got.map(record);
      assert(recs.length === 3 && second.otlp.queued === 0, `${recs.length} arrived: ${JSON.stringify(second.otlp)}`);
      // the first run's two (objects 0, 1), then the second's (object 0)
      const seen = recs.map((r) => `${r.attributes['process.pid']}:${r.attributes['bpfsbx.object'].slice(-1)}`);
      const pids = [...new Set(recs.map((r) => r.attributes['process.pid']))];
      assert(pids.length === 2 && isDeepStrictEqual(seen, [`${pids[0]}:0`, `${pids[0]}:1`, `${pids[1]}:0`]),
        `order ${seen.join(', ')}`);
    } finally {
      await rx.close();
    }
  },

  'fleet.otlp: at the queue bound the loss is counted, kept across restarts and in the metrics': async () => {
    const port = await freePort();
    const { dir, args } = await otlpArgs('otlp-bound', port, ['--otlp-queue-max', '2']);
    const prom = path.join(dir, 'bpfsbx.prom');
    const st = await events([...args, '--emit', '5', '--metrics', prom]);
    assert(st.otlp.queued === 2 && st.otlp.lost === 3, JSON.stringify(st.otlp));
    const text = fs.readFileSync(prom, 'utf8');
    assert(/^bpfsbx_otlp_lost_total 3$/m.test(text) && /^bpfsbx_otlp_queued 2$/m.test(text), text);
    const again = await events([...args, '--emit', '0']);
    assert(again.otlp.lost === 3 && again.otlp.queued === 2, `after a restart: ${JSON.stringify(again.otlp)}`);
    // what was kept is the oldest two: they arrive once the endpoint is up
    const rx = await otlpReceiver(port);
    try {
      const last = await events([...args, '--emit', '0', '--wait-ms', '10000']);
      const objs = rx.got.map(record).map((r) => r.attributes['bpfsbx.object']);
      assert(isDeepStrictEqual(objs, [objectOf(0), objectOf(1)]) && last.otlp.queued === 0, `arrived ${objs}`);
    } finally {
      await rx.close();
    }
  },

  'fleet.prometheus: per-session gauges and rule counters pass promtool; the shipped alert rules pass check rules': async () => {
    const promtool = need('promtool', 'prometheus');
    const dir = tmpdir('prom');
    const prom = path.join(dir, 'bpfsbx.prom');
    await events(['--emit', '3', '--metrics', prom]);
    const text = fs.readFileSync(prom, 'utf8');
    assert(text.includes('bpfsbx_rule_hits_total{rule="~/.ssh/**",verdict="deny"} 3\n'), text);
    assert(text.includes(`bpfsbx_session_info{session="${SESSION}",project="${PROJECT}",uid="${process.getuid()}"} 1\n`), text);
    let r = await run('sh', ['-c', `"${promtool}" check metrics <"${prom}"`]);
    assert(r.code === 0, `promtool check metrics: ${r.out}${r.err}`);
    r = await run(promtool, ['check', 'rules', path.join(root, 'contrib', 'prometheus', 'bpfsbx-alerts.yml')]);
    assert(r.code === 0, `promtool check rules: ${r.out}${r.err}`);
  },
};

tests['fleet.journal: a denial goes by systemd-journal-upload into systemd-journal-remote; journalctl -D finds it by SBX_VERDICT=deny'] = async () => {
  if (process.getuid() !== 0) return { skip: 'needs root (a private mount namespace for a journald of its own)' };
  need('systemd-journal-remote', 'systemd-journal-remote');
  need('systemd-journal-upload', 'systemd-journal-remote');
  need('systemd-journald', 'systemd');
  const out = tmpdir('journal-remote');
  const port = await freePort();
  const r = await run('unshare', ['-m', '--propagation', 'private', path.join(here, 'journal-remote.sh'), fixture, out, String(port)], { ms: 60000 });
  const logs = ['journald', 'remote', 'upload'].map((n) => { try { return `${n}: ${fs.readFileSync(path.join(out, n + '.log'), 'utf8')}`; } catch { return ''; } }).join('\n');
  assert(r.code === 0, `journal-remote.sh: exit ${r.code}: ${r.err}\n${logs}`);
  const q = await run('journalctl', ['-D', out, 'SBX_VERDICT=deny', '-o', 'json']);
  assert(q.code === 0, `journalctl -D: ${q.err}`);
  const ours = q.out.split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.SBX_SESSION === SESSION);
  assert(ours.length === 1, `${ours.length} entries of the session in the remote journal:\n${q.out.slice(0, 2000)}\n${logs}`);
  const e = ours[0];
  const want = { SBX_VERDICT: 'deny', SBX_OPERATION: 'open_read', SBX_ACCESS: 'read', SBX_OBJECT: objectOf(0),
    SBX_RULE: '~/.ssh/**', SBX_RULE_ID: '1', SBX_RULE_REASON: REASON, SBX_RULE_SOURCE: '.sandbox/policy.yaml:4:7',
    SBX_ERRNO: '1', SBX_COMM: 'cat', PRIORITY: '4', SYSLOG_IDENTIFIER: 'bpfsbx',
    MESSAGE: `deny open_read ${objectOf(0)} (session ${SESSION}): ${REASON}` };
  for (const [k, v] of Object.entries(want)) assert(e[k] === v, `${k}: ${JSON.stringify(e[k])}, not ${JSON.stringify(v)}`);
  // the match is a match: no audit entry of the session is there
  const none = await run('journalctl', ['-D', out, 'SBX_VERDICT=audit', `SBX_SESSION=${SESSION}`, '-o', 'json', '-q']);
  assert(none.out.trim() === '', `SBX_VERDICT=audit matched: ${none.out}`);
};
