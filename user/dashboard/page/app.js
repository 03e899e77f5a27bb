// bpfsbx dashboard: the page's script. No framework and no build step.
//
// Everything a request or an event says was written, in the end, by the
// agent that is being confined: paths, commands, process names, reasons.
// It is only ever put into the page as text (textContent, text nodes);
// this file builds no HTML from strings. Control characters and
// bidirectional overrides are shown as escapes, as `bpfsbx watch` does,
// so that nothing can hide what is really asked.
'use strict';

(() => {
  const MAX_EVENTS = 1000;          // rows kept in the event list
  const state = {
    csrf: null,
    requests: new Map(),            // id -> {project, state, request, what}
    order: [],                      // pending ids, oldest first
    sel: 0,
    deciding: new Set(),
    outputs: new Map(),             // id -> output text a person opened in the recent decisions
    loads: {},                      // list name -> number of its newest load
    sessions: [],
    chains: new Map(),              // project + '\n' + session -> audit verify entry
    checked: new Set(),             // sessions whose chains were verified once
    seenEvent: new Set(),           // cursors shown
    options: { session: new Set(), verdict: new Set(), operation: new Set() },
    timers: {},
  };

  const $ = (id) => document.getElementById(id);

  // ---- text, never HTML --------------------------------------------------

  // The table of queue/render.c (docs/QUEUE.md "What a person sees"): a
  // request's own fields come rendered by it through the API; this is for
  // the rest (events, sessions, decisions), so that they read the same.
  const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00a0\u00ad\u034f\u061c\u115f\u1160\u1680\u17b4\u17b5\u180b-\u180f\u2000-\u200f\u2028-\u202f\u205f-\u2069\u3000\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb]|[\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0000}-\u{e0fff}]/gu;

  function visible(s, multiline) {
    let t = String(s ?? '');
    t = t.replace(HIDDEN, (c) => {
      const n = c.codePointAt(0);
      return n < 0x100 ? '\\x' + n.toString(16).padStart(2, '0')
        : n > 0xffff ? '\\U' + n.toString(16).padStart(8, '0')
          : '\\u' + n.toString(16).padStart(4, '0');
    });
    if (multiline) return t.replace(/\n/g, '\u23ce\n');
    return t.replace(/\n/g, '\u23ce').replace(/\t/g, '\\t');
  }

  // el('td', {class: 'x'}, 'text', child...): strings become text nodes
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('data-')) e.dataset[k.slice(5)] = v;
      else if (k === 'title' || k === 'type' || k === 'placeholder' || k === 'value' ||
               k === 'tabindex' || k === 'maxlength' || k === 'aria-label') e.setAttribute(k, v);
      else throw new Error('el: attribute ' + k);
    }
    for (const k of kids) {
      if (k === null || k === undefined || k === false) continue;
      e.append(typeof k === 'string' || typeof k === 'number' ? document.createTextNode(String(k)) : k);
    }
    return e;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  // ---- time ----------------------------------------------------------------

  function dur(s) {
    s = Math.max(0, Math.floor(s));
    if (s < 60) return s + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm' + String(s % 60).padStart(2, '0') + 's';
    if (s < 86400) return Math.floor(s / 3600) + 'h' + String(Math.floor(s % 3600 / 60)).padStart(2, '0') + 'm';
    return Math.floor(s / 86400) + 'd' + String(Math.floor(s % 86400 / 3600)).padStart(2, '0') + 'h';
  }

  function when(t) {
    if (!t) return '';
    const d = new Date(t);
    if (isNaN(d)) return visible(t);
    const p = (n, w = 2) => String(n).padStart(w, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  }

  function clock(t) {
    const d = new Date(t);
    if (isNaN(d)) return visible(t || '');
    const p = (n, w = 2) => String(n).padStart(w, '0');
    return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
  }

  // ---- the API ----------------------------------------------------------------

  async function api(path, body) {
    const opt = { credentials: 'same-origin', headers: { Accept: 'application/json' } };
    if (body !== undefined) {
      opt.method = 'POST';
      opt.headers['Content-Type'] = 'application/json';
      opt.headers['X-CSRF-Token'] = state.csrf;
      opt.body = JSON.stringify(body);
    }
    const r = await fetch(path, opt);
    let j = null;
    try { j = await r.json(); } catch { j = { ok: false, error: `HTTP ${r.status}` }; }
    return { status: r.status, body: j };
  }

  function notice(text) {
    const n = $('notices');
    n.hidden = false;
    n.append(el('p', {}, visible(text)));
    while (n.childNodes.length > 5) n.removeChild(n.firstChild);
  }

  // ---- requests ----------------------------------------------------------------

  function objectWords(req) {
    const o = req.object || {};
    switch (req.kind) {
      case 'command': return o.command || '';
      case 'net': {
        const a = o.addr || '?';
        return (a.includes(':') ? `[${a}]` : a) + (o.port !== undefined ? `:${o.port}` : '') + (o.proto ? `/${o.proto}` : '');
      }
      case 'access':
        if (o.host) return `${o.host}${o.port ? ':' + o.port : ''}`;
        return `${o.path || '?'}${o.access ? ' (' + o.access + ')' : ''}`;
      default:
        return `${o.path || '?'}${o.access ? ' (' + o.access + ')' : ''}`;
    }
  }

  function ctxRow(dl, label, value, opts = {}) {
    if (value === undefined || value === null || value === '') return;
    dl.append(el('dt', {}, label));
    if (opts.pre) dl.append(el('dd', {}, el('pre', { class: 'command' }, visible(value, true))));
    else dl.append(el('dd', {}, visible(value)));
  }

  function countdown(deadline) {
    const t = Date.parse(deadline);
    if (isNaN(t)) return { text: 'no deadline', cls: '' };
    const left = (t - Date.now()) / 1000;
    if (left <= 0) return { text: `overdue by ${dur(-left)}: it is denied at the next sweep`, cls: 'over' };
    return { text: `decide within ${dur(left)}`, cls: left < 60 ? 'soon' : '' };
  }

  function renderRequest(w) {
    const req = w.request;
    const isCmd = req.kind === 'command';
    const card = el('article', { class: 'req', 'data-id': req.id, tabindex: '0' });
    const cd = countdown(req.deadline);
    const cdEl = el('span', { class: 'countdown ' + cd.cls, 'data-deadline': req.deadline || '' }, cd.text);
    // The request as watch shows it: rendered by the dashboard (queue/render.c,
    // the one rule for both), put here as text only. Without it the page
    // cannot tell what it would approve, and offers only the denial.
    const rd = w.render;
    card.append(el('div', { class: 'head' },
      el('span', { class: 'kind' }, visible(req.kind)),
      el('span', { class: 'what' }, rd ? (isCmd ? 'run: ' : '') + rd.summary : '(not rendered)'),
      req.count > 1 ? el('span', { class: 'repeats' }, `\u00d7${req.count}`) : null,
      el('span', { class: 'alike' }),
      cdEl));
    const dl = el('dl', { class: 'ctx' });
    for (const [label, text] of rd ? rd.fields : []) {
      dl.append(el('dt', {}, label));
      if (label === 'command') dl.append(el('dd', { 'data-field': label }, el('pre', { class: 'command' }, text)));
      else dl.append(el('dd', { 'data-field': label }, text));
    }
    ctxRow(dl, 'asked', `${when(req.created)}  (count ${req.count ?? 1})`);
    ctxRow(dl, 'deadline', when(req.deadline));
    card.append(dl);
    if (!rd || rd.warning) card.append(el('p', { class: 'warning' }, rd ? rd.warning : 'this request could not be rendered: it cannot be approved here'));

    const note = el('input', { class: 'note', type: 'text', placeholder: 'note for a denial (optional)', maxlength: '2000', 'aria-label': 'note' });
    const status = el('p', { class: 'status' });
    const btn = (label, cls, key, fn) => {
      const b = el('button', { class: cls, type: 'button', 'data-key': key, title: `key ${key}` }, label);
      b.addEventListener('click', fn);
      return b;
    };
    const acts = el('div', { class: 'actions' });
    if (!rd) {
      // nothing to approve that a person could have read
    } else if (isCmd) {
      acts.append(btn('Run it once here (o)', 'approve', 'o', () => decide(req.id, 'approve', 'once', note)));
    } else {
      acts.append(btn('Approve once (o)', 'approve', 'o', () => decide(req.id, 'approve', 'once', note)),
        btn('For the session (s)', 'approve', 's', () => decide(req.id, 'approve', 'session', note)),
        btn('Always (a)', 'approve', 'a', () => decide(req.id, 'approve', 'always', note)),
        btn('A rule\u2026 (r)', 'rule', 'r', () => proposeRule(req.id, note)));
    }
    acts.append(btn('Deny (d)', 'deny', 'd', () => decide(req.id, 'deny', null, note)), note);
    // the approve buttons arm once every part of the request above them
    // has been in the window (armSeen), as watch's keys do
    const hint = el('p', { class: 'arm' }, 'scroll through the whole request to arm approve');
    card.seen = [];
    card.armed = false;
    for (const b of acts.querySelectorAll('button.approve')) b.disabled = true;
    card.append(hint, acts, status);
    card.addEventListener('click', () => select(req.id));
    return card;
  }

  function renderRequests() {
    const box = $('requests');
    const ids = [...state.requests.values()].filter((w) => w.state === 'pending')
      .map((w) => w.request.id).sort();
    const keep = new Map([...box.children].map((c) => [c.dataset.id, c]));
    const selId = state.order[state.sel];
    for (const [id, node] of keep) if (!ids.includes(id)) node.remove();
    let prev = null;
    for (const id of ids) {
      let node = keep.get(id);
      if (!node) node = renderRequest(state.requests.get(id));
      if (prev ? prev.nextSibling !== node : box.firstChild !== node) {
        if (prev) prev.after(node); else box.prepend(node);
      }
      prev = node;
    }
    // asks one rule would answer (the same rule_key): each card says how
    // many others, and that r on any of them offers that rule
    const byKey = new Map();
    for (const id of ids) {
      const k = state.requests.get(id).rule_key;
      if (k) byKey.set(k, (byKey.get(k) || 0) + 1);
    }
    for (const id of ids) {
      const k = state.requests.get(id).rule_key;
      const n = k ? byKey.get(k) - 1 : 0;
      const node = box.querySelector(`[data-id="${CSS.escape(id)}"] .alike`);
      if (node) { node.textContent = n ? `+${n} alike: one rule (r)` : ''; node.hidden = !n; }
    }
    state.order = ids;
    const i = ids.indexOf(selId);
    state.sel = i >= 0 ? i : Math.min(state.sel, Math.max(0, ids.length - 1));
    markSelected();
    $('n-pending').textContent = String(ids.length);
    $('no-requests').hidden = ids.length > 0;
    $('no-requests').textContent = 'No pending requests; new ones appear here as they come.';
    $('no-requests').removeAttribute('aria-busy');
    document.title = ids.length ? `(${ids.length}) bpfsbx dashboard` : 'bpfsbx dashboard';
    requestAnimationFrame(armSeen);
  }

  // Which part of each pending card (from its top to its buttons) has been
  // inside the window, as pixel ranges. A card whose height changes (the
  // window was resized and its text wraps anew) starts again: the ranges
  // were of the old layout. A hidden tab shows nothing.
  function armSeen() {
    if (document.hidden) return;
    for (const card of $('requests').children) {
      if (card.armed || !card.seen) continue;
      const acts = card.querySelector('.actions');
      const c = card.getBoundingClientRect();
      const h = acts.getBoundingClientRect().top - c.top;
      if (card.seenH !== h) { card.seen = []; card.seenH = h; }
      const top = Math.max(0, -c.top), bottom = Math.min(h, window.innerHeight - c.top);
      if (bottom > top) card.seen.push([top, bottom]);
      card.seen.sort((a, b) => a[0] - b[0]);
      let reach = 0;
      for (const [a, b] of card.seen) if (a <= reach + 0.5) reach = Math.max(reach, b);
      if (reach + 0.5 >= h) {
        card.armed = true;
        card.querySelector('p.arm').hidden = true;
        if (!state.deciding.has(card.dataset.id)) for (const b of card.querySelectorAll('button.approve')) b.disabled = false;
      }
    }
  }

  function markSelected() {
    for (const c of $('requests').children) c.classList.toggle('selected', c.dataset.id === state.order[state.sel]);
  }

  function select(id) {
    const i = state.order.indexOf(id);
    if (i >= 0) { state.sel = i; markSelected(); }
  }

  function tickCountdowns() {
    for (const c of document.querySelectorAll('.countdown[data-deadline]')) {
      const cd = countdown(c.dataset.deadline);
      c.textContent = cd.text;
      c.className = 'countdown ' + cd.cls;
    }
  }

  function showAction(ok, lines, output) {
    const a = $('action');
    clear(a);
    a.hidden = false;
    a.className = 'action' + (ok ? '' : ' err');
    for (const l of lines) a.append(el('div', {}, visible(l)));
    if (output !== undefined && output !== null) a.append(el('pre', { class: 'output' }, visible(output, true)));
  }

  async function decide(id, verdict, scope, noteInput) {
    if (state.deciding.has(id)) return;
    const card = $('requests').querySelector(`[data-id="${CSS.escape(id)}"]`);
    const w = state.requests.get(id);
    const isCmd = w && w.request.kind === 'command';
    const body = {};
    if (verdict === 'approve') body.scope = scope;
    const note = noteInput && noteInput.value.trim();
    if (note) body.note = note;
    state.deciding.add(id);
    if (card) {
      card.classList.add('busy');
      for (const b of card.querySelectorAll('button')) b.disabled = true;
      card.querySelector('.status').textContent = verdict === 'approve' && isCmd
        ? 'running the command here, outside the agent…' : 'deciding…';
    }
    let r;
    try {
      r = await api(`/api/requests/${encodeURIComponent(id)}/${verdict}`, body);
    } catch (e) {
      r = { status: 0, body: { error: String(e) } };
    }
    state.deciding.delete(id);
    if (r.status === 200) {
      const b = r.body;
      const lines = [`${verdict === 'approve' ? 'approved' : 'denied'} ${id}${verdict === 'approve' ? ' (' + b.scope + ')' : ''}`];
      if (b.result) {
        lines.push(`the command exited ${b.result.exit_code}${b.result.timed_out ? ' (timed out)' : ''}${b.result.truncated ? ' (output cut at 1 MiB)' : ''}; output in ${b.result.output}`);
      }
      showAction(true, lines, b.result ? (b.output ?? '') + (b.output_truncated ? '\n[… the rest is in the file]' : '') : undefined);
      if (w) w.state = 'done';
      renderRequests();
      loadDone();
    } else {
      const msg = (r.body && r.body.error) || `HTTP ${r.status}`;
      if (card) {
        card.classList.remove('busy');
        for (const b of card.querySelectorAll('button')) b.disabled = !card.armed && b.classList.contains('approve');
        const st = card.querySelector('.status');
        st.textContent = visible(msg);
        st.className = 'status err';
      }
      showAction(false, [msg]);
      if (r.status === 409 || r.status === 404) loadPending();
    }
  }

  // "Always", widened: the rule the dashboard proposes (queue/propose.c),
  // shown inside the card above its buttons, as text only. Showing it
  // disarms approve until the card, rule and all, has been in the window;
  // writing sends back the rule's text, and the server writes nothing if
  // the proposal has changed since.
  async function proposeRule(id, noteInput) {
    const card = $('requests').querySelector(`[data-id="${CSS.escape(id)}"]`);
    if (!card || state.deciding.has(id)) return;
    const st = card.querySelector('.status');
    const r = await api(`/api/requests/${encodeURIComponent(id)}/rule`);
    const old = card.querySelector('section.proposal');
    if (old) old.remove();
    const oldBtn = card.querySelector('button[data-key="y"]');
    if (oldBtn) oldBtn.remove();
    if (r.status !== 200) {
      st.textContent = visible((r.body && r.body.error) || `HTTP ${r.status}`);
      st.className = 'status err';
      return;
    }
    const p = r.body.proposal;
    const sec = el('section', { class: 'proposal' }, el('h3', {}, 'The rule "always" widens to'));
    const dl = el('dl', { class: 'ctx' });
    for (const [label, text] of r.body.fields.fields) {
      dl.append(el('dt', {}, label));
      dl.append(el('dd', { 'data-field': 'rule-' + label }, text));
    }
    sec.append(dl);
    if (r.body.fields.warning) sec.append(el('p', { class: 'warning' }, r.body.fields.warning));
    card.insertBefore(sec, card.querySelector('p.arm'));
    const write = el('button', { class: 'approve', type: 'button', 'data-key': 'y', title: 'key y' },
      `Write the rule and approve ${p.covers.length} (y)`);
    write.addEventListener('click', () => writeRule(id, p.rule, noteInput));
    card.querySelector('.actions').prepend(write);
    // what is above the buttons changed: it must all be seen again
    card.armed = false;
    card.seen = [];
    card.querySelector('p.arm').hidden = false;
    for (const b of card.querySelectorAll('button.approve')) b.disabled = true;
    st.textContent = 'Read the rule to its end; then y writes it.';
    st.className = 'status';
    requestAnimationFrame(armSeen);
  }

  async function writeRule(id, rule, noteInput) {
    if (state.deciding.has(id)) return;
    const card = $('requests').querySelector(`[data-id="${CSS.escape(id)}"]`);
    const w = state.requests.get(id);
    const body = { rule };
    const note = noteInput && noteInput.value.trim();
    if (note) body.note = note;
    state.deciding.add(id);
    if (card) for (const b of card.querySelectorAll('button')) b.disabled = true;
    let r;
    try {
      r = await api(`/api/requests/${encodeURIComponent(id)}/rule`, body);
    } catch (e) {
      r = { status: 0, body: { error: String(e) } };
    }
    state.deciding.delete(id);
    if (r.status === 200) {
      showAction(true, [`rule written to ${r.body.file}`,
        `approved ${r.body.approved} of the ${r.body.answers} waiting requests it answers, for their sessions`]);
      if (w) w.state = 'done';
      renderRequests();
      loadPending();
      loadDone();
    } else {
      const msg = (r.body && r.body.error) || `HTTP ${r.status}`;
      if (card) {
        for (const b of card.querySelectorAll('button')) b.disabled = !card.armed && b.classList.contains('approve');
        const st = card.querySelector('.status');
        st.textContent = visible(msg);
        st.className = 'status err';
      }
      showAction(false, [msg]);
    }
  }

  // Loads of one list can be in flight together and answer in any order; the
  // list is redrawn from the newest answer only, so an older one cannot bring
  // back a request that was decided in between.
  async function newest(list, url) {
    const load = (state.loads[list] = (state.loads[list] || 0) + 1);
    const r = await api(url);
    return r.status === 200 && load === state.loads[list] ? r : null;
  }

  async function loadPending() {
    const r = await newest('pending', '/api/requests?state=pending');
    if (!r) return;
    for (const [id, w] of state.requests) if (w.state === 'pending') state.requests.delete(id);
    for (const w of r.body.requests) state.requests.set(w.request.id, w);
    for (const e of r.body.errors || []) notice(`${e.project}: ${e.error}`);
    renderRequests();
  }

  // ---- recent decisions ------------------------------------------------------------

  const outputBlock = (text) => el('pre', {}, visible(text, true));

  // The table is rebuilt whenever a decision lands, so an opened output is kept
  // here and shown again, instead of vanishing under the person reading it.
  async function showOutput(td, id) {
    const r = await api(`/api/requests/${encodeURIComponent(id)}`);
    const text = r.status === 200 ? (r.body.output ?? '(no output file)') : (r.body.error || `HTTP ${r.status}`);
    state.outputs.set(id, text);
    const row = $('done').querySelector(`tr[data-id="${CSS.escape(id)}"]`);
    const cell = row ? row.lastElementChild : td;
    const b = cell.querySelector('button');
    if (b) b.disabled = true;
    if (!cell.querySelector('pre')) cell.append(outputBlock(text));
  }

  async function loadDone() {
    const r = await newest('done', '/api/requests?state=done&limit=50');
    if (!r) return;
    const tb = $('done').tBodies[0];
    clear(tb);
    const listed = new Set();
    for (const w of r.body.requests) {
      const q = w.request, d = q.decision || {};
      const res = el('td', {});
      listed.add(q.id);
      if (q.result) {
        res.append(`exit ${q.result.exit_code} `);
        const b = el('button', { class: 'small', type: 'button' }, 'output');
        b.addEventListener('click', () => { b.disabled = true; showOutput(res, q.id); });
        res.append(b);
        if (state.outputs.has(q.id)) {
          b.disabled = true;
          res.append(outputBlock(state.outputs.get(q.id)));
        }
      }
      tb.append(el('tr', { 'data-id': q.id },
        el('td', {}, when(d.at)),
        el('td', { class: 'mono' }, visible(q.id)),
        el('td', {}, visible(q.kind)),
        el('td', { class: 'mono' }, visible(w.what || objectWords(q))),
        el('td', { class: `v v-${d.verdict}` }, visible(`${d.verdict}${d.verdict === 'approve' ? ' ' + d.scope : ''}${d.expired ? ' (expired)' : ''}${d.note ? ': ' + d.note : ''}`)),
        el('td', {}, visible(d.by)),
        res));
    }
    for (const id of state.outputs.keys()) if (!listed.has(id)) state.outputs.delete(id);
    $('no-done').hidden = r.body.requests.length > 0;
  }

  // ---- sessions --------------------------------------------------------------------

  function chainCell(s) {
    const c = state.chains.get(s.project + '\n' + s.name);
    if (!c) return el('td', { class: 'muted' }, 'no log');
    if (c.ok) return el('td', { class: 'chain-ok', title: c.log }, `intact, ${c.records} records`);
    return el('td', { class: 'chain-bad', title: c.log }, visible(`BROKEN at record ${c.first_bad ?? '?'} (line ${c.line ?? '?'}): ${c.problem}`));
  }

  function renderSessions() {
    const tb = $('sessions').tBodies[0];
    clear(tb);
    for (const s of state.sessions) {
      const c = s.counters || {};
      tb.append(el('tr', { 'data-session': s.name },
        el('td', { class: 'mono nowrap' }, visible(s.name)),
        el('td', {}, visible(s.user ?? (s.uid >= 0 ? String(s.uid) : '?'))),
        el('td', { class: 'mono' }, visible(s.project ?? '')),
        el('td', { class: 'mono' }, visible(s.policy ?? '')),
        el('td', {}, visible(s.mode)),
        el('td', { class: 'nowrap' }, when(s.started)),
        el('td', { class: 'num' }, `${c.pending ?? 0}${c.claimed ? ' / ' + c.claimed : ''}`),
        el('td', { class: 'num v-deny' }, String(c.deny ?? 0)),
        el('td', { class: 'num v-ask' }, String(c.ask ?? 0)),
        el('td', { class: 'num v-audit' }, String(c.audit ?? 0)),
        el('td', { class: 'num' }, `${c.approved ?? 0} / ${c.denied ?? 0}`),
        chainCell(s)));
      addOption('session', s.name);
    }
    $('n-sessions').textContent = String(state.sessions.length);
    $('no-sessions').hidden = state.sessions.length > 0;
  }

  async function loadSessions() {
    const r = await newest('sessions', '/api/sessions');
    if (!r) return;
    const d = r.body.daemon || {};
    const de = $('daemon');
    de.textContent = d.running ? `daemon: pid ${d.pid}${d.embedded ? ' (embedded)' : ''}` : 'daemon: not running';
    de.className = 'badge ' + (d.running ? 'good' : 'warn');
    de.title = d.running ? '' : visible(d.error || '');
    state.sessions = r.body.sessions || [];
    renderSessions();
    // a session that is new here: its audit chain too
    if (state.sessions.some((s) => !state.checked.has(s.project + '\n' + s.name))) later('chains', 500, loadChains);
  }

  async function loadChains() {
    const asked = state.sessions.map((s) => s.project + '\n' + s.name);
    const r = await api('/api/audit/verify');
    if (r.status !== 200) return;
    for (const k of asked) state.checked.add(k);
    state.chains.clear();
    for (const l of r.body.logs || []) state.chains.set(l.project + '\n' + l.session, l);
    renderSessions();
  }

  // ---- events ------------------------------------------------------------------------

  function addOption(which, value) {
    if (!value || state.options[which].has(value)) return;
    state.options[which].add(value);
    const sel = $('f-' + which);
    const opts = [...state.options[which]].sort();
    const i = opts.indexOf(value);
    const o = el('option', { value }, visible(value));
    const before = sel.options[i + 1] || null;   // +1: "all" comes first
    sel.insertBefore(o, before);
  }

  function eventObject(rec) {
    if (rec.object !== undefined) return typeof rec.object === 'string' ? rec.object : JSON.stringify(rec.object);
    if (rec.request) return `request ${rec.request}${rec.scope ? ' (' + rec.scope + ')' : ''}`;
    if (rec.event === 'session_start') return `policy ${rec.policy ?? '?'}, pid ${rec.pid ?? '?'}`;
    if (rec.tool) return `${rec.tool} ${JSON.stringify(rec.input ?? '')}`;
    const rest = {};
    for (const [k, v] of Object.entries(rec)) {
      if (!['seq', 'prev', 'hash', 'time', 'event', 'session', 'verdict', 'operation'].includes(k)) rest[k] = v;
    }
    return Object.keys(rest).length ? JSON.stringify(rest) : '';
  }

  function ruleText(rule) {
    if (!rule) return '';
    if (typeof rule === 'string') return rule;
    return rule.reason || rule.pattern || '';
  }

  function matches(e) {
    const f = (k) => $('f-' + k).value;
    return (!f('session') || e.session === f('session')) &&
           (!f('verdict') || e.verdict === f('verdict')) &&
           (!f('operation') || e.operation === f('operation'));
  }

  function eventRow(e) {
    const rec = e.record || {};
    const proc = rec.comm || rec.pid ? `${rec.comm ?? ''}${rec.pid !== undefined ? ' [' + rec.pid + ']' : ''}` : '';
    const tr = el('tr', { 'data-cursor': String(e.cursor), 'data-session': e.session, 'data-verdict': e.verdict || '', 'data-operation': e.operation || '' },
      el('td', { class: 'mono nowrap', title: visible(e.time || '') }, clock(e.time)),
      el('td', { class: 'mono nowrap' }, visible(e.session)),
      el('td', { class: `v v-${e.verdict || ''}` }, visible(e.verdict || '')),
      el('td', {}, visible(e.operation || e.kind || '')),
      el('td', { class: 'mono' }, visible(eventObject(rec))),
      el('td', { class: 'mono' }, visible(proc)),
      el('td', {}, visible(ruleText(rec.rule))));
    tr.hidden = !matches(e);
    tr.event = e;
    return tr;
  }

  function addEvents(list, fresh) {
    const tb = $('events').tBodies[0];
    for (const e of list) {
      if (state.seenEvent.has(e.cursor)) continue;
      state.seenEvent.add(e.cursor);
      addOption('session', e.session);
      addOption('verdict', e.verdict);
      addOption('operation', e.operation);
      const tr = eventRow(e);
      if (fresh) tr.classList.add('fresh');
      tb.prepend(tr);   // newest first
    }
    while (tb.rows.length > MAX_EVENTS) {
      const last = tb.rows[tb.rows.length - 1];
      state.seenEvent.delete(Number(last.dataset.cursor));
      last.remove();
    }
    countEvents();
  }

  function countEvents() {
    const rows = $('events').tBodies[0].rows;
    let shown = 0;
    for (const r of rows) if (!r.hidden) shown++;
    $('n-events').textContent = shown === rows.length ? String(rows.length) : `${shown} of ${rows.length}`;
    $('no-events').hidden = rows.length > 0;
  }

  function applyFilters() {
    for (const r of $('events').tBodies[0].rows) r.hidden = !matches(r.event);
    countEvents();
  }

  async function loadEvents() {
    const r = await api('/api/events?limit=500');
    if (r.status !== 200) return;
    addEvents(r.body.events || [], false);
  }

  // ---- the live feed ---------------------------------------------------------------

  function later(name, ms, fn) {
    if (state.timers[name]) return;
    state.timers[name] = setTimeout(() => { state.timers[name] = null; fn(); }, ms);
  }

  const paused = [];

  function connect() {
    const live = $('live');
    const es = new EventSource('/api/feed');
    const on = (type, fn) => es.addEventListener(type, (m) => {
      let d;
      try { d = JSON.parse(m.data); } catch { return; }
      fn(d);
    });
    es.onopen = () => { live.textContent = 'live feed: connected'; live.className = 'badge good'; };
    es.onerror = () => { live.textContent = 'live feed: reconnecting'; live.className = 'badge bad'; };
    on('hello', () => { loadAll(); });
    on('reset', () => { loadAll(); });
    on('request', (d) => {
      if (!state.requests.has(d.request.id) || state.requests.get(d.request.id).state !== 'done') {
        state.requests.set(d.request.id, d);
        renderRequests();
      }
    });
    on('claimed', (d) => {
      const w = state.requests.get(d.id);
      if (w && !state.deciding.has(d.id)) { w.state = 'claimed'; renderRequests(); }
    });
    on('decided', (d) => {
      const w = state.requests.get(d.id);
      if (w) w.state = 'done';
      renderRequests();
      later('done', 300, loadDone);
    });
    on('gone', (d) => { state.requests.delete(d.id); renderRequests(); });
    on('event', (d) => {
      if ($('f-pause').checked) { paused.push(d); return; }
      addEvents([d], true);
      later('chains', 3000, loadChains);
    });
    on('sessions', () => later('sessions', 300, loadSessions));
    on('notice', (d) => notice(`${d.project}: ${d.text}`));
  }

  function loadAll() {
    loadPending();
    loadSessions();
    loadEvents();
    loadDone();
  }

  // ---- keys, as in watch -------------------------------------------------------------

  function onKey(ev) {
    const t = ev.target;
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (t && (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA')) return;
    const id = state.order[state.sel];
    const card = id && $('requests').querySelector(`[data-id="${CSS.escape(id)}"]`);
    switch (ev.key) {
      case 'j': case 'ArrowDown':
        if (state.sel + 1 < state.order.length) { state.sel++; markSelected(); }
        break;
      case 'k': case 'ArrowUp':
        if (state.sel > 0) { state.sel--; markSelected(); }
        break;
      case 'o': case 's': case 'a': case 'd': case 'r': case 'y': {
        const b = card && card.querySelector(`button[data-key="${ev.key}"]`);
        if (b && !b.disabled) b.click();
        else if (b && card && !card.armed) card.querySelector('.status').textContent = 'Not approved: scroll through the whole request to arm approve.';
        break;
      }
      default:
        return;
    }
    ev.preventDefault();
  }

  async function start() {
    const r = await api('/api/info');
    if (r.status !== 200) {
      $('live').textContent = `not authorized (HTTP ${r.status}): open the URL bpfsbx dashboard printed`;
      return;
    }
    state.csrf = r.body.csrf;
    $('user').textContent = visible(`deciding as ${r.body.user}`);
    const p = $('protection');
    p.textContent = r.body.kernel_protected ? 'sessions cannot connect (kernel)' : 'NOT protected by the kernel';
    p.className = 'badge ' + (r.body.kernel_protected ? 'good' : 'bad');
    p.title = visible(r.body.protection || '');
    for (const pr of r.body.projects || []) if (pr.error) notice(`${pr.dir}: ${pr.error}`);
    for (const k of ['session', 'verdict', 'operation']) $('f-' + k).addEventListener('change', applyFilters);
    $('f-pause').addEventListener('change', () => {
      if (!$('f-pause').checked) { addEvents(paused.splice(0), true); }
    });
    $('filters').addEventListener('submit', (e) => e.preventDefault());
    $('verify').addEventListener('click', loadChains);
    document.addEventListener('keydown', onKey);
    setInterval(() => { tickCountdowns(); armSeen(); }, 1000);
    window.addEventListener('scroll', armSeen, { passive: true, capture: true });
    window.addEventListener('resize', armSeen, { passive: true });
    document.addEventListener('visibilitychange', armSeen);
    connect();
  }

  start();
})();
