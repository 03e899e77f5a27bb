// Runs the end-to-end tests: every test-*.mjs next to this file exports
// `tests`, an object of name -> async function. One line per test: "ok NAME",
// "FAIL NAME: why" or "skip NAME: why", then a summary. Exit status 1 when
// any test failed. Arguments are substrings: only tests whose name contains
// one run.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bpfsbx } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const files = fs.readdirSync(here).filter((f) => /^test-.*\.mjs$/.test(f)).sort()
  .map((f) => './' + f);
const filter = process.argv.slice(2);
let passed = 0, failed = 0, skipped = 0;

if (!fs.existsSync(bpfsbx)) {
  console.log(`FAIL e2e: ${bpfsbx} is not built (run make)`);
  process.exit(1);
}
for (const f of files) {
  const { tests } = await import(f);
  for (const [name, fn] of Object.entries(tests)) {
    if (filter.length && !filter.some((s) => name.includes(s))) continue;
    const t0 = Date.now();
    try {
      const r = await fn();
      const ms = Date.now() - t0;
      if (r && r.skip) {
        skipped++;
        console.log(`skip ${name}: ${r.skip}`);
      } else {
        passed++;
        console.log(`ok ${name} (${(ms / 1000).toFixed(1)} s)`);
      }
    } catch (e) {
      failed++;
      console.log(`FAIL ${name}: ${String(e && e.message ? e.message : e).replace(/\s+/g, ' ').slice(0, 2000)}`);
    }
  }
}
console.log(`e2e: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed ? 1 : 0);
