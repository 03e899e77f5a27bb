// otlp-receiver.mjs PORT OUT: an OTLP/HTTP JSON logs endpoint on
// 127.0.0.1:PORT that appends each request, as opentelemetry-proto decodes
// it, to OUT as one JSON line, and each refusal to OUT.errors (for the
// kernel suite, tests/kernel/t_ops.sh). Runs until killed.
import fs from 'node:fs';
import { otlpReceiver } from './otlp.mjs';

const [port, out] = process.argv.slice(2);
const rx = await otlpReceiver(Number(port), (d) => fs.appendFileSync(out, JSON.stringify(d) + '\n'));
setInterval(() => {
  if (rx.errors.length) fs.appendFileSync(out + '.errors', rx.errors.splice(0).join('\n') + '\n');
}, 100);
fs.writeFileSync(out + '.ready', '');
