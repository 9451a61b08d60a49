// Browser checks of the web pages (run by web_test.sh against a live `astraeus serve`): one
// Chromium for every check. Each check compares what the page shows with the REST API's answer
// for the same period and token, formatted the same way (GPU-hours to 0.1, goodput to 1%).
import { chromium } from 'playwright-core';
import { writeFileSync } from 'node:fs';
import { execFileSync, spawn } from 'node:child_process';
import { openSync } from 'node:fs';

const { BASE, OUT, CHROMIUM, XSS, ML, CV, ADMIN, OPERATOR, ASTRA } = process.env;
// The service under test, to stop and start it again under an open page (the live views' checks).
const { ASTRAEUS, WORK, SERVER_PID, SERVE_EXECUTOR } = process.env;
let fails = 0, passes = 0;
// Seconds spent in each part, printed at the end (where the test's time goes).
const t0 = Date.now(), laps = [];
let lapStart = t0;
const lap = (name) => { const now = Date.now(); laps.push(`${name} ${((now - lapStart) / 1000).toFixed(1)}`); lapStart = now; };
const check = (name, ok, detail = '') => {
  if (ok) passes++; else { fails++; console.log(`FAIL: ${name}${detail ? ` (${detail})` : ''}`); }
};
const api = async (token, path, init = {}) => {
  const r = await fetch(`${BASE}/v1${path}`, { ...init, headers: { Authorization: `Bearer ${token}` } });
  return r.json();
};
// GPU-hours to one decimal as `astra` prints them: the exact GPU-seconds, half away from zero.
const gpuh = (v) => { const t = Math.floor((Math.round((v ?? 0) * 3600) + 180) / 360); return `${Math.floor(t / 10)}.${t % 10}`; };
// `astra astraeus goodput ARGS...` (the CLI a user runs) for TOKEN: its table as
// {rows: {name: [HELD, USED, GOODPUT, IDLE, STALLED, START, RESTART, FAILURE, PREEMPT, WAITING]},
//  total: [...], note: the unmeasured note or ''}. A name may hold spaces: the cells are the
// last ten fields of a line.
const astraTable = (token, args) => {
  const out = execFileSync(ASTRA, ['astraeus', 'goodput', ...args],
    { env: { ...process.env, ASTRALYX_API: `${BASE}/v1`, ASTRALYX_TOKEN: token }, encoding: 'utf8' });
  const lines = out.split('\n');
  const head = lines.findIndex((l) => /\bHELD\s+USED\s+GOODPUT\b/.test(l));
  const rows = {};
  let total = null;
  for (const l of lines.slice(head + 1)) {
    if (!l.trim()) break;
    const cells = l.trim().split(/\s+/).slice(-10);
    const name = l.replace(/(\s+\S+){10}\s*$/, '');
    if (name === 'TOTAL') total = cells; else rows[name] = cells;
  }
  const note = (lines.find((l) => l.startsWith('utilization not measured')) || '').trim();
  return { rows, total, note, text: out };
};
const pct = (v) => (v === undefined ? '-' : `${Math.round(v * 100)}%`);

// --- HTTP: the assets' headers --------------------------------------------------------------
{
  const r = await fetch(`${BASE}/`);
  const csp = r.headers.get('content-security-policy') || '';
  check('/ is HTML', r.status === 200 && r.headers.get('content-type') === 'text/html; charset=utf-8');
  check('strict CSP: scripts from this origin only, no inline', /script-src 'self'(;|$)/.test(csp) && !csp.includes('unsafe') && csp.includes("default-src 'none'"), csp);
  check('no-cache + ETag', r.headers.get('cache-control') === 'no-cache' && /^"[0-9a-f]{16}"$/.test(r.headers.get('etag') || ''));
  const again = await fetch(`${BASE}/`, { headers: { 'If-None-Match': r.headers.get('etag') } });
  check('If-None-Match answers 304', again.status === 304);
  const js = await fetch(`${BASE}/assets/app.js`);
  check('JavaScript Content-Type', js.headers.get('content-type') === 'text/javascript; charset=utf-8');
  const css = await fetch(`${BASE}/assets/style.css`);
  check('CSS Content-Type', css.headers.get('content-type') === 'text/css; charset=utf-8');
  const missing = await fetch(`${BASE}/assets/nope.js`);
  check('unknown asset: 404', missing.status === 404);
  check('the API still needs a token', (await fetch(`${BASE}/v1/runs`)).status === 401);
}

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-default-apps', '--disable-sync', '--no-first-run',
    '--disable-extensions', '--mute-audio'],
});
const dialogs = [];
const problems = [];
async function newPage(width = 1280, height = 900, options = {}) {
  const ctx = await browser.newContext({ viewport: { width, height }, ...options });
  const page = await ctx.newPage();
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error' && !/401|404|ERR_CONNECTION_REFUSED/.test(m.text())) problems.push(`console: ${m.text()}`); });
  page.on('request', (r) => { if (!r.url().startsWith(BASE) && !r.url().startsWith('data:')) problems.push(`request to another host: ${r.url()}`); });
  return { ctx, page };
}
const ready = (page, view) => page.waitForSelector(`#view[data-ready="${view}"]`, { timeout: 10000 });
const go = async (page, hash, view) => {
  await page.evaluate((h) => { location.hash = h; }, hash);
  await ready(page, view);
};
// Pages open with ?refresh=0 (no automatic refresh: the figures a check compares stay still)
// unless a check opens another URL (the live views' checks).
async function signIn(page, token, url = `${BASE}/?refresh=0`) {
  await page.goto(url);
  await page.fill('#token', token);
  await page.press('#token', 'Enter');
}
const shot = (page, name) => page.screenshot({ path: `${OUT}/${name}.png`, fullPage: true });
const texts = (page, sel) => page.$$eval(sel, (els) => els.map((e) => e.textContent.trim()));

