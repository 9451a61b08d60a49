// The web pages at scale (run by web_scale_test.sh against a live `astraeus serve` seeded with
// RUNS runs on MACHINES machines, every run ended): the Goodput view, the Runs view, sorting,
// the next rows, a run's page and a machine's page show the right content, each compared with
// the REST API's answer read here (full lists, sorted and cut here, not by the server). No
// timings are asserted here (bench/web_scale.sh measures them).
import { chromium } from 'playwright-core';

const { BASE, CHROMIUM, ADMIN } = process.env;
const RUNS = Number(process.env.RUNS), MACHINES = Number(process.env.MACHINES);
let passes = 0, fails = 0;
const check = (name, ok, detail = '') => {
  if (ok) passes++; else { fails++; console.log(`FAIL: ${name}${detail ? ` (${detail})` : ''}`); }
};
const api = async (path) => {
  const r = await fetch(`${BASE}/v1${path}`, { headers: { Authorization: `Bearer ${ADMIN}` } });
  return r.json();
};
const n = (v) => v.toLocaleString('en-US');
const pct = (v) => (v === undefined || v === null ? '-' : `${Math.round(v * 100)}%`);
const gpuh = (v) => { const t = Math.floor((Math.round((v ?? 0) * 3600) + 180) / 360); return `${Math.floor(t / 10)}.${t % 10}`; };
const label = (r) => `${r.workspace}/${r.run}`;
// The server's order, worked out here: the key in its direction, ties by workspace, then name.
const byName = (a, b) => (a.workspace < b.workspace ? -1 : a.workspace > b.workspace ? 1 : a.run < b.run ? -1 : a.run > b.run ? 1 : 0);
const order = (rows, value, desc) => [...rows].sort((a, b) => {
  const x = value(a), y = value(b);
  return x !== y ? (desc ? y - x : x - y) : byName(a, b);
});

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--headless', '--disable-gpu', '--no-first-run'] });
try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  const problems = [];
  const requests = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('request', (r) => { if (r.url().includes('/v1/')) requests.push(r.url().slice(BASE.length)); });
  const ready = (view) => page.waitForSelector(`#view[data-ready="${view}"]`, { timeout: 20000 });
  const names = () => page.$$eval('#goodput-table tbody td.name a', (as) => as.map((a) => a.getAttribute('title') || a.textContent));
  // Waits until the goodput table's first row is `want` (a sort asks the server again).
  const firstIs = (want) => page.waitForFunction((w) => {
    const a = document.querySelector('#goodput-table tbody td.name a');
    return a && (a.getAttribute('title') || a.textContent) === w && !document.querySelector('#goodput-body[aria-busy]');
  }, want, { timeout: 20000 }).then(() => true, () => false);

  await page.goto(`${BASE}/?refresh=0#/goodput`);
  await page.fill('#token', ADMIN);
  await page.press('#token', 'Enter');
  await ready('goodput');
  await page.waitForSelector('#goodput-table');

  // --- the Goodput view: 100 rows of RUNS, held descending --------------------------------------
  const start = await page.getAttribute('#period', 'data-start');
  const end = await page.getAttribute('#period', 'data-end');
  const all = await api(`/goodput?by=run&start=${start}&end=${end}`);  // every row, in id order
  check(`the API: ${RUNS} run rows in the period`, all.rows.length === RUNS && all.rows_total === RUNS, `${all.rows.length} ${all.rows_total}`);
  check('the count: Showing 100 of RUNS', (await page.textContent('#goodput-table-count')) === `Showing 100 of ${n(RUNS)}` &&
    (await page.getAttribute('#goodput-table', 'data-total')) === String(RUNS), await page.textContent('#goodput-table-count'));
  check('100 rows drawn', (await page.$$('#goodput-table tbody tr')).length === 100);
  const heldDesc = order(all.rows, (r) => r.allocated_gpu_hours, true);
  let shown = await names();
  check('held descending by default: the 100 largest, in order', JSON.stringify(shown) === JSON.stringify(heldDesc.slice(0, 100).map(label)),
    `${shown.slice(0, 3)} vs ${heldDesc.slice(0, 3).map(label)}`);
  const firstHeld = await page.$eval('#goodput-table tbody tr td:nth-child(2)', (td) => td.textContent);
  check('the first row\'s held GPU-hours are the largest of the API\'s', firstHeld === gpuh(heldDesc[0].allocated_gpu_hours), `${firstHeld} vs ${heldDesc[0].allocated_gpu_hours}`);
  check('the summary is over every row (the API\'s total)', (await page.textContent('#sum-held')) === `${gpuh(all.total.allocated_gpu_hours)} GPU-h`);
  check('the page asked for 100 rows sorted by the server, not for every row',
    requests.some((u) => /\/v1\/goodput\?.*sort=held.*limit=100/.test(u)) && !requests.some((u) => /\/v1\/goodput\?by=run(&(days|start|end)=[^&]*)*$/.test(u)), requests.join(' '));

  // --- sort: held ascending, then goodput descending ------------------------------------------
  await page.click('#goodput-table thead th:nth-child(2) button');
  const heldAsc = order(all.rows, (r) => r.allocated_gpu_hours, false);
  check('held ascending: the smallest first (the API\'s rows sorted here)', await firstIs(label(heldAsc[0])), `${(await names())[0]} vs ${label(heldAsc[0])}`);
  shown = await names();
  check('held ascending: 100 rows in order', JSON.stringify(shown) === JSON.stringify(heldAsc.slice(0, 100).map(label)));
  check('held ascending: in the URL', /sort=held&dir=asc/.test(await page.evaluate(() => location.hash)));
  await page.click('#goodput-table thead th:nth-child(4) button');
  const gpDesc = order(all.rows, (r) => r.goodput ?? -1, true);
  check('goodput descending: the highest first', await firstIs(label(gpDesc[0])), `${(await names())[0]} vs ${label(gpDesc[0])}`);
  shown = await names();
  check('goodput descending: 100 rows in order, their goodput as the API\'s',
    JSON.stringify(shown) === JSON.stringify(gpDesc.slice(0, 100).map(label)) &&
    JSON.stringify(await page.$$eval('#goodput-table tbody tr td:nth-child(4)', (t) => t.map((x) => x.textContent))) === JSON.stringify(gpDesc.slice(0, 100).map((r) => pct(r.goodput))));

  // --- the next rows: Show 100 more adds exactly 100, the next 100 in order -------------------
  await page.click('#goodput-table-more');
  await page.waitForFunction(() => document.querySelectorAll('#goodput-table tbody tr').length === 200, null, { timeout: 20000 }).catch(() => {});
  shown = await names();
  check('Show 100 more: 200 rows, the next 100 in the same order', shown.length === 200 &&
    JSON.stringify(shown.slice(100)) === JSON.stringify(gpDesc.slice(100, 200).map(label)), `${shown.length}`);
  check('the count: Showing 200 of RUNS', (await page.textContent('#goodput-table-count')) === `Showing 200 of ${n(RUNS)}`);
  check('rows=200 in the URL', /[?&]rows=200(&|$)/.test(await page.evaluate(() => location.hash)));

  // --- By week (8) by run: each week's 100 most held, and how many more -----------------------
  await page.evaluate(() => { location.hash = '#/goodput?period=weeks&by=run'; });
  await page.waitForSelector('#weekly[data-by="run"]', { timeout: 20000 });
  const weeks = (await api('/goodput/weekly?weeks=8&by=run')).weeks;  // every row of every week
  const perWeek = await page.evaluate(() => [...document.querySelectorAll('#weekly-table tbody')].map((tb) => ({
    week: tb.querySelector('tr.week-total')?.dataset.week,
    rows: tb.querySelectorAll('tr.week-row').length,
    more: tb.querySelector('tr.week-more')?.textContent || '' })));
  const wantWeeks = weeks.map((w) => ({ week: w.week, rows: Math.min(100, w.rows.length),
    more: w.rows.length > 100 ? `${w.week}: and ${n(w.rows.length - 100)} more runs` : '' }));
  check('By week (8) by run: at most 100 rows a week, the rest counted as the API\'s', weeks.some((w) => w.rows.length > 100) &&
    JSON.stringify(perWeek.map((w) => [w.week, w.rows, w.more.split(' (')[0]])) === JSON.stringify(wantWeeks.map((w) => [w.week, w.rows, w.more])),
    `${JSON.stringify(perWeek)} vs ${JSON.stringify(wantWeeks)}`);

  // --- a run's page, from its row ---------------------------------------------------------------
  const top = gpDesc[0];
  await page.goBack();
  await ready('goodput');
  await page.waitForSelector('#goodput-table');
  check('Back: the view sorted by goodput with 200 rows again', await firstIs(label(top)) && (await names()).length === 200);
  await page.click(`#goodput-table tbody tr:first-child td.name a`);
  await ready('run');
  const runDoc = await api(`/runs/${encodeURIComponent(top.run)}?workspace=${top.workspace}`);
  const runGp = await api(`/runs/${encodeURIComponent(top.run)}/goodput?workspace=${top.workspace}`);
  check('a run\'s page: its name, state and goodput', (await page.textContent('#run-h')) === top.run &&
    (await page.textContent('#run-state')).includes(runDoc.state) &&
    (await page.textContent('#run-goodput')).startsWith(`Goodput ${pct(runGp.goodput)} · held ${gpuh(runGp.allocated_gpu_hours)} GPU-h`),
    `${await page.textContent('#run-h')} ${await page.textContent('#run-goodput')}`);

  // --- the Runs view: 100 of RUNS, goodput from the summaries, the next page ---------------------
  requests.length = 0;
  await page.evaluate(() => { location.hash = '#/runs'; });
  await ready('runs');
  const list = await api('/runs?limit=1000');
  const first100 = list.runs.slice(0, 100);
  check('runs: the API has RUNS runs', list.matches === RUNS, String(list.matches));
  check('runs: the caption and count say RUNS', (await page.textContent('#runs-table caption')).startsWith(`${n(RUNS)} runs`) &&
    (await page.textContent('#runs-table-count')) === `Showing 100 of ${n(RUNS)}`, await page.textContent('#runs-table caption'));
  const rowsShown = await page.$$eval('#runs-table tbody tr', (trs) => trs.map((tr) => [tr.querySelector('td.name').textContent,
    tr.querySelector('td[data-label="Workspace"]').textContent, tr.querySelector('td[data-label="Goodput"]').textContent]));
  const want = first100.map((r) => [r.name, r.workspace, pct(r.goodput)]);
  check('runs: the 100 newest, each with its goodput', rowsShown.length === 100 &&
    JSON.stringify(rowsShown.map((r) => r.join(' ')).sort()) === JSON.stringify(want.map((r) => r.join(' ')).sort()), JSON.stringify(rowsShown.slice(0, 2)));
  check('runs: every goodput shown is a figure (each summary has one)', rowsShown.every((r) => /^\d+%$/.test(r[2])));
  check('runs: no list of every run\'s goodput asked for', !requests.some((u) => u.startsWith('/v1/goodput?by=run')), requests.join(' '));
  await page.click('#runs-table thead th:nth-child(1) button');  // name ascending, the rows loaded
  const byNameShown = await page.$$eval('#runs-table tbody td.name', (t) => t.map((x) => x.textContent));
  check('runs: sorted by name in the page', JSON.stringify(byNameShown) === JSON.stringify([...byNameShown].sort((a, b) => a.localeCompare(b))) &&
    byNameShown.length === 100);
  await page.evaluate(() => { window.firstRows = [...document.querySelectorAll('#runs-table tbody tr')]; });
  await page.click('#runs-table-more');
  await page.waitForFunction(() => document.querySelectorAll('#runs-table tbody tr').length === 200, null, { timeout: 20000 }).catch(() => {});
  check('runs: the next page is added to the table on screen (the 100 rows drawn are kept, not made again)',
    await page.evaluate(() => { const now = new Set(document.querySelectorAll('#runs-table tbody tr')); return window.firstRows.every((tr) => now.has(tr)); }));
  check('runs: the URL says 2 pages', /[?&]pages=2\b/.test(await page.evaluate(() => location.hash)), await page.evaluate(() => location.hash));
  const next = await page.$$eval('#runs-table tbody td.name', (t) => t.map((x) => x.textContent));
  check('runs: Show 100 more adds exactly the next 100 of the API\'s list', next.length === 200 &&
    JSON.stringify([...next].sort()) === JSON.stringify(list.runs.slice(0, 200).map((r) => r.name).sort()), String(next.length));
  check('runs: the count says 200 of RUNS', (await page.textContent('#runs-table-count')) === `Showing 200 of ${n(RUNS)}`);
  await page.click('#runs-table-more');
  await page.waitForFunction(() => document.querySelectorAll('#runs-table tbody tr').length === 300, null, { timeout: 20000 }).catch(() => {});
  const third = await page.$$eval('#runs-table tbody td.name', (t) => t.map((x) => x.textContent));
  check('runs: a second Show 100 more adds the 100 after those, still sorted by name in the page',
    JSON.stringify([...third].sort()) === JSON.stringify(list.runs.slice(0, 300).map((r) => r.name).sort()) &&
    JSON.stringify(third) === JSON.stringify([...third].sort((a, b) => a.localeCompare(b))), String(third.length));
  await page.goBack();
  await page.waitForFunction(() => document.querySelectorAll('#runs-table tbody tr').length === 200, null, { timeout: 20000 }).catch(() => {});
  check('runs: Back shows the 2 pages again', (await page.$$('#runs-table tbody tr')).length === 200 &&
    (await page.textContent('#runs-table-count')) === `Showing 200 of ${n(RUNS)}`);

  // --- the Machines view and a machine's page ----------------------------------------------------
  await page.evaluate(() => { location.hash = '#/machines'; });
  await ready('machines');
  const machines = (await api('/machines')).machines;
  check('machines: MACHINES rows, all drawn', machines.length === MACHINES && (await page.$$('#machines-table tbody tr')).length === MACHINES,
    `${machines.length}`);
  const m = machines[0].name;
  await page.click(`#machines-table a[href="#/machine/${encodeURIComponent(m)}"]`);
  await ready('machine');
  const ran = await api(`/goodput?by=run&machine=${encodeURIComponent(m)}&days=7`);
  const ranRows = await page.$$eval('#machine-ran tbody tr', (trs) => trs.map((tr) => [tr.cells[0].textContent, tr.cells[1].textContent]));
  const ranWant = order(ran.rows, (r) => r.allocated_gpu_hours, true);
  check('a machine\'s page: its name and the runs held there (the first 100, most held first)', (await page.textContent('#machine-h')) === m &&
    ran.rows.length > 0 && ranRows.length === Math.min(100, ran.rows.length) &&
    JSON.stringify(ranRows.map((r) => r[1])) === JSON.stringify(ranWant.slice(0, 100).map((r) => gpuh(r.allocated_gpu_hours))),
    `${ranRows.length} of ${ran.rows.length}`);
  check('no page error', problems.length === 0, problems.join(' | '));
  await ctx.close();
} finally {
  await browser.close();
}
console.log(`web_pages_scale: ${passes} passed, ${fails} failed`);
process.exit(fails ? 1 : 0);
