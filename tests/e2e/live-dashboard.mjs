// The dashboard against a live kernel session, in a real browser: driven
// by tests/kernel/t_dashboard.sh inside the VM, where the daemon, the
// session and the dashboard are real. This script is the person at the
// page:
//
//   node live-dashboard.mjs TOKEN_FILE SCREENSHOT_DIR|-
//
// It opens the URL from the dashboard's token file in headless Chromium,
// waits for the live feed, prints READY, then waits for the first pending
// request card (the shell starts the session's first try after READY),
// prints "SEEN ID MS" (MS: from the request's own creation time to the card
// on the page), clicks "Approve once" and prints "CLICKED ID" once the card
// is gone. Any failure prints "ERROR why" and exits 1.
//
// Timeouts are long: under QEMU's software emulation Chromium needs minutes
// to start. The latency of the page itself is measured, not assumed.
import fs from 'node:fs';
import path from 'node:path';
import { browser, sinceId } from './dashboard-lib.mjs';

const [tokenFile, shots] = process.argv.slice(2);
const say = (s) => process.stdout.write(s + '\n');

async function main() {
  const info = JSON.parse(fs.readFileSync(tokenFile, 'utf8'));
  const b = await browser({ timeout: 600000 });
  try {
    b.page.setDefaultTimeout(600000);
    await b.page.goto(info.url);
    await b.page.waitForFunction(() => document.getElementById('live').textContent.includes('connected'));
    say('READY');
    const card = await b.page.waitForSelector('#requests article[data-id]');
    const id = await card.getAttribute('data-id');
    // measured once playwright has the card: an upper bound of the page's delay
    say(`SEEN ${id} ${sinceId(id)}`);
    const text = await card.textContent();
    for (const want of ['.aws/credentials', 'test: cloud credentials need a person', 'sbxtest', 'Approve once (o)']) {
      if (!text.includes(want)) throw new Error(`the card lacks "${want}": ${text}`);
    }
    if (shots && shots !== '-') await b.page.screenshot({ path: path.join(shots, 'dashboard-live.png') });
    await b.page.click(`#requests article[data-id="${id}"] button[data-key="o"]`);
    await b.page.waitForSelector(`#requests article[data-id="${id}"]`, { state: 'detached' });
    if (b.errors.length) throw new Error(b.errors.join('; '));
    say(`CLICKED ${id}`);
  } finally {
    await b.close();
  }
}

main().then(() => process.exit(0), (e) => {
  say(`ERROR ${String(e && e.message ? e.message : e).replace(/\s+/g, ' ').slice(0, 1500)}`);
  process.exit(1);
});
