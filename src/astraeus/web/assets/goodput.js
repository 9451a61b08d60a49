// The Goodput view (the product page's "See it"): alerts, stalled workers and stragglers first;
// the summary (goodput, GPU time held, productive, not productive with its biggest loss,
// waiting) over a period (last 24 h, 7 days, a custom range up to 400 days); a sortable row per
// run, machine, pool or workspace with a stacked bar of the eight categories; By week (8).
// Every figure is the API's (GET /v1/goodput, /v1/goodput/weekly) for the period it shows.
// The rows are sorted and cut by the server (GET /v1/goodput?sort=KEY&dir=&limit=N): the page
// receives the first 100 (rows=N in the URL after "Show 100 more"), never thousands; a sort
// chosen asks the server again.
import { api, q, h, s, gpuh, pct, when, CATEGORIES, cat, asked, heldCells, stackedBar, legend, biggestLoss, sortableTable, message, unmeasuredNote, SHOW } from './lib.js';
import { hashState, push, remember, sortFromUrl } from './url.js';
import { runHref, machineHref, poolHref, workspaceHref, nameLink } from './links.js';
import { unreachable } from './live.js';

const state = { period: '7d', by: 'run', from: '', to: '', rows: SHOW };
const MAX_ROWS = 100000;
const MAX_DAYS = 400;
const PERIODS = ['1d', '7d', 'custom', 'weeks'];
const BYS = ['run', 'machine', 'pool', 'workspace'];
const DAY = /^\d{4}-\d{2}-\d{2}$/;

// The view's state from the URL (#/goodput?period=1d|7d|custom|weeks&by=run|machine|pool|workspace
// &from=YYYY-MM-DD&to=YYYY-MM-DD&sort=KEY&dir=asc|desc&rows=N); unknown values fall back to the defaults.
function fromUrl(params) {
  state.period = PERIODS.includes(params.get('period')) ? params.get('period') : '7d';
  state.by = BYS.includes(params.get('by')) ? params.get('by') : 'run';
  state.from = DAY.test(params.get('from') || '') ? params.get('from') : '';
  state.to = DAY.test(params.get('to') || '') ? params.get('to') : '';
  const rows = Number.parseInt(params.get('rows'), 10);
  state.rows = rows >= 1 ? Math.min(MAX_ROWS, Math.ceil(rows / SHOW) * SHOW) : SHOW;
}

export async function goodputView(me, params = new URLSearchParams()) {
  fromUrl(params);
  const root = h('section.view', { 'aria-labelledby': 'goodput-h' }, h('h1', { id: 'goodput-h', text: 'Goodput' }));
  const attention = h('div', { id: 'attention' });
  const body = h('div', { id: 'goodput-body' });
  const controls = periodControls(() => load(me, body));
  root.append(attention, controls, body);
  await Promise.all([loadAttention(attention), load(me, body)]);
  return root;
}

async function loadAttention(box) {
  const [alerts, stalls] = await Promise.all([api('/alerts'), api('/stalls')]);
  const live = alerts.alerts.filter((a) => a.state === 'firing' || a.state === 'pending');
  const items = [];
  for (const st of stalls.stalled)
    items.push(h('li.warn', {}, h('strong', { text: 'Stalled: ' }), runLink(st.workspace, st.run),
      ` — worker${st.workers.length > 1 ? 's' : ''} ${st.workers.join(', ')} made no progress for the stall timeout`));
  for (const st of stalls.stragglers)
    items.push(h('li.warn', {}, h('strong', { text: 'Straggler: ' }), runLink(st.workspace, st.run),
      ` — worker${st.workers.length > 1 ? 's' : ''} ${st.workers.join(', ')} below half the gang's median rate`));
  for (const a of live)
    items.push(h('li.alert', {}, h('strong', { text: `${a.state === 'firing' ? 'Alert firing' : 'Alert pending'}: ` }),
      `${a.name} on ${a.scope} `, h('code', { text: a.target }), ` since ${when(a.since)} (value ${alertValue(a)})`));
  box.replaceChildren(h('div.attention', { role: 'region', 'aria-label': 'Needs attention' },
    h('h2', { text: 'Needs attention' }),
    items.length ? h('ul', { id: 'attention-list' }, items) : message('Nothing stalled, no straggler, no alert firing.')));
}