try {
  lap('headers+launch');
  // --- a bad token is refused -------------------------------------------------------------------
  {
    const { ctx, page } = await newPage();
    await signIn(page, 'astx_not-a-real-token');
    await page.waitForFunction(() => document.querySelector('#signin-error').textContent.length > 0);
    const msg = await page.textContent('#signin-error');
    check('bad token: refused with a clear message', /refused/.test(msg) && /invalid token/.test(msg), msg);
    check('bad token: nothing stored', (await page.evaluate(() => sessionStorage.length)) === 0);
    check('bad token: the views stay hidden', await page.isHidden('#nav'));
    await shot(page, 'signin-refused');
    await ctx.close();
  }

  lap('bad-token');
  // --- a workspace token (ml) -------------------------------------------------------------------
  {
    const { ctx, page } = await newPage();
    await signIn(page, ML);
    await ready(page, 'goodput');
    const storage = await page.evaluate(() => JSON.stringify([sessionStorage, localStorage, document.cookie]));
    check('the token is in no storage a script reads (sessionStorage, localStorage, document.cookie) nor the URL',
      !storage.includes(ML) && !storage.includes('asts_') && !page.url().includes(ML), storage);
    const cookies = await ctx.cookies();
    const sc = cookies.find((c) => c.name === 'astraeus_session');
    check('the session cookie: HttpOnly, SameSite=Strict, Path=/, expires in 12 h',
      sc && sc.httpOnly && sc.sameSite === 'Strict' && sc.path === '/' && Math.abs(sc.expires - (Date.now() / 1000 + 43200)) < 600,
      JSON.stringify(cookies.map((c) => ({ ...c, value: c.value.slice(0, 5) }))));
    // A second tab opened from a link (Ctrl+click on the Runs link) is signed in: the cookie is the
    // browser's, not the tab's.
    const [tab] = await Promise.all([ctx.waitForEvent('page'), page.click('#nav a[data-view="runs"]', { modifiers: ['Control'] })]);
    await ready(tab, 'runs');
    const tabRuns = await texts(tab, '#runs-table tbody td.name');
    check('a second tab opened from a link is signed in (ml\'s runs)', tabRuns.sort().join(',') === 'llm,sweep-7' &&
      await tab.isHidden('#signin'), tabRuns.join(','));
    await tab.close();
    const who = await page.textContent('#who');
    check('header: the cluster named like markup is text', who.includes(XSS), who);
    const attention = await texts(page, '#attention-list li');
    check('goodput: stalled workers listed first', attention.some((t) => t.startsWith('Stalled: ml/llm')), JSON.stringify(attention));
    const names = await texts(page, '#goodput-table tbody td.name');
    check('goodput by run: ml sees its own runs only', names.sort().join(',') === 'llm,sweep-7', names.join(','));
    await shot(page, 'goodput');

    await go(page, '#/runs', 'runs');
    const heads = await texts(page, '#runs-table thead th');
    check('runs: no workspace column for a workspace token', !heads.includes('Workspace') && heads.includes('Pool'), heads.join('|'));
    const runNames = await texts(page, '#runs-table tbody td.name');
    check('runs: ml sees its two runs only', runNames.sort().join(',') === 'llm,sweep-7', runNames.join(','));
    // A stalled run is not a green "running": the page says stalled, as GET /v1/stalls does.
    const badges = await page.$$eval('#runs-table tbody tr', (trs) => trs.map((tr) =>
      [tr.querySelector('td.name').textContent, tr.querySelector('.state').className, tr.querySelector('.state').textContent]));
    const llmBadge = badges.find((b) => b[0] === 'llm');
    const stallsNow = await api(ML, '/stalls');
    check('runs: the stalled run shows "running · stalled", not running',
      stallsNow.stalled.some((st) => st.run === 'llm') && llmBadge && llmBadge[1] === 'state state-stalled' && llmBadge[2] === 'running · stalled',
      JSON.stringify(badges));
    const cells = await texts(page, '#runs-table tbody td');
    check('runs: the pool named like markup is shown as text', cells.includes(XSS));
    check('runs: no element was made from a name', (await page.$$('#view img')).length === 0);
    await shot(page, 'runs');

    const before = await api(ML, '/runs/llm/goodput');
    await go(page, '#/run/ml/llm', 'run');
    const after = await api(ML, '/runs/llm/goodput');
    const facts = await texts(page, '.facts dd');
    check('run page: the command is shown as text', facts.some((f) => f.includes(XSS)), facts.join('|'));
    check('run page: state running, marked stalled', /running · stalled/.test(await page.textContent('#run-state')));
    const workers = await texts(page, '#workers-table tbody tr');
    check('run page: two workers on their machines', workers.length === 2 && workers.every((w) => /default-[12]/.test(w)), workers.join('|'));
    check('run page: stalled workers flagged', workers.every((w) => w.includes('stalled')));
    const attempts = await texts(page, '#attempt-list li');
    check('run page: attempt 1 on the timeline', attempts.length >= 1 && attempts[0].startsWith('Attempt 1: placed'), attempts.join('|'));
    check('run page: stop offered to its owner', await page.isVisible('#stop'));
    // The run is live: what the page shows lies between the API's answers just before and after.
    const line = await page.textContent('#run-goodput');
    const held = Number(/held ([0-9.]+) GPU-h/.exec(line)?.[1]);
    check('run page: held GPU time as the API (between its answers before and after)',
      held >= Number(gpuh(before.allocated_gpu_hours)) && held <= Number(gpuh(after.allocated_gpu_hours)),
      `${line} vs ${before.allocated_gpu_hours}..${after.allocated_gpu_hours}`);
    await shot(page, 'run');

    await go(page, '#/run/cv/vision', 'run');
    check('run page: another workspace\'s run is not found', /no run named/.test(await page.textContent('#view')));

    await go(page, '#/fairness', 'fairness');
    const fws = await texts(page, '.fair-table tbody td.name');
    check('fairness: ml sees its own workspace only', fws.length === 2 && fws.every((w) => w === 'ml'), fws.join(','));

    // Keyboard: a view reached from the top bar gets the focus on its heading; the sort buttons
    // work with Enter.
    await page.focus('#nav a[data-view="goodput"]');
    await page.keyboard.press('Enter');
    await ready(page, 'goodput');
    const onHeading = await page.waitForFunction(() => document.activeElement && document.activeElement.id === 'goodput-h',
      null, { timeout: 5000 }).then(() => true, () => false);
    check('keyboard: the top bar link opens the view, focus on its heading', onHeading);
    await page.focus('#goodput-table thead th:nth-child(1) button');
    await page.keyboard.press('Enter');
    check('keyboard: Enter on a column header sorts it', (await page.getAttribute('#goodput-table thead th:nth-child(1)', 'aria-sort')) === 'ascending');
    await page.click('#signout');
    await page.waitForSelector('#signin', { state: 'visible', timeout: 10000 });
    const ended = await fetch(`${BASE}/v1/whoami`, { headers: { Cookie: `astraeus_session=${sc && sc.value}` } });
    check('sign-out: the form is back, the cookie gone, and the session ended on the server (401 when sent again)',
      !(await ctx.cookies()).some((c) => c.name === 'astraeus_session') && ended.status === 401);
    await ctx.close();
  }

  lap('ml');
  // --- cv stops its waiting run from its page; an operator sees all and cannot stop ----------------
  {
    const { ctx, page } = await newPage();
    await signIn(page, CV);
    await ready(page, 'goodput');
    // A pending run's page: why it waits, its place in its pool's order and its estimated start,
    // as the API's answers just before and after (the estimate moves later as llm runs longer).
    {
      const before = await api(CV, '/runs/vision');
      await go(page, '#/run/cv/vision', 'run');
      const after = await api(CV, '/runs/vision');
      const shown = await page.$eval('#run-pending', (e) => ({ position: e.dataset.position, eta: e.dataset.estimatedStart,
        reason: document.querySelector('#run-reason').textContent, pos: document.querySelector('#run-position').textContent,
        etaText: document.querySelector('#run-eta').textContent }));
      const detail = JSON.stringify({ shown, before, after });
      check('pending run page: pending with a position (1 in pool default), as the API', before.state === 'pending' && after.state === 'pending' &&
        [before.position, after.position].includes(Number(shown.position)) && shown.pos === `${shown.position} in pool default`, detail);
      check('pending run page: the scheduler\'s reason, as the API', [before.reason, after.reason].includes(shown.reason) && shown.reason.length > 0, detail);
      const t = (v) => Date.parse(v);
      check('pending run page: the estimated start, as the API (between its answers)', before.estimated_start && after.estimated_start && shown.eta &&
        t(shown.eta) >= t(before.estimated_start) && t(shown.eta) <= t(after.estimated_start) &&
        shown.etaText.startsWith(shown.eta.replace('T', ' ').replace(/:\d\dZ$/, 'Z')), detail);
      await shot(page, 'run-pending');
    }
    await go(page, '#/run/cv/tiny', 'run');
    await page.click('#stop');
    await page.click('#stop-confirm');
    await page.waitForFunction(() => /stopped/.test(document.querySelector('#run-state')?.textContent || ''), null, { timeout: 10000 });
    check('stop: the owner stopped its run from its page (pending, or placed once the test ran slowly: the page follows stopping to stopped)', (await api(CV, '/runs/tiny')).state === 'stopped');
    check('stop: no stop button once it ended', !(await page.isVisible('#stop')));
    await ctx.close();
  }
  {
    const { ctx, page } = await newPage();
    await signIn(page, OPERATOR);
    await ready(page, 'goodput');
    const items = await texts(page, '#attention-list li');
    check('operator: the firing threshold alert listed first', items.some((t) => t.startsWith('Alert firing: workers_stalled')), items.join('|'));
    await shot(page, 'goodput-operator');
    await go(page, '#/runs', 'runs');
    check('operator: the workspace column and all four runs', (await texts(page, '#runs-table thead th')).includes('Workspace') &&
      (await texts(page, '#runs-table tbody td.name')).length === 4);
    await go(page, '#/run/ml/llm', 'run');
    check('operator: no stop on another\'s run (operators cannot stop)', !(await page.isVisible('#stop')));
    await ctx.close();
  }

  lap('cv+operator');
  // --- an org admin sees every workspace ----------------------------------------------------------
  const { ctx, page } = await newPage();
  await signIn(page, ADMIN);
  await ready(page, 'goodput');
  await go(page, '#/runs', 'runs');
  const heads = await texts(page, '#runs-table thead th');
  check('runs: workspace column for an org admin', heads.includes('Workspace'));
  const all = await texts(page, '#runs-table tbody td.name');
  check('runs: the admin sees all four runs', all.sort().join(',') === 'llm,sweep-7,tiny,vision', all.join(','));
  await page.selectOption('#filter-workspace', 'cv');
  await ready(page, 'runs');
  const cvRuns = await texts(page, '#runs-table tbody td.name');
  check('runs: the workspace filter', cvRuns.sort().join(',') === 'tiny,vision', cvRuns.join(','));
  await page.selectOption('#filter-workspace', '');
  await ready(page, 'runs');
  await shot(page, 'runs-admin');

  const fairBefore = await api(ADMIN, '/fairness');
  await go(page, '#/fairness', 'fairness');
  const fws = await texts(page, '.fair-table tbody td.name');
  check('fairness: the admin sees both workspaces in both pools', fws.sort().join(',') === 'cv,cv,ml,ml', fws.join(','));
  const pending = await texts(page, '#pending-list li');
  check('fairness: why a pending run waits', pending.some((p) => p.startsWith('cv/vision') && /waiting for quota|no placement/.test(p)), pending.join('|'));
  // Live figures: the page's lie between the API's answers just before and after it.
  const fairAfter = await api(ADMIN, '/fairness');
  const mlOf = (doc) => doc.pools.find((p) => p.pool === 'default').workspaces.find((w) => w.workspace === 'ml');
  const rowText = await page.$eval('.fair-table tbody tr', (tr) => [...tr.cells].map((c) => c.textContent));
  const between = (v, key) => Number(v) >= Number(gpuh(mlOf(fairBefore)[key])) && Number(v) <= Number(gpuh(mlOf(fairAfter)[key]));
  check('fairness: received and deserved GPU-h as the API', rowText[0] === 'ml' && between(rowText[4], 'received_gpu_hours') &&
    between(rowText[5], 'deserved_gpu_hours') && Number(rowText[4]) > 0,
    `${rowText.join('|')} vs ${mlOf(fairBefore).received_gpu_hours}..${mlOf(fairAfter).received_gpu_hours}`);
  const cvText = await page.$eval('.fair-table tbody tr:nth-child(2)', (tr) => [...tr.cells].map((c) => c.textContent));
  check('fairness: cv, waiting for its share, deserved GPU time it did not receive',
    cvText[0] === 'cv' && Number(cvText[4]) === 0 && Number(cvText[5]) > 0, cvText.join('|'));
  await shot(page, 'fairness');

  // --- ml stops its running run from its page: the page follows stopping (the workers' 180
  // service seconds, 3 s here) to stopped by itself ----------------------------------------------
  {
    // (sweep-7 may be between attempts: its pool's lease end can preempt it for cv's tiny, which
    // cv stopped above; wait until it runs again.)
    for (let k = 0; k < 100 && (await api(ML, '/runs/sweep-7')).state !== 'running'; k++)
      await new Promise((r) => setTimeout(r, 200));
    const { ctx, page: mine } = await newPage();
    await signIn(mine, ML);
    await ready(mine, 'goodput');
    await go(mine, `#/run/ml/sweep-7`, 'run');
    const stateNow = async () => (await mine.textContent('#run-state')) || '';
    check('stop a running run: it is running before', /running/.test(await stateNow()), await stateNow());
    await mine.click('#stop');
    await mine.click('#stop-confirm');
    const sawStopping = await mine.waitForFunction(() => /stopping/.test(document.querySelector('#run-state')?.textContent || ''),
      null, { timeout: 5000 }).then(() => true, () => false);
    check('stop a running run: the page shows stopping', sawStopping, await stateNow());
    const sawStopped = await mine.waitForFunction(() => /stopped/.test(document.querySelector('#run-state')?.textContent || ''),
      null, { timeout: 15000 }).then(() => true, () => false);
    check('stop a running run: the page shows stopped without a reload', sawStopped && (await api(ML, '/runs/sweep-7')).state === 'stopped',
      await stateNow());
    await ctx.close();
  }

  lap('admin+stop');
  // --- numbers equal the API's: stop every run first, so the ledgers are still ----------------------
  for (const [ws, run] of [['ml', 'llm'], ['ml', 'sweep-7'], ['cv', 'vision'], ['cv', 'tiny']])
    await fetch(`${BASE}/v1/runs/${run}/stop?workspace=${ws}`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Length': '0' } });
  for (let k = 0; k < 50; k++) {
    const runs = (await api(ADMIN, '/runs')).runs;
    if (runs.every((r) => r.state === 'stopped')) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  for (const [by, period] of [['pool', '7d'], ['workspace', '1d'], ['run', '7d'], ['machine', '1d']]) {
    await go(page, '#/goodput', 'goodput');
    await page.check(`input[name=period][value="${period}"]`);
    await page.selectOption('#by', by);
    await page.waitForSelector(`#period[data-by="${by}"]`);
    const start = await page.getAttribute('#period', 'data-start');
    const end = await page.getAttribute('#period', 'data-end');
    const doc = await api(ADMIN, `/goodput?by=${by}&start=${start}&end=${end}`);
    const t = doc.total;
    const card = async (id) => (await page.textContent(`#${id}`)).trim();
    check(`goodput ${by} ${period}: goodput as the API`, (await card('sum-goodput')) === pct(t.goodput));
    check(`goodput ${by} ${period}: held as the API`, (await card('sum-held')) === `${gpuh(t.allocated_gpu_hours)} GPU-h`);
    check(`goodput ${by} ${period}: productive as the API (within the tenth its largest-remainder rounding may move)`,
      Math.abs(parseFloat(await card('sum-productive')) - t.productive_gpu_hours) <= 0.1 + 1e-9);
    check(`goodput ${by} ${period}: not productive as the API`, (await card('sum-notproductive')) === `${gpuh(t.allocated_gpu_hours - t.productive_gpu_hours)} GPU-h`);
    check(`goodput ${by} ${period}: waiting as the API`, (await card('sum-waiting')) === `${gpuh(t.waiting_gpu_hours)} GPU-h`);
    const note = (await page.$('#unmeasured')) ? (await page.textContent('#unmeasured')).trim() : '';
    check(`goodput ${by} ${period}: the unmeasured note as the API (${t.unmeasured_gpu_hours ?? 0})`,
      note === (gpuh(t.unmeasured_gpu_hours || 0) !== '0.0' ? `utilization not measured for ${gpuh(t.unmeasured_gpu_hours)} GPU-h (counted idle)` : ''), note);
    const rows = await page.$$eval('#goodput-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    check(`goodput ${by} ${period}: one row per API row`, rows.length === doc.rows.length, `${rows.length} vs ${doc.rows.length}`);
    for (const r of doc.rows) {
      const name = by === 'run' ? r.run : r[by];
      const shown = rows.find((x) => x[0] === name || x[0] === `${r.workspace}/${r.run}`);
      // One meaning per column, as the CLI's: held parts, and WAITING every not-held part. Held,
      // goodput and waiting exactly as the API's; the held columns, rounded to add up to Held
      // (largest remainder, as astra), within a tenth of the API's value.
      const want = [gpuh(r.allocated_gpu_hours), pct(r.goodput), gpuh(r.waiting_gpu_hours)];
      check(`goodput ${by} ${period}: row ${name}: held, goodput, waiting as the API`,
        shown && JSON.stringify([shown[1], shown[3], shown[10]]) === JSON.stringify(want), `${JSON.stringify(shown)} vs ${JSON.stringify(want)}`);
      const api7 = ['productive', 'idle', 'stalled', 'starting', 'restart', 'failure', 'preemption'].map((c) => r.held_gpu_hours[c] ?? 0);
      check(`goodput ${by} ${period}: row ${name}: each held column within 0.1 of the API's`,
        shown && [2, 4, 5, 6, 7, 8, 9].every((i, k) => Math.abs(Number(shown[i]) - api7[k]) <= 0.1 + 1e-9),
        `${JSON.stringify(shown)} vs ${JSON.stringify(api7)}`);
      const heldCols = shown ? [2, 4, 5, 6, 7, 8, 9].reduce((a, i) => a + Number(shown[i]), 0) : NaN;
      check(`goodput ${by} ${period}: row ${name}: held = the sum of its held columns, as in astra`,
        Math.abs(heldCols - Number(shown?.[1])) < 0.05, `${heldCols} vs ${shown?.[1]}`);
    }
    // The same period through `astra` (the CLI): every row, column by column, as the page shows
    // it (the same digits, the same meaning: held parts, WAITING every not-held part), its
    // TOTAL as the cards, the same unmeasured note.
    const cli = astraTable(ADMIN, ['--by', by, '--start', start, '--end', end]);
    check(`goodput ${by} ${period}: astra has as many rows as the page`, Object.keys(cli.rows).length === rows.length,
      `${Object.keys(cli.rows).length} vs ${rows.length}\n${cli.text}`);
    for (const shown of rows) {
      const mine = cli.rows[shown[0]];
      check(`goodput ${by} ${period}: row ${shown[0]}: the page's columns are astra's`,
        mine && JSON.stringify(shown.slice(1, 11)) === JSON.stringify(mine), `page ${JSON.stringify(shown.slice(1, 11))} vs astra ${JSON.stringify(mine)}`);
    }
    check(`goodput ${by} ${period}: the cards are astra's TOTAL (held, used, goodput, waiting)`,
      cli.total && (await card('sum-held')) === `${cli.total[0]} GPU-h` && (await card('sum-productive')) === `${cli.total[1]} GPU-h` &&
      (await card('sum-goodput')) === cli.total[2] && (await card('sum-waiting')) === `${cli.total[9]} GPU-h`,
      `${JSON.stringify(cli.total)} vs ${await card('sum-held')} ${await card('sum-productive')} ${await card('sum-goodput')} ${await card('sum-waiting')}`);
    check(`goodput ${by} ${period}: the unmeasured note is astra's`, note === cli.note, `${note} vs ${cli.note}`);
    const widths = await page.$$eval('#goodput-table .bar-inner', (els) => els.map((e) => e.style.width));
    check(`goodput ${by} ${period}: every bar is scaled to its own row's total`,
      widths.length === doc.rows.length && widths.every((w) => w === '100%' || w === '0%'), widths.join(','));
    if (by === 'pool') {
      check('goodput: the pool named like markup is text', rows.some((x) => x[0] === XSS));
      check('goodput: the held time is not zero', t.allocated_gpu_hours > 0);
    }
  }
  // By week (8): each week's total as the API's.
  await page.check('input[name=period][value="weeks"]');
  await page.selectOption('#by', 'pool');
  await page.waitForSelector('#weekly[data-by="pool"]');
  const weekly = await api(ADMIN, '/goodput/weekly?weeks=8&by=pool');
  const wrows = await page.$$eval('#weekly-table tbody tr.week-total', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  check('by week: 9 weeks (8 complete + this one)', wrows.length === 9 && weekly.weeks.length === 9);
  check('by week: totals as the API', weekly.weeks.every((w, i) => wrows[i] && wrows[i][2] === gpuh(w.total.allocated_gpu_hours) &&
    Math.abs(Number(wrows[i][3]) - w.total.productive_gpu_hours) <= 0.1 + 1e-9 && wrows[i][4] === pct(w.total.goodput)), JSON.stringify(wrows.at(-1)));
  // A row and a bar per pool per week, as the API's rows (and `astra astraeus goodput --weeks 8 --by pool`).
  const perWeek = await page.$$eval('#weekly-table tbody tr.week-row', (trs) => trs.map((tr) => ({
    week: tr.dataset.week, name: tr.cells[1].querySelector('a').getAttribute('title'), held: tr.cells[2].textContent,
    goodput: tr.cells[4].textContent, bar: !!tr.querySelector('.bar') })));
  const wantWeek = weekly.weeks.flatMap((w) => w.rows.map((r) => ({ week: w.week, name: r.pool, held: gpuh(r.allocated_gpu_hours), goodput: pct(r.goodput), bar: true })));
  const key = (x) => JSON.stringify([x.week, x.name, x.held, x.goodput, x.bar]);
  check('by week: a row and a bar per pool per week, as the API', wantWeek.length >= 2 &&
    JSON.stringify(perWeek.map(key).sort()) === JSON.stringify(wantWeek.map(key).sort()), `${JSON.stringify(perWeek)} vs ${JSON.stringify(wantWeek)}`);
  const partial = await page.$$eval('#weekly-table tr[data-partial="true"]', (trs) => trs.map((tr) => tr.dataset.week));
  check('by week: the current week (the last) is marked partial, and only it', JSON.stringify(partial) === JSON.stringify([weekly.weeks.at(-1).week]) &&
    (await page.textContent('#weekly-table tr[data-partial="true"] td:first-child')).includes('partial') &&
    (await page.textContent('#partial-note')).includes(weekly.weeks.at(-1).week), JSON.stringify(partial));
  await shot(page, 'goodput-weeks');
  // Axis ticks at 1, 2 or 5 x 10^k (by hand: max 4,796 -> step 2,000; 0.9 -> 0.5; 2,398 -> 1,000).
  const nice = await page.evaluate(async () => {
    const m = await import('/assets/goodput.js');
    return [m.niceTicks(4796), m.niceTicks(0.9), m.niceTicks(2398)];
  });
  check('chart ticks: round steps', JSON.stringify(nice) === '[[0,2000,4000,6000],[0,0.5,1],[0,1000,2000,3000]]', JSON.stringify(nice));
  const axis = await page.$$eval('#weekly svg text.tick[text-anchor="end"]', (ts) => ts.map((t) => Number(t.textContent)));
  const d = axis[1] - axis[0], mant = d / 10 ** Math.floor(Math.log10(d));
  check('by week: the axis starts at 0 in equal round steps up to the tallest week',
    axis[0] === 0 && axis.every((v, i) => i === 0 || Math.abs(v - axis[i - 1] - d) < 1e-9 * d) &&
    [1, 2, 5].some((k) => Math.abs(mant - k) < 1e-9) &&
    axis.at(-1) >= Math.max(...weekly.weeks.map((w) => w.total.allocated_gpu_hours)) - 1e-9, JSON.stringify(axis));
  // A custom range over 400 days is refused before any call.
  await page.check('input[name=period][value="custom"]');
  await page.fill('#from', '2025-01-01');
  await page.fill('#to', '2026-11-30');
  await page.click('.custom button[type=submit]');
  check('custom range: over 400 days refused', /at most 400 days/.test(await page.textContent('#range-error')));
  // A custom range of three UTC days ending today (the service's today): as the API's.
  const today = (await api(ADMIN, '/goodput?days=1')).end.slice(0, 10);
  const from = new Date(Date.parse(today) - 2 * 86400000).toISOString().slice(0, 10);
  await page.selectOption('#by', 'workspace');
  await page.fill('#from', from);
  await page.fill('#to', today);
  await page.click('.custom button[type=submit]');
  await page.waitForSelector(`#period[data-by="workspace"][data-start="${from}T00:00:00Z"]`);
  const cend = await page.getAttribute('#period', 'data-end');
  const cdoc = await api(ADMIN, `/goodput?by=workspace&start=${from}T00:00:00Z&end=${cend}`);
  check('custom range: three whole days', Date.parse(cend) - Date.parse(`${from}T00:00:00Z`) === 3 * 86400000, cend);
  check('custom range: held as the API', (await page.textContent('#sum-held')).trim() === `${gpuh(cdoc.total.allocated_gpu_hours)} GPU-h` &&
    cdoc.total.allocated_gpu_hours > 0);
  const cws = await texts(page, '#goodput-table tbody td.name');
  check('custom range: a row per workspace for the admin', cws.sort().join(',') === 'cv,ml', cws.join(','));
  await ctx.close();

  lap('numbers');
  // --- 1280 px and a narrow screen ------------------------------------------------------------------
  for (const [w, name] of [[1280, null], [390, 'goodput-narrow']]) {
    const { ctx: c2, page: p2 } = await newPage(w, 800);
    await signIn(p2, ML);
    await ready(p2, 'goodput');
    const overflow = await p2.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(`${w} px: no horizontal scrolling of the page`, overflow <= 0, `${overflow} px too wide`);
    if (name) await shot(p2, name);
    await c2.close();
  }

  lap('widths');
  // --- a URL reopens the same view: period, rows by, sort and filters (every run has stopped) -----
  {
    const { ctx: c4, page: p4 } = await newPage();
    await signIn(p4, ADMIN, `${BASE}/?refresh=0#/goodput?period=1d&by=pool&sort=goodput&dir=asc`);
    await p4.waitForSelector('#period[data-by="pool"]');
    const doc = await api(ADMIN, `/goodput?by=pool&start=${await p4.getAttribute('#period', 'data-start')}&end=${await p4.getAttribute('#period', 'data-end')}`);
    const shownRows = await p4.$$eval('#goodput-table tbody tr', (trs) => trs.map((tr) => [tr.cells[0].textContent, tr.cells[3].textContent]));
    const want = [...doc.rows].sort((a, b) => (a.goodput ?? -1) - (b.goodput ?? -1)).map((r) => [r.pool, pct(r.goodput)]);
    check('URL: the period (last 24 h) and rows by pool reopen', await p4.isChecked('input[name=period][value="1d"]') &&
      (await p4.inputValue('#by')) === 'pool' && Date.parse(doc.end) - Date.parse(doc.start) === 86400000, doc.start);
    check('URL: sorted by goodput, ascending, as the API\'s rows', (await p4.getAttribute('#goodput-table thead th:nth-child(4)', 'aria-sort')) === 'ascending' &&
      JSON.stringify(shownRows.map((r) => r[1])) === JSON.stringify(want.map((r) => r[1])) && shownRows.length === 2 &&
      JSON.stringify(shownRows.map((r) => r[0]).sort()) === JSON.stringify(want.map((r) => r[0]).sort()), `${JSON.stringify(shownRows)} vs ${JSON.stringify(want)}`);
    // Changed in the page, kept in the URL, reopened by a reload.
    await go(p4, '#/runs?state=stopped&workspace=cv', 'runs');
    check('URL: the filters reopen (state stopped, workspace cv)', (await p4.inputValue('#filter-state')) === 'stopped' &&
      (await p4.inputValue('#filter-workspace')) === 'cv' && (await texts(p4, '#runs-table tbody td.name')).sort().join(',') === 'tiny,vision');
    await p4.click('#runs-table thead th:nth-child(1) button');
    await p4.click('#runs-table thead th:nth-child(1) button');
    await p4.selectOption('#filter-pool', 'default');
    await ready(p4, 'runs');
    const hash = await p4.evaluate(() => location.hash);
    check('URL: a sort and a filter chosen in the page are in the URL', /[?&]sort=name(&|$)/.test(hash) && /[?&]dir=desc(&|$)/.test(hash) &&
      /[?&]pool=default(&|$)/.test(hash) && /[?&]state=stopped(&|$)/.test(hash), hash);
    await p4.reload();
    await ready(p4, 'runs');
    check('URL: a reload reopens the same view (filters, sort by name descending)', (await p4.inputValue('#filter-pool')) === 'default' &&
      (await p4.inputValue('#filter-state')) === 'stopped' && (await p4.getAttribute('#runs-table thead th:nth-child(1)', 'aria-sort')) === 'descending' &&
      (await texts(p4, '#runs-table tbody td.name')).join(',') === 'vision', (await texts(p4, '#runs-table tbody td.name')).join(','));
    await c4.close();
  }

  lap('url');
  // --- drill-down: machine pages, and links from every run, worker, machine, pool, workspace -------
  {
    const { ctx: c6, page: p6 } = await newPage();
    await signIn(p6, ADMIN, `${BASE}/?refresh=0#/goodput?period=7d&by=machine`);
    await p6.waitForSelector('#period[data-by="machine"]');
    const mdoc = await api(ADMIN, '/goodput?by=machine&days=7');
    const mlinks = await p6.$$eval('#goodput-table tbody td.name a', (as) => as.map((a) => [a.textContent, a.getAttribute('href')]));
    check('drill-down: each machine row links to its page', mlinks.length === mdoc.rows.length && mlinks.length >= 2 &&
      mdoc.rows.every((r) => mlinks.some(([t, href]) => t === r.machine && href === `#/machine/${encodeURIComponent(r.machine)}`)), JSON.stringify(mlinks));
    const machines = (await api(ADMIN, '/machines')).machines;
    const mname = mdoc.rows[0].machine;
    await p6.click(`#goodput-table tbody td.name a[href="#/machine/${encodeURIComponent(mname)}"]`);
    await ready(p6, 'machine');
    const mm = machines.find((m) => m.name === mname);
    const mrow = mdoc.rows[0];
    check('machine page: its name, GPUs and state as GET /v1/machines', (await p6.textContent('#machine-h')) === mname &&
      (await p6.textContent('#machine-gpus')) === `${mm.gpus_used} of ${mm.gpus} in use` && (await p6.textContent('#machine-state')) === mm.state &&
      (await p6.textContent('#machine-drained')).startsWith(mm.drained ? 'yes' : 'no'), `${mname}: ${JSON.stringify(mm)}`);
    check('machine page: its goodput and held over 7 days as the API, with a bar', (await p6.textContent('#machine-goodput'))
      .startsWith(`Goodput ${pct(mrow.goodput)} · held ${gpuh(mrow.allocated_gpu_hours)} GPU-h`) && (await p6.$$('.view > .bar')).length === 1,
      await p6.textContent('#machine-goodput'));
    const mweeks = await api(ADMIN, '/goodput/weekly?weeks=8&by=machine');
    const shownWeeks = await p6.$$eval('#machine-weeks tbody tr', (trs) => trs.map((tr) => [tr.cells[1].textContent, tr.dataset.partial || '']));
    check('machine page: 9 weeks, its held GPU-h each week as the API, this week partial', JSON.stringify(shownWeeks) === JSON.stringify(
      mweeks.weeks.map((w, i) => [gpuh(w.rows.find((r) => r.machine === mname)?.allocated_gpu_hours), i === 8 ? 'true' : ''])), JSON.stringify(shownWeeks));
    // What ran there: each run's time on the machine; together, the machine's own row (by hand: the sum).
    const ran = await api(ADMIN, `/goodput?by=run&days=7&machine=${encodeURIComponent(mname)}`);
    const ranShown = await p6.$$eval('#machine-ran tbody tr', (trs) => trs.map((tr) => [tr.cells[0].querySelector('a').getAttribute('title'), tr.cells[1].textContent]));
    const ranSum = ran.rows.reduce((a, r) => a + r.allocated_gpu_hours, 0);
    check('machine page: what ran there (7 days), each run\'s time there as the API', ran.rows.length >= 1 &&
      JSON.stringify(ranShown.sort()) === JSON.stringify(ran.rows.map((r) => [`${r.workspace}/${r.run}`, gpuh(r.allocated_gpu_hours)]).sort()), JSON.stringify(ranShown));
    check('API: the runs\' time on the machine adds up to its row (7 days)', Math.abs(ranSum - mrow.allocated_gpu_hours) < 1e-6 &&
      ran.machine === mname, `${ranSum} vs ${mrow.allocated_gpu_hours}`);
    const badBy = await fetch(`${BASE}/v1/goodput?by=pool&machine=${encodeURIComponent(mname)}`, { headers: { Authorization: `Bearer ${ADMIN}` } });
    check('API: machine= with by=pool is a 400 naming by=run', badBy.status === 400 && /by=run/.test((await badBy.json()).error));
    await shot(p6, 'machine');
    // The run page: each worker's machine links to its page; its pool and workspace to the runs filtered.
    await go(p6, '#/run/ml/llm', 'run');
    const att = await api(ADMIN, '/runs/llm/attempts?workspace=ml');
    const wl = await p6.$$eval('#workers-table tbody tr', (trs) => trs.map((tr) => tr.cells[2].querySelector('a')?.getAttribute('href') || tr.cells[2].textContent));
    check('run page: each worker links to its machine', wl.length === att.workers.length &&
      att.workers.every((w, i) => (w.machine ? wl[i] === `#/machine/${encodeURIComponent(w.machine)}` : wl[i] === '-')), JSON.stringify(wl));
    await p6.click('.facts a[href="#/runs?pool=default"]');
    await ready(p6, 'runs');
    const inPool = (await api(ADMIN, '/runs?pool=default')).runs.map((r) => r.name).sort().join(',');
    check('run page -> its pool: the runs filtered by pool, as the API', (await p6.inputValue('#filter-pool')) === 'default' &&
      (await texts(p6, '#runs-table tbody td.name')).sort().join(',') === inPool, inPool);
    const wsLinks = await p6.$$eval('#runs-table tbody td.ref a', (as) => as.map((a) => a.getAttribute('href')));
    check('runs: workspace and pool cells link to the filtered runs', wsLinks.includes('#/runs?workspace=ml') && wsLinks.includes('#/runs?workspace=cv') &&
      wsLinks.includes('#/runs?pool=default'), JSON.stringify(wsLinks));
    await go(p6, '#/goodput?period=7d&by=pool', 'goodput');
    await p6.waitForSelector('#period[data-by="pool"]');
    const plinks = await p6.$$eval('#goodput-table tbody td.name a', (as) => as.map((a) => a.getAttribute('href')));
    check('drill-down: pool rows link to the runs of the pool (the name like markup encoded)', plinks.includes(`#/runs?pool=${encodeURIComponent(XSS)}`) &&
      plinks.includes('#/runs?pool=default'), JSON.stringify(plinks));
    await p6.click(`#goodput-table a[href="#/runs?pool=${encodeURIComponent(XSS)}"]`);
    await ready(p6, 'runs');
    check('drill-down: the oddly named pool\'s runs', (await p6.inputValue('#filter-pool')) === XSS &&
      (await texts(p6, '#runs-table tbody td.name')).sort().join(',') === 'sweep-7,tiny');
    await go(p6, '#/machines', 'machines');
    const listed = await texts(p6, '#machines-table tbody td.name');
    check('machines view: every machine of GET /v1/machines', listed.sort().join(',') === machines.map((m) => m.name).sort().join(','), listed.join(','));
    await c6.close();
    // An operator drains a machine from its page and takes it back (no run holds GPUs now).
    const { ctx: c7, page: p7 } = await newPage();
    await signIn(p7, OPERATOR, `${BASE}/?refresh=0#/machine/${encodeURIComponent(mname)}`);
    await ready(p7, 'machine');
    await p7.click('#drain');
    await p7.click('#drain-confirm');
    const drained = await p7.waitForFunction(() => /^yes/.test(document.querySelector('#machine-drained')?.textContent || ''), null, { timeout: 10000 }).then(() => true, () => false);
    check('machine page: an operator drains it (the API says drained)', drained && (await api(OPERATOR, '/machines')).machines.find((m) => m.name === mname).drained === true);
    await p7.click('#drain');
    await p7.click('#drain-confirm');
    const back = await p7.waitForFunction(() => /^no/.test(document.querySelector('#machine-drained')?.textContent || ''), null, { timeout: 10000 }).then(() => true, () => false);
    check('machine page: and undrains it', back && (await api(OPERATOR, '/machines')).machines.find((m) => m.name === mname).drained === false);
    await c7.close();
    // A workspace token: no drain, no machine list; its own time on the machine.
    const { ctx: c8, page: p8 } = await newPage();
    await signIn(p8, ML, `${BASE}/?refresh=0#/machine/${encodeURIComponent(mname)}`);
    await ready(p8, 'machine');
    check('machine page: a workspace token gets no drain button', !(await p8.isVisible('#drain')) && (await p8.$$('#machine-weeks tbody tr')).length === 9);
    await c8.close();
  }

  lap('drill-down');
  // --- layout: long names, 1280 px, a phone, the dark theme, bar contrast --------------------------
  {
    const LONG = 'nlp-research-team-with-a-really-long-name-ablation-3';
    const sub = await fetch(`${BASE}/v1/runs`, { method: 'POST', headers: { Authorization: `Bearer ${CV}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: LONG, workers: 1, gpus_per_worker: 1, pool: XSS }) });
    check('layout: the long-named run submitted', sub.status === 201, String(sub.status));
    for (let k = 0; k < 100 && !(await api(ADMIN, '/goodput?by=run&days=1')).rows.some((r) => r.run === LONG); k++)
      await new Promise((r) => setTimeout(r, 200));
    await fetch(`${BASE}/v1/runs/${LONG}/stop`, { method: 'POST', headers: { Authorization: `Bearer ${CV}`, 'Content-Length': '0' } });
    const { ctx: c9, page: p9 } = await newPage(1280, 800);
    await signIn(p9, ADMIN, `${BASE}/?refresh=0#/goodput?period=1d&by=run`);
    await p9.waitForSelector('#period[data-by="run"]');
    const cell = await p9.$eval(`#goodput-table td.name a[title="cv/${LONG}"]`, (a) => ({ text: a.textContent, href: a.getAttribute('href') }));
    check('layout: a long name shortened in the middle, the whole name on hover and in the link',
      cell.text === `cv/nlp-research-…name-ablation-3` && cell.href === `#/run/cv/${LONG}`, JSON.stringify(cell));
    const edges = await p9.evaluate(() => ['Held', 'Productive', 'Goodput'].map((l) => {
      const th = [...document.querySelectorAll('#goodput-table thead th')].find((t) => t.textContent.replace(/[▲▼ ]/g, '') === l);
      return th ? th.getBoundingClientRect().right - window.innerWidth : 1e9;
    }));
    check('layout: 1280 px, Held, Productive and Goodput on screen beside the long name', edges.every((e) => e <= 0), JSON.stringify(edges));
    await go(p9, '#/runs', 'runs');
    const runEdges = await p9.evaluate(() => [...document.querySelectorAll('#runs-table thead th')].map((th) => th.getBoundingClientRect().right - window.innerWidth));
    check('layout: 1280 px, every column of the Runs view on screen (machines wrap)', runEdges.length === 9 && runEdges.every((e) => e <= 0), JSON.stringify(runEdges));
    await c9.close();
    // A phone: cards and bars stacked, each bar across the screen, nothing off screen.
    const { ctx: c10, page: p10 } = await newPage(390, 800, { deviceScaleFactor: 1 });
    await signIn(p10, ADMIN, `${BASE}/?refresh=0#/goodput?period=1d&by=pool`);
    await p10.waitForSelector('#period[data-by="pool"]');
    const bars = await p10.$$eval('#goodput-table .bar', (bs) => bs.map((b) => { const r = b.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.right)]; }));
    check('phone: each row a card, its bar on screen and at least 300 px wide', bars.length === 2 && bars.every(([l, r]) => l >= 0 && r <= 390 && r - l >= 300), JSON.stringify(bars));
    const cardsRight = await p10.$$eval('.cards .card', (cs) => Math.max(...cs.map((c) => c.getBoundingClientRect().right)));
    check('phone: the summary cards within the screen', cardsRight <= 390, String(cardsRight));
    await p10.screenshot({ path: `${OUT}/phone-goodput.png`, fullPage: true });
    await go(p10, '#/goodput?period=weeks&by=pool', 'goodput');
    await p10.waitForSelector('#weekly svg');
    const px = await p10.evaluate(() => {
      const svg = document.querySelector('#weekly svg');
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      return Math.min(...[...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale));
    });
    check('phone: the weekly chart\'s smallest text at least 9 px on screen', px >= 9, `${px.toFixed(1)} px`);
    await c10.close();
    // The dark theme follows the system; every category at least 3:1 against the track (both themes).
    for (const scheme of ['light', 'dark']) {
      const { ctx: c11, page: p11 } = await newPage(1280, 800, { colorScheme: scheme, deviceScaleFactor: 1 });
      await signIn(p11, ADMIN, `${BASE}/?refresh=0#/goodput?period=1d&by=pool`);
      await p11.waitForSelector('#period[data-by="pool"]');
      const got = await p11.evaluate(() => {
        const rgb = (c) => c.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number);
        const lum = (c) => { const [r, g, b] = rgb(c).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
        const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
        const track = getComputedStyle(document.querySelector('#goodput-table .bar')).backgroundColor;
        const sw = [...document.querySelectorAll('.legend .swatch')].map((e) => ({ cls: e.className, ratio: ratio(getComputedStyle(e).backgroundColor, track), pattern: getComputedStyle(e).backgroundImage !== 'none' }));
        return { bg: lum(getComputedStyle(document.body).backgroundColor || 'rgb(255,255,255)'), rootBg: lum(getComputedStyle(document.documentElement).backgroundColor), sw };
      });
      check(`${scheme} theme: the page's background follows the system`, scheme === 'dark' ? got.rootBg < 0.05 : got.rootBg > 0.9, JSON.stringify(got.rootBg));
      check(`${scheme} theme: every category at least 3:1 against the bar's track`, got.sw.length === 8 && got.sw.every((x) => x.ratio >= 3), JSON.stringify(got.sw));
      check(`${scheme} theme: the losses patterned (stalled, failure, preemption, waiting)`,
        got.sw.filter((x) => x.pattern).map((x) => x.cls.replace('swatch c-', '')).sort().join(',') === 'failure,preemption,stalled,waiting', JSON.stringify(got.sw));
      if (scheme === 'dark') await p11.screenshot({ path: `${OUT}/dark-goodput.png` });
      await c11.close();
    }
  }

  lap('layout');
  // --- the budget: bytes transferred and time to the first view, cold cache, BUDGET_RUNS times ------
  {
    const runs = [];
    for (let k = 0; k < Number(process.env.BUDGET_RUNS || 1); k++) {
      const { ctx: c3, page: p3 } = await newPage();
      // Signed in already (the session cookie set as the server's answer sets it).
      const signed = await fetch(`${BASE}/v1/session`, { method: 'POST', headers: { 'X-Astraeus-CSRF': '1' }, body: JSON.stringify({ token: ML }) });
      const value = /astraeus_session=([^;]+)/.exec(signed.headers.get('set-cookie'))[1];
      await c3.addCookies([{ name: 'astraeus_session', value, url: BASE, httpOnly: true, sameSite: 'Strict' }]);
      const cdp = await c3.newCDPSession(p3);
      await cdp.send('Network.enable');
      let bytes = 0, requests = 0;
      cdp.on('Network.loadingFinished', (e) => { bytes += e.encodedDataLength; requests++; });
      await p3.goto(`${BASE}/`);
      await ready(p3, 'goodput');
      const mark = await p3.evaluate(() => performance.getEntriesByName('astraeus:first-view')[0].startTime);
      const dcl = await p3.evaluate(() => performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd);
      await new Promise((r) => setTimeout(r, 200));
      runs.push({ first_view_ms: Math.round(mark), dom_content_loaded_ms: Math.round(dcl), bytes_transferred: bytes, requests });
      await c3.close();
    }
    const med = (key) => { const v = runs.map((r) => r[key]).sort((a, b) => a - b); return v[Math.floor((v.length - 1) / 2)]; };
    const budget = { runs: runs.length, first_view_ms_median: med('first_view_ms'),
      first_view_ms_min: Math.min(...runs.map((r) => r.first_view_ms)), first_view_ms_max: Math.max(...runs.map((r) => r.first_view_ms)),
      dom_content_loaded_ms_median: med('dom_content_loaded_ms'), bytes_transferred_median: med('bytes_transferred'), requests: runs[0].requests };
    writeFileSync(`${OUT}/web-budget.json`, `${JSON.stringify(budget)}\n`);
    console.log(`budget (${runs.length} cold loads): first view ${budget.first_view_ms_median} ms median ` +
      `(${budget.first_view_ms_min}-${budget.first_view_ms_max}; navigation start to the Goodput view with its data), ` +
      `DOMContentLoaded ${budget.dom_content_loaded_ms_median} ms, ${budget.bytes_transferred_median} bytes in ${budget.requests} responses (headers included, gzip)`);
    // Bytes only: times are measured (docs/web.md), not asserted.
    check('budget: under 50 kB transferred', runs.every((r) => r.bytes_transferred > 0 && r.bytes_transferred < 50000), JSON.stringify(runs));
  }

  lap('budget');
  // --- live: a page that updates by itself (?refresh=1: every second) when a run changes state ----
  {
    const { ctx: c5, page: p5 } = await newPage();
    await signIn(p5, ML, `${BASE}/?refresh=1#/runs`);
    await ready(p5, 'runs');
    const firstUpdate = await p5.getAttribute('#updated', 'data-at');
    const stateOf = (name) => p5.evaluate((n) => {
      const tr = [...document.querySelectorAll('#runs-table tbody tr')].find((r) => r.querySelector('td.name').textContent === n);
      return tr ? tr.querySelector('.state').textContent : null;
    }, name);
    const waitState = (name, re, ms) => p5.waitForFunction(([n, src]) => {
      const tr = [...document.querySelectorAll('#runs-table tbody tr')].find((r) => r.querySelector('td.name').textContent === n);
      return tr && new RegExp(src).test(tr.querySelector('.state').textContent);
    }, [name, re.source], { timeout: 20000 }).then(() => true, () => false);
    check('live: no run live-1 before it is submitted', (await stateOf('live-1')) === null);
    const sub = await fetch(`${BASE}/v1/runs`, { method: 'POST', headers: { Authorization: `Bearer ${ML}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'live-1', workers: 1, gpus_per_worker: 8 }) });
    check('live: live-1 submitted', sub.status === 201, String(sub.status));
    check('live: the open Runs page shows the new run running, with no click', await waitState('live-1', /^running$/, 20000),
      String(await stateOf('live-1')));
    check('live: the API says running too', (await api(ML, '/runs/live-1')).state === 'running');
    const lastUpdate = await p5.getAttribute('#updated', 'data-at');
    check('live: "Updated" moved on', Date.parse(lastUpdate) > Date.parse(firstUpdate) &&
      /^Updated \d\d:\d\d:\d\d UTC$/.test(await p5.textContent('#updated')), `${firstUpdate} -> ${lastUpdate}`);
    await fetch(`${BASE}/v1/runs/live-1/stop`, { method: 'POST', headers: { Authorization: `Bearer ${ML}`, 'Content-Length': '0' } });
    check('live: the page follows the stop to stopped by itself', await waitState('live-1', /^stopped$/, 20000) &&
      (await api(ML, '/runs/live-1')).state === 'stopped', String(await stateOf('live-1')));
    // Hidden (another tab in front): no call at all; shown again: a refresh at once.
    const calls = [];
    p5.on('request', (r) => { if (r.url().includes('/v1/')) calls.push(Date.now()); });
    const setVisibility = (v) => p5.evaluate((state) => {
      Object.defineProperty(document, 'visibilityState', { value: state, configurable: true });
      document.dispatchEvent(new Event('visibilitychange'));
    }, v);
    await setVisibility('hidden');
    await new Promise((r) => setTimeout(r, 500));  // a load already under way ends
    const hiddenFrom = calls.length;
    await new Promise((r) => setTimeout(r, 2500));
    check('live: a hidden tab makes no call (2.5 s at one refresh a second)', calls.length === hiddenFrom, `${calls.length - hiddenFrom} calls`);
    await setVisibility('visible');
    const resumed = await p5.waitForFunction((n) => Date.parse(document.querySelector('#updated').dataset.at) > n,
      Date.now(), { timeout: 10000 }).then(() => true, () => false);
    check('live: shown again, it refreshes by itself', resumed && calls.length > hiddenFrom);
    lap('live');

    // --- live: the service stopped and started again under two open pages: this one (a refresh
    // a second) and one with no automatic refresh -------------------------------------------------
    if (!(ASTRAEUS && WORK && SERVER_PID)) throw new Error('web_test.sh passes ASTRAEUS, WORK and SERVER_PID');
    const pa = p5;
    const { ctx: cb, page: pb } = await newPage();
    await signIn(pb, ADMIN, `${BASE}/?refresh=0#/runs`);
    await ready(pb, 'runs');
    const before = await pa.getAttribute('#updated', 'data-at');
    process.kill(Number(SERVER_PID), 'SIGTERM');
    const down = async () => { try { await fetch(`${BASE}/`); return false; } catch { return true; } };
    for (let k = 0; k < 100 && !(await down()); k++) await new Promise((r) => setTimeout(r, 100));
    const banner = await pa.waitForSelector('#offline:not([hidden])', { timeout: 15000 }).then(() => true, () => false);
    const text = banner ? await pa.textContent('#offline') : '';
    check('service stopped: a banner says so by itself, the view stays', banner && /Cannot reach the service/.test(text) && /Retrying every 1 s/.test(text) &&
      (await texts(pa, '#runs-table tbody td.name')).sort().join(',') === 'live-1,llm,sweep-7', text);
    await shot(pa, 'offline');
    check('service stopped: the page without automatic refresh shows no banner yet', await pb.isHidden('#offline'));
    await pb.click('#nav a[data-view="runs"]');
    check('service stopped: choosing the current tab again retries (and says so)',
      await pb.waitForSelector('#offline:not([hidden])', { timeout: 10000 }).then(() => true, () => false));
    // Started again on the same port and data (the lock is free once the old process has exited).
    const port = new URL(BASE).port;
    const args = ['serve', ...(SERVE_EXECUTOR ? ['--executor', SERVE_EXECUTOR] : []), '--config', `${WORK}/astraeus.json`,
      '--data-dir', `${WORK}/data`, '--listen', `127.0.0.1:${port}`];
    let again = null;
    for (let k = 0; k < 40 && !again; k++) {
      const log = openSync(`${WORK}/server2.log`, 'a');
      const child = spawn(ASTRAEUS, args, { stdio: ['ignore', log, log] });
      writeFileSync(`${WORK}/server2.pid`, String(child.pid));
      let exited = false;
      child.on('exit', () => { exited = true; });
      for (let j = 0; j < 100 && !exited; j++) {
        if (!(await down())) { again = child; break; }
        await new Promise((r) => setTimeout(r, 100));
      }
      if (!again) { if (!exited) child.kill('SIGKILL'); await new Promise((r) => setTimeout(r, 250)); }
    }
    check('service started again', again !== null);
    const gone = await pa.waitForSelector('#offline', { state: 'hidden', timeout: 20000 }).then(() => true, () => false);
    const after = await pa.getAttribute('#updated', 'data-at');
    check('service back: the banner goes away by itself, the view is updated', gone && Date.parse(after) > Date.parse(before), `${before} -> ${after}`);
    await pb.click('#nav a[data-view="runs"]');
    check('service back: choosing the current tab again brings it back',
      await pb.waitForSelector('#offline', { state: 'hidden', timeout: 10000 }).then(() => true, () => false));
    await c5.close();
    await cb.close();
    if (again) again.kill('SIGTERM');
  }
  lap('restart');
} finally {
  await browser.close();
}
console.log(`seconds by part: ${laps.join(', ')}; ${((Date.now() - t0) / 1000).toFixed(1)} in all`);
check('no dialog fired (names are text, not markup)', dialogs.length === 0, dialogs.join('|'));
check('no page error, CSP violation or request to another host', problems.length === 0, problems.join(' | '));
console.log(`${passes} passed, ${fails} failed`);
process.exit(fails ? 1 : 0);
