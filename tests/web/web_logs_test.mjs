// A run's page follows its log across attempts (run by web_logs_test.sh against a live
// `astraeus serve --executor local`): opened as the run is submitted, the page shows, with no
// reload, every attempt's log in full and in order, "--- attempt K ---" before attempts 2 and 3.
import { chromium } from 'playwright-core';

const { BASE, CHROMIUM, ML } = process.env;
let passes = 0, fails = 0;
const check = (name, ok, detail = '') => {
  if (ok) passes++; else { fails++; console.log(`FAIL: ${name}${detail ? ` (${detail})` : ''}`); }
};
const api = async (path, init = {}) => {
  const res = await fetch(`${BASE}/v1${path}`, { ...init, headers: { Authorization: `Bearer ${ML}`, 'Content-Type': 'application/json', ...(init.headers || {}) } });
  return { status: res.status, body: await res.json().catch(() => null) };
};

// Attempts 1 and 2 fail; each prints its own lines (attempt 1 a long line, so that an offset
// carried from one attempt to the next would cut the next one's start).
const script = 'if [ $ASTRAEUS_ATTEMPT = 1 ]; then echo first-attempt-line-aaaaaaaaaaaaaaaaaaaaaaaa; sleep 1; exit 1; fi; ' +
  'echo START-OF-ATTEMPT-$ASTRAEUS_ATTEMPT; for i in 1 2 3 4 5; do echo attempt $ASTRAEUS_ATTEMPT line $i; sleep 0.2; done; exit 1';
// What the page shows once the run has failed, by hand (as `astra runs logs --follow` prints it).
let want = 'first-attempt-line-aaaaaaaaaaaaaaaaaaaaaaaa\n';
for (const k of [2, 3]) {
  want += `--- attempt ${k} ---\nSTART-OF-ATTEMPT-${k}\n`;
  for (let i = 1; i <= 5; i++) want += `attempt ${k} line ${i}\n`;
}

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--headless', '--disable-gpu', '--no-first-run'] });
try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${BASE}/?refresh=1`);
  await page.fill('#token', ML);
  await page.press('#token', 'Enter');
  await page.waitForSelector('#view[data-ready="goodput"]');
  const sub = await api('/runs', { method: 'POST', body: JSON.stringify({ name: 'r', workers: 1, gpus_per_worker: 1, command: ['/bin/sh', '-c', script] }) });
  check('run r submitted', sub.status === 201, JSON.stringify(sub));
  await page.evaluate(() => { location.hash = '#/run/ml/r'; window.sameDocument = true; });
  await page.waitForSelector('#view[data-ready="run"]');
  // Seen during the run: attempt 1's log before attempt 2 has begun (the page followed from the start).
  const sawFirst = await page.waitForFunction(() => (document.querySelector('#logs')?.textContent || '').startsWith('first-attempt-line'),
    null, { timeout: 30000, polling: 100 }).then(() => true, () => false);
  check('the page shows attempt 1\'s log while the run goes on', sawFirst);
  const done = await page.waitForFunction((w) => document.querySelector('#logs')?.textContent === w, want, { timeout: 60000, polling: 200 })
    .then(() => true, () => false);
  const shown = await page.evaluate(() => document.querySelector('#logs')?.textContent);
  check('the log follows into attempts 2 and 3: each in full, in order, a header per new attempt', done, JSON.stringify(shown));
  check('no reload: the same document all along', await page.evaluate(() => window.sameDocument === true));
  let run = await api('/runs/r');
  for (let k = 0; k < 100 && run.body && run.body.state !== 'failed'; k++) {
    await new Promise((r) => setTimeout(r, 200));
    run = await api('/runs/r');
  }
  check('the API: r failed after 3 attempts', run.body && run.body.state === 'failed' && run.body.attempts === 3, JSON.stringify(run.body && [run.body.state, run.body.attempts]));
  check('no page error', problems.length === 0, problems.join(' | '));
  await ctx.close();
} finally {
  await browser.close();
}
console.log(`web_logs: ${passes} passed, ${fails} failed`);
process.exit(fails ? 1 : 0);