function runLink(ws, run, label = `${ws}/${run}`) {
  return nameLink(runHref(ws, run), label);
}

// A row's name as a link: a run to its page, a machine to its page, a pool or a workspace to the
// Runs view filtered by it.
function rowLink(by, r, label) {
  if (by === 'run') return runLink(r.workspace, r.run, label);
  if (by === 'machine') return nameLink(machineHref(r.machine), label);
  if (by === 'pool') return nameLink(poolHref(r.pool), label);
  return nameLink(workspaceHref(r.workspace), label);
}

function periodControls(reload) {
  const radio = (value, label) => h('label.choice', {},
    h('input', { type: 'radio', name: 'period', value, checked: state.period === value,
      onchange: () => {
        state.period = value; custom.hidden = value !== 'custom';
        // A range being chosen is not refreshed away (live.js waits while [data-hold] is there).
        if (value === 'custom') custom.dataset.hold = ''; else delete custom.dataset.hold;
        if (value !== 'custom') { state.rows = SHOW; push({ period: value, from: null, to: null, sort: null, dir: null, rows: null }); reload(); }
      } }), label);
  const from = h('input', { type: 'date', id: 'from', value: state.from, required: true });
  const to = h('input', { type: 'date', id: 'to', value: state.to, required: true });
  const err = h('span.error', { role: 'alert', id: 'range-error' });
  const custom = h('form.custom', { hidden: state.period !== 'custom', onsubmit: (ev) => {
    ev.preventDefault();
    const days = (Date.parse(to.value) - Date.parse(from.value)) / 86400000 + 1;
    if (!(days >= 1)) { err.textContent = 'The end must not be before the start.'; return; }
    if (days > MAX_DAYS) { err.textContent = `A period is at most ${MAX_DAYS} days (this one is ${days}).`; return; }
    err.textContent = '';
    state.from = from.value; state.to = to.value;
    delete custom.dataset.hold;
    state.rows = SHOW;
    push({ period: 'custom', from: state.from, to: state.to, sort: null, dir: null, rows: null });
    reload();
  } }, h('label', { for: 'from', text: 'From (UTC)' }), from, h('label', { for: 'to', text: 'to' }), to,
  h('button', { type: 'submit', text: 'Show' }), err);
  const by = h('select', { id: 'by', onchange: () => { state.by = by.value; state.rows = SHOW; push({ by: state.by, sort: null, dir: null, rows: null }); reload(); } },
    ['run', 'machine', 'pool', 'workspace'].map((b) => h('option', { value: b, selected: state.by === b, text: b })));
  return h('div.controls', {},
    h('fieldset', {}, h('legend', { text: 'Period' }),
      radio('1d', 'Last 24 h'), radio('7d', '7 days'), radio('custom', 'Custom range'), radio('weeks', 'By week (8)'), custom),
    h('label.by', {}, 'Rows by ', by));
}

function periodParams() {
  if (state.period === '1d') return { days: 1 };
  if (state.period === 'custom' && state.from && state.to) {
    const end = new Date(Date.parse(state.to) + 86400000).toISOString().replace('.000Z', 'Z');
    return { start: `${state.from}T00:00:00Z`, end };
  }
  return { days: 7 };
}

const rowName = (by, r, multi) => (by === 'run' && multi ? `${r.workspace}/${r.run}` : r[by]);

