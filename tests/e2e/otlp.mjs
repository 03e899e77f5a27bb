// An OTLP/HTTP JSON logs endpoint for the tests (test-fleet.mjs, and the
// kernel suite's t_ops.sh through otlp-receiver.mjs) that decodes each
// request with the OpenTelemetry project's own definitions.
import http from 'node:http';
import { createRequire } from 'node:module';
import { isDeepStrictEqual } from 'node:util';

const require = createRequire(import.meta.url);
const assert = (c, m) => { if (!c) throw new Error(m); };

// The OpenTelemetry project's protobuf definitions, as its JavaScript SDK
// ships them compiled (protobufjs static code of opentelemetry-proto).
export function exportLogsRequest() {
  const gen = require.resolve('@opentelemetry/otlp-transformer/package.json')
    .replace(/package\.json$/, 'build/src/generated/root.js');
  return require(gen).opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
}

// Decode a body by the definitions, to the wire format and back: a field the
// definitions do not know, or a value of the wrong type, does not survive
// the round trip, so what arrives must equal what was sent.
export function decodeOtlp(T, body) {
  const sent = JSON.parse(body);
  const wire = T.encode(T.fromObject(sent)).finish();
  const back = T.toObject(T.decode(wire), { longs: String, enums: Number });
  assert(isDeepStrictEqual(back, sent),
    `the record is not what opentelemetry-proto decodes:\n sent ${JSON.stringify(sent)}\n back ${JSON.stringify(back)}`);
  return back;
}

// onRecord(decoded): called for each request, as it arrives
export function otlpReceiver(port, onRecord = () => {}) {
  const T = exportLogsRequest();
  const got = [], errors = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try {
        assert(req.method === 'POST' && req.url === '/v1/logs', `${req.method} ${req.url}`);
        assert(/^application\/json/.test(req.headers['content-type'] || ''), `content-type ${req.headers['content-type']}`);
        const d = decodeOtlp(T, Buffer.concat(chunks).toString());
        got.push(d);
        onRecord(d);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      } catch (e) {
        errors.push(String(e.message || e));
        res.writeHead(400);
        res.end();
      }
    });
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve({
    got, errors, close: () => new Promise((c) => server.close(c)),
  })));
}
