// Times the web pages at scale in Debian's Chromium (run by bench/web_scale.sh against a live
// `astraeus serve` seeded by scale_server.sh): REPS times each of
// - first view: a new tab of a signed-in browser opens #/goodput (or #/runs); from navigation
//   start to the view drawn with its data (the page's 'astraeus:first-view' mark);
// - sort: a click on the Goodput view's Held header until the new rows are drawn (the first
//   row's element replaced and nothing loading);
// - more rows: a click on "Show 100 more" (Goodput view) or the Runs view's next page (twice:
//   the second and third pages) until the table has more rows;
// timed in the page (performance.now() around the click). Prints each measure's median and max
// in ms, and one JSON line (-1: not done within 30 s). Works with the pages before server-side sorting too (bench/web_scale.sh
// --before), where a missing control is reported as '-'.
import { chromium } from 'playwright-core';

const { BASE, CHROMIUM, ADMIN } = process.env;
const REPS = Number(process.env.REPS || 5);
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--headless', '--disable-gpu', '--no-first-run'] });
const times = {};
const note = (k, v) => { if (v !== null && v !== undefined) (times[k] ||= []).push(v); };
try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const signin = await ctx.newPage();
  await signin.goto(`${BASE}/?refresh=0`);
  await signin.fill('#token', ADMIN);
  await signin.press('#token', 'Enter');
  await signin.waitForSelector('#view[data-ready="goodput"]', { timeout: 60000 });
  await signin.close();
  // A click on `sel` until done(before) holds in the page; ms, or null when `sel` is absent.
  const clickUntil = (page, sel, rowsSel) => page.evaluate(async ({ sel, rowsSel }) => {
    const el = document.querySelector(sel);
    if (!el || el.closest('[hidden]')) return null;  // absent, or nothing more to show
    const first = document.querySelector(`${rowsSel} tr`);
    const count = document.querySelectorAll(`${rowsSel} tr`).length;
    const isMore = /more/.test(sel);
    const t0 = performance.now();
    el.click();
    for (;;) {
      const now = document.querySelector(`${rowsSel} tr`);
      const busy = document.querySelector('[aria-busy="true"]') || !document.querySelector('#view[data-ready]');
      const done = isMore ? document.querySelectorAll(`${rowsSel} tr`).length > count : now && now !== first;
      if (done && !busy) return performance.now() - t0;
      await new Promise((r) => requestAnimationFrame(r));
      if (performance.now() - t0 > 30000) return -1;
    }
  }, { sel, rowsSel });
  for (let k = 0; k < REPS; k++) {
    for (const view of ['goodput', 'runs']) {
      const page = await ctx.newPage();
      await page.goto(`${BASE}/?refresh=0#/${view}`);
      await page.waitForSelector(`#view[data-ready="${view}"]`, { timeout: 60000 });
      note(`${view} first view`, await page.evaluate(() => performance.getEntriesByName('astraeus:first-view')[0]?.startTime));
      if (view === 'goodput') {
        note('goodput sort (held)', await clickUntil(page, '#goodput-table thead th:nth-child(2) button', '#goodput-table tbody'));
        note('goodput sort (goodput)', await clickUntil(page, '#goodput-table thead th:nth-child(4) button', '#goodput-table tbody'));
        note('goodput 100 more', await clickUntil(page, '#goodput-table-more', '#goodput-table tbody'));
      } else {
        note('runs sort (name)', await clickUntil(page, '#runs-table thead th:nth-child(1) button', '#runs-table tbody'));
        const more = (await page.$('#runs-table-more')) ? '#runs-table-more' : '#runs-more';
        note('runs next page', await clickUntil(page, more, '#runs-table tbody'));
        note('runs third page', await clickUntil(page, more, '#runs-table tbody'));
      }
      await page.close();
    }
  }
} finally {
  await browser.close();
}
const stat = (v) => { const s = [...v].sort((a, b) => a - b); return { median: s[Math.floor((s.length - 1) / 2)], max: s[s.length - 1] }; };
const out = {};
for (const [k, v] of Object.entries(times)) {
  out[k] = stat(v);
  console.log(`${k.padEnd(24)} median ${Math.round(out[k].median)} ms   max ${Math.round(out[k].max)} ms   (${v.length} reps)`);
}
console.log(JSON.stringify(out));