// Loads overlap when the period and the rows change quickly: only the latest one is shown.
// `quiet`: the rows on screen stay until the new ones are there (a sort, more rows).
let latest = 0;
async function load(me, body, quiet = false) {
  const mine = ++latest;
  if (quiet) body.setAttribute('aria-busy', 'true'); else body.replaceChildren(message('Loading…'));
  let node;
  try {
    node = state.period === 'weeks' ? await weekly(me) : await period(me, body);
  } catch (e) {
    // The first load of the view fails the view (the page says why, and retries); a period or
    // rows changed later says why here, and an unreachable service is retried as a refresh.
    if (!body.isConnected) throw e;
    node = h('p.error', { role: 'alert', text: e.message });
    if (unreachable(e) && mine === latest) window.dispatchEvent(new Event('astraeus:refresh'));
  }
  if (mine === latest) { body.replaceChildren(node); body.removeAttribute('aria-busy'); }
}

// The server's sort keys are the table's column keys (GET /v1/goodput?sort=).
const SORT_KEYS = ['name', 'held', 'productive', 'goodput', ...CATEGORIES.slice(1).map((c) => c.key)];

async function period(me, body) {
  const params = hashState().params;
  const sort = SORT_KEYS.includes(params.get('sort')) ? params.get('sort') : 'held';
  const desc = SORT_KEYS.includes(params.get('sort')) ? params.get('dir') !== 'asc' : true;
  const doc = await api(`/goodput${q({ by: state.by, ...periodParams(), sort, dir: desc ? 'desc' : 'asc', limit: state.rows })}`);
  // Runs named with their workspace when the rows shown span several, or may (some not shown).
  const multi = state.by === 'run' && (new Set(doc.rows.map((r) => r.workspace)).size > 1 ||
    (me.scope !== 'workspace' && doc.rows_total > doc.rows.length));
  const out = h('div');
  out.append(h('p.period', { id: 'period', 'data-start': doc.start, 'data-end': doc.end, 'data-by': doc.by },
    `From ${when(doc.start)} to ${when(doc.end)} (whole UTC hours)`));
  out.append(summary(doc.total));
  if (unmeasuredNote(doc.total)) out.append(h('p.note', { id: 'unmeasured', text: unmeasuredNote(doc.total) }));
  // The held columns add up to Held as in `astra` (largest remainder); Waiting is rounded alone.
  const catCol = (c) => ({ key: c.key, label: c.label, num: true, cls: 'cat', value: (r) => cat(r, c.key),
    cell: (r) => (c.key === 'waiting' ? gpuh(cat(r, c.key)) : heldCells(r)[c.key]) });
  const columns = [
    { key: 'name', label: state.by[0].toUpperCase() + state.by.slice(1), value: (r) => rowName(doc.by, r, multi),
      cell: (r) => rowLink(doc.by, r, rowName(doc.by, r, multi)), cls: 'name' },
    { key: 'held', label: 'Held', num: true, value: (r) => r.allocated_gpu_hours, cell: (r) => gpuh(r.allocated_gpu_hours) },
    { key: 'productive', label: 'Productive', num: true, value: (r) => r.productive_gpu_hours, cell: (r) => heldCells(r).productive },
    { key: 'goodput', label: 'Goodput', num: true, value: (r) => r.goodput, cell: (r) => pct(r.goodput) },
    ...CATEGORIES.slice(1).map(catCol),
    { label: 'Where the time went', cell: (r) => stackedBar(r), cls: 'barcell' },
  ];
  out.append(h('h2', { text: `By ${state.by}` }), legend());
  if (!doc.rows.length) out.append(message('No GPU time in this period.'));
  else {
    const again = () => load(me, body, true);
    out.append(sortableTable(columns, doc.rows, { ...sortFromUrl(columns, params, 1, true), id: 'goodput-table', caption: 'GPU-hours by category',
      sortHere: false, total: doc.rows_total,
      onSort: (k, down) => { state.rows = SHOW; remember({ sort: columns[k].key, dir: down ? 'desc' : 'asc', rows: null }); again(); },
      onMore: () => { state.rows = Math.min(MAX_ROWS, state.rows + SHOW); remember({ rows: state.rows }); again(); } }));
  }
  return out;
}

