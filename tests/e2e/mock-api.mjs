// A local stand-in for the Anthropic Messages API, for driving the real
// Claude Code CLI. POST /v1/messages answers from a script, one step per
// assistant turn of the main conversation (the request that offers the
// Bash tool): a step is {tool, input} (a tool_use block) or {text}.
// Other requests (titles, quota probes, ...) get a short text. Every
// request body is recorded, so a test can check what the model was sent.
import http from 'node:http';

function sse(res, msg) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  ev('message_start', { message: { ...msg, content: [], stop_reason: null, stop_sequence: null } });
  msg.content.forEach((c, index) => {
    if (c.type === 'text') {
      ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      ev('content_block_delta', { index, delta: { type: 'text_delta', text: c.text } });
    } else {
      ev('content_block_start', { index, content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} } });
      ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(c.input) } });
    }
    ev('content_block_stop', { index });
  });
  ev('message_delta', { delta: { stop_reason: msg.stop_reason, stop_sequence: null }, usage: { output_tokens: 5 } });
  ev('message_stop', {});
  res.end();
}

export async function startMock(script) {
  const requests = [];
  let turn = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      let j = null;
      try { j = JSON.parse(body); } catch { /* recorded as null */ }
      requests.push({ method: req.method, url: req.url, body: j });
      if (req.method !== 'POST' || !req.url.startsWith('/v1/messages') || !j) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'mock: ' + req.url } }));
        return;
      }
      const main = Array.isArray(j.tools) && j.tools.some((t) => t.name === 'Bash');
      let content, stop;
      if (main && turn < script.length) {
        const s = script[turn];
        const id = `toolu_e2e_${turn}`;
        turn++;
        if (s.tool) {
          content = [{ type: 'tool_use', id, name: s.tool, input: s.input }];
          stop = 'tool_use';
        } else {
          content = [{ type: 'text', text: s.text }];
          stop = 'end_turn';
        }
      } else {
        content = [{ type: 'text', text: main ? 'done' : 'ok' }];
        stop = 'end_turn';
      }
      const msg = { id: `msg_e2e_${requests.length}`, type: 'message', role: 'assistant', model: j.model || 'mock',
        content, stop_reason: stop, usage: { input_tokens: 10, output_tokens: 5 } };
      if (j.stream) return sse(res, msg);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ...msg, stop_sequence: null }));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: server.address().port,
    requests,
    close: () => new Promise((r) => server.close(r)),
    // The tool_result the model received for tool_use id, from a later request.
    toolResult(id) {
      for (const r of requests) {
        for (const m of r.body?.messages || []) {
          if (m.role !== 'user' || !Array.isArray(m.content)) continue;
          for (const c of m.content) {
            if (c.type === 'tool_result' && c.tool_use_id === id) return c;
          }
        }
      }
      return null;
    },
  };
}

export function resultText(tr) {
  if (!tr) return '';
  if (typeof tr.content === 'string') return tr.content;
  return (tr.content || []).map((c) => c.text || '').join('\n');
}