function summary(t) {
  const held = t.allocated_gpu_hours;
  const notProductive = held - t.productive_gpu_hours;
  const loss = biggestLoss(t);
  const card = (id, label, value, sub) => h('div.card', {}, h('div.label', { text: label }),
    h('div.value', { id, text: value }), sub ? h('div.sub', { text: sub }) : null);
  return h('div.cards', { role: 'group', 'aria-label': 'Summary' },
    card('sum-goodput', 'Goodput', pct(t.goodput), 'productive ÷ held'),
    card('sum-held', 'GPU time held', `${gpuh(held)} GPU-h`),
    card('sum-productive', 'Productive', `${heldCells(t).productive} GPU-h`),
    card('sum-notproductive', 'Not productive', `${gpuh(notProductive)} GPU-h`,
      loss ? `biggest loss: ${loss.label.toLowerCase()} ${gpuh(loss.value)} GPU-h` : 'no loss'),
    card('sum-waiting', 'Waiting', `${gpuh(t.waiting_gpu_hours)} GPU-h`, 'asked for, not yet held'));
}

// By week (8), as `astra astraeus goodput --weeks 8 --by BY`: the chart of each week's total,
// then for each week (oldest first) its total row and a row and bar per run, machine, pool or
// workspace (most GPU time held first); the current week is marked partial (it is not over).
async function weekly(me) {
  // Each week's SHOW most held rows (the server cuts them: 8 weeks of 5,000 runs are not sent).
  const doc = await api(`/goodput/weekly${q({ weeks: 8, by: state.by, limit: SHOW })}`);
  const cut = doc.weeks.some((w) => (w.rows_total ?? w.rows.length) > w.rows.length);
  const multi = doc.by === 'run' && (new Set(doc.weeks.flatMap((w) => w.rows.map((r) => r.workspace))).size > 1 ||
    (me.scope !== 'workspace' && cut));
  const current = doc.weeks.at(-1)?.week;
  const out = h('div', { id: 'weekly', 'data-by': doc.by });
  out.append(h('h2', { text: 'By week (8)' }), legend(), weekChart(doc.weeks),
    h('p.note', { id: 'partial-note' }, h('span.partial', { text: `* ${current} is partial` }), ': this week so far, not over yet.'));
  const Name = `${doc.by[0].toUpperCase()}${doc.by.slice(1)}`;
  const heads = ['Week', Name, 'Held', 'Productive', 'Goodput', 'Waiting', 'Where the time went'];
  const cells = (w, r, name) => [
    h('td', { 'data-label': 'Week' }, w.week, w.week === current ? h('span.partial', { text: ' partial' }) : null),
    h('td.name', { 'data-label': Name }, name),
    h('td.num', { 'data-label': 'Held', text: gpuh(r.allocated_gpu_hours) }),
    h('td.num', { 'data-label': 'Productive', text: heldCells(r).productive }),
    h('td.num', { 'data-label': 'Goodput', text: pct(r.goodput) }),
    h('td.num', { 'data-label': 'Waiting', text: gpuh(r.waiting_gpu_hours) }),
    h('td.barcell', { 'data-label': heads[6] }, stackedBar(r))];
  const bodies = doc.weeks.map((w) => {
    const partial = w.week === current;
    const total = h('tr.week-total', { 'data-week': w.week, 'data-partial': partial ? 'true' : null, title: partial ? 'This week so far: it is not over' : null },
      cells(w, w.total, h('span', { text: `all (from ${w.start.slice(0, 10)})` })));
    const rows = [...w.rows].sort((x, y) => y.allocated_gpu_hours - x.allocated_gpu_hours || String(rowName(doc.by, x, multi)).localeCompare(rowName(doc.by, y, multi)))
      .map((r) => h('tr.week-row', { 'data-week': w.week }, cells(w, r, rowLink(doc.by, r, rowName(doc.by, r, multi)))));
    const left = (w.rows_total ?? w.rows.length) - w.rows.length;
    const more = left > 0 ? h('tr.week-more', { 'data-week': w.week }, h('td', { colspan: 7, class: 'note',
      text: `${w.week}: and ${left.toLocaleString('en-US')} more ${doc.by}${left === 1 ? '' : 's'} (the ${w.rows.length} most held shown; each row is in the view by ${doc.by} for a period)` })) : null;
    return h('tbody', { class: partial ? 'partial-week' : null }, total, rows, more);
  });
  out.append(h('div.table-wrap', {}, h('table.data.stack.weeks', { id: 'weekly-table' },
    h('caption', { text: `Each week's total, then a row per ${doc.by}; ${current} is partial (this week so far)` }),
    h('thead', {}, h('tr', {}, heads.map((c, i) => h('th', { scope: 'col', class: i >= 2 && i <= 5 ? 'num' : null, text: c })))),
    bodies)));
  return out;
}

// An alert's value as the page speaks: goodput (a ratio) in percent, counts as they are.
function alertValue(a) {
  const v = Number(a.value);
  return a.name === 'goodput_drop' || a.name.includes('goodput') ? pct(v) : String(Math.round(v * 100) / 100);
}

// Axis ticks at 1, 2 or 5 x 10^k (0, 500, 1000, ... not 0, 1199, 2398, ...), from 0 to the
// first tick at or above `max`; at least one step.
export function niceTicks(max, wanted = 4) {
  const raw = Math.max(max, 1e-9) / wanted;
  const p = 10 ** Math.floor(Math.log10(raw));
  const f = raw / p;
  const step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
  const n = Math.max(1, Math.ceil(max / step - 1e-9));
  return Array.from({ length: n + 1 }, (_, k) => +(k * step).toPrecision(12));
}

// One stacked column per week (GPU-hours by category), goodput above each.
function weekChart(weeks) {
  const W = 720, H = 260, L = 56, B = 40, T = 24, R = 8;
  const ticks = niceTicks(Math.max(1e-9, ...weeks.map((w) => asked(w.total))));
  const max = ticks[ticks.length - 1];
  const step = (W - L - R) / weeks.length;
  const y = (v) => T + (H - T - B) * (1 - v / max);
  const g = s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': 'GPU-hours by category for each of the last weeks' });
  for (const v of ticks) {
    g.append(s('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'grid' }),
      s('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'tick' }, String(v)));
  }
  g.append(s('text', { x: 14, y: (H - B + T) / 2, transform: `rotate(-90 14 ${(H - B + T) / 2})`, 'text-anchor': 'middle', class: 'axis' }, 'GPU-hours'));
  g.append(s('text', { x: (W + L) / 2, y: H - 4, 'text-anchor': 'middle', class: 'axis' }, 'ISO week (UTC)'));
  weeks.forEach((w, i) => {
    const x = L + i * step + step * 0.15;
    let acc = 0;
    for (const c of CATEGORIES) {
      const v = cat(w.total, c.key);
      if (v <= 0) continue;
      g.append(s('rect', { x, width: step * 0.7, y: y(acc + v), height: Math.max(0.5, y(acc) - y(acc + v)), class: `c-${c.key}` },
        s('title', {}, `${w.week} ${c.label}: ${gpuh(v)} GPU-h`)));
      acc += v;
    }
    const partial = i === weeks.length - 1;
    g.append(s('text', { x: x + step * 0.35, y: H - B + 14, 'text-anchor': 'middle', class: partial ? 'tick partial-tick' : 'tick' }, `${w.week.slice(5)}${partial ? '*' : ''}`));
    if (w.total.goodput !== undefined)
      g.append(s('text', { x: x + step * 0.35, y: y(acc) - 4, 'text-anchor': 'middle', class: 'tick' }, pct(w.total.goodput)));
  });
  return g;
}
