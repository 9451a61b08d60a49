// Shared helpers of the web pages: the API client (the session cookie, never a token a script
// can read), DOM building with text nodes and textContent only (never parsed as markup: every name a user controls is
// shown as text), number formats and the eight goodput categories with their colours.

export class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

// GET (or POST, DELETE) /v1<path> with the session cookie (HttpOnly: the browser sends it, no
// script reads it) and the header that proves the request comes from these pages (the server's
// CSRF rule); `body` is sent as JSON. The JSON answer (null for 204), or an ApiError.
export async function api(path, { method = 'GET', body } = {}) {
  const init = { method, headers: { 'X-Astraeus-CSRF': '1' }, credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) { init.headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(body); }
  else if (method !== 'GET') init.body = '';
  let res;
  try {
    res = await fetch(`/v1${path}`, init);
  } catch (e) {
    throw new ApiError(0, `cannot reach the server (${e.message})`);
  }
  if (res.status === 204) return null;
  const type = res.headers.get('Content-Type') || '';
  const answer = type.includes('json') ? await res.json().catch(() => null) : await res.text();
  if (!res.ok) throw new ApiError(res.status, (answer && answer.error) || `HTTP ${res.status}`);
  return answer;
}

// The sign-in session: the token is traded for an HttpOnly cookie (POST /v1/session) and never
// kept by the page; every tab of this browser shares the cookie until it expires or sign-out
// ends it on the server (DELETE /v1/session).
export const session = {
  start(token) { return api('/session', { method: 'POST', body: { token } }); },
  end() { return api('/session', { method: 'DELETE' }); },
};

export const q = (params) => {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') u.set(k, v);
  const s = u.toString();
  return s ? `?${s}` : '';
};

// h('tag.class', {attrs}, children...): an element; strings become text nodes.
export function h(spec, attrs = {}, ...children) {
  const [tag, ...classes] = spec.split('.');
  const el = document.createElement(tag);
  if (classes.length) el.className = classes.join(' ');
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}
function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}
const SVG = 'http://www.w3.org/2000/svg';
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// Formats: GPU-hours with one decimal, goodput a whole percent ('-' when nothing was held).
// GPU-hours are rounded as `astra` rounds them (goodput_io/table.cpp), so that the pages and the
// CLI show the same digits: from the exact GPU-seconds (the API's hours x 3600), to tenths half
// away from zero (toFixed would round the double: 0.15 h = 540 GPU-s shows 0.1, astra 0.2).
const gpuSeconds = (v) => Math.round((v ?? 0) * 3600);
const tenths = (s) => (s >= 0 ? Math.floor((s + 180) / 360) : -Math.floor((-s + 180) / 360));
const showTenths = (t) => `${t < 0 ? '-' : ''}${Math.floor(Math.abs(t) / 10)}.${Math.abs(t) % 10}`;
export const gpuh = (v) => showTenths(tenths(gpuSeconds(v)));
// "1 GPU", "2 GPUs": a count with its noun in the right number.
export const counted = (n, noun) => `${n} ${noun}${n === 1 ? '' : 's'}`;
export const pct = (v) => (v === undefined || v === null ? '-' : `${Math.round(v * 100)}%`);
export const when = (t) => (t ? t.replace('T', ' ').replace(/:\d\dZ$/, 'Z') : '-');

// The eight categories, in the order of the page, each with one colour used in every view: the
// CSS variables --c-<key> (style.css: Okabe-Ito hues darkened for the light theme and lightened
// for the dark one, each at least 3:1 against the bar's track in its theme) and a pattern for the
// losses (stripes: stalled, failure, preemption; dots: waiting), so that they read without colour.
export const CATEGORIES = [
  { key: 'productive', label: 'Productive' },
  { key: 'idle', label: 'Idle' },
  { key: 'stalled', label: 'Stalled' },
  { key: 'starting', label: 'Starting' },
  { key: 'restart', label: 'Restart' },
  { key: 'failure', label: 'Failure' },
  { key: 'preemption', label: 'Preemption' },
  { key: 'waiting', label: 'Waiting' },
].map((c) => ({ ...c, color: `var(--c-${c.key})` }));

// A ledger's GPU-hours in the column of category `key`, with the CLI's meaning (spec/goodput.md
// "CLI"): the held part of each category, and for 'waiting' every not-held part (first
// placement and placement again), so that Held = the seven held columns.
export const cat = (ledger, key) => {
  if (!ledger) return 0;
  if (key === 'waiting') return ledger.waiting_gpu_hours || 0;
  return ledger.held_gpu_hours ? ledger.held_gpu_hours[key] || 0 : 0;
};
export const asked = (ledger) => CATEGORIES.reduce((a, c) => a + cat(ledger, c.key), 0);

// The seven held columns of a ledger as `astra` shows them: {category: 'N.N'}. Rounded by
// largest remainder (floors in tenths, then the tenths left to Held to the largest remainders,
// ties in column order) so that they add up to the Held column exactly, as in the CLI's table.
export function heldCells(ledger) {
  const keys = CATEGORIES.slice(0, 7).map((c) => c.key);
  const secs = keys.map((k) => Math.max(0, gpuSeconds(cat(ledger, k))));
  const out = secs.map((s) => Math.floor(s / 360));
  const rem = secs.map((s) => s % 360);
  for (let left = tenths(gpuSeconds(ledger?.allocated_gpu_hours)) - out.reduce((a, b) => a + b, 0); left > 0; left--) {
    let i = 0;
    for (let k = 1; k < rem.length; k++) if (rem[k] > rem[i]) i = k;
    if (rem[i] < 0) break;
    out[i]++;
    rem[i] = -1;
  }
  return Object.fromEntries(keys.map((k, i) => [k, showTenths(out[i])]));
}

// The note shown wherever goodput is: running time no utilization sample or progress decided.
// Omitted when it rounds to 0.0 GPU-h (the tables show tenths too).
export const unmeasuredNote = (ledger) => (ledger && gpuh(ledger.unmeasured_gpu_hours || 0) !== '0.0'
  ? `utilization not measured for ${gpuh(ledger.unmeasured_gpu_hours)} GPU-h (counted idle)` : '');

// A horizontal stacked bar of a ledger's columns (held parts, then waiting), scaled to the
// row's own total: the bar shows where this row's time went, whatever its size.
export function stackedBar(ledger) {
  const total = asked(ledger);
  const parts = CATEGORIES.filter((c) => cat(ledger, c.key) > 0).map((c) => `${c.label} ${gpuh(cat(ledger, c.key))}`);
  const bar = h('div.bar', { role: 'img', 'aria-label': parts.length ? `GPU-hours: ${parts.join(', ')}` : 'no GPU time' });
  bar.title = parts.join('\n') || 'no GPU time';
  const inner = h('div.bar-inner');
  inner.style.width = total > 0 ? '100%' : '0%';
  for (const c of CATEGORIES) {
    const v = cat(ledger, c.key);
    if (v <= 0) continue;
    const seg = h('span', { class: `seg c-${c.key}`, 'data-category': c.key });
    seg.style.flexGrow = String(v);
    inner.append(seg);
  }
  bar.append(inner);
  return bar;
}

export function legend() {
  return h('ul.legend', { 'aria-label': 'Categories' },
    CATEGORIES.map((c) => h('li', {}, h('span', { class: `swatch c-${c.key}` }), c.label)));
}

// The biggest loss among the held categories other than productive: the biggest held segment
// of the bar after productive (the same values the bar and the columns show).
export function biggestLoss(ledger) {
  let best = null;
  for (const c of CATEGORIES) {
    if (c.key === 'productive' || c.key === 'waiting') continue;
    const v = cat(ledger, c.key);
    if (v > 0 && (!best || v > best.value)) best = { ...c, value: v };
  }
  return best;
}

export function message(text, cls = 'note') { return h(`p.${cls}`, { text }); }

// Rows a table draws at first, and how many more each "Show more" adds.
export const SHOW = 100;
export const count = (n) => Number(n).toLocaleString('en-US');

// A table whose columns sort when their header button is pressed (click or keyboard); on a phone
// (style.css) each row is a card, each cell with its column's label (data-label). It draws the
// first SHOW rows and a "Show 100 more" button (#<id>-more) under "Showing N of TOTAL"
// (#<id>-count) while rows are left, so that thousands of rows never reach the DOM at once.
// columns: [{label, value: row => sortable, cell: row => Node|string, num, cls}]
// onSort(index, desc): told of a sort the user chose (the page keeps it in the URL).
// Rows sorted and cut by the server (sortHere false): a header only marks the new sort and
// calls onSort (the page asks the server again); every row given is drawn, `total` is how many
// there are in all and `onMore` asks for more. Rows paged by the server but sorted here: `total`
// and `onMore` with sortHere true (every row given is drawn).
// Each row's <tr> is made once and kept: a sort, "Show 100 more" or the returned element's
// addRows(more, total) (the next page read by the caller, drawn in the same table) moves the rows
// already drawn and makes only the new ones, so that a page more costs its own 100 rows.
export function sortableTable(columns, given, { sortBy = 0, desc = false, caption, id, onSort, sortHere = true, total, onMore } = {}) {
  let key = sortBy;
  let down = desc;
  const rows = [...given];
  let shown = onMore ? rows.length : SHOW;
  let all = onMore ? Math.max(total ?? rows.length, rows.length) : rows.length;
  const trOf = new Map();
  const tr = (r) => {
    let el = trOf.get(r);
    if (!el) {
      el = h('tr', {}, columns.map((c) =>
        h('td', { class: [c.num ? 'num' : '', c.cls || ''].join(' ').trim() || null, 'data-label': c.label }, c.cell(r))));
      trOf.set(r, el);
    }
    return el;
  };
  const table = h('table.data.stack', { id, 'data-total': String(all) });
  if (caption) table.append(h('caption', { text: caption }));
  const head = h('tr');
  const body = h('tbody');
  const shownText = h('span', { id: id ? `${id}-count` : null });
  const more = h('p.more', {}, shownText, ' ', h('button', { type: 'button', id: id ? `${id}-more` : null, text: `Show ${SHOW} more`,
    onclick: () => { if (onMore) onMore(); else { shown += SHOW; render(); } } }));
  const mark = () => ths.forEach((th, i) => th.setAttribute('aria-sort', i === key ? (down ? 'descending' : 'ascending') : 'none'));
  const ths = columns.map((c, i) => {
    const th = h('th', { scope: 'col', class: [c.num ? 'num' : '', c.cls || ''].join(' ').trim() || null });
    if (c.value) {
      th.append(h('button.sort', { type: 'button', onclick: () => {
        if (key === i) down = !down; else { key = i; down = !!c.num; }
        if (sortHere) render(); else mark();
        if (onSort) onSort(key, down);
      } }, c.label));
    } else th.textContent = c.label;
    head.append(th);
    return th;
  });
  table.append(h('thead', {}, head), body);
  function render() {
    const col = columns[key];
    const sorted = [...rows];
    if (sortHere && col && col.value) {
      sorted.sort((a, b) => {
        const x = col.value(a), y = col.value(b);
        const r = typeof x === 'string' ? x.localeCompare(y) : (x ?? -1) - (y ?? -1);
        return down ? -r : r;
      });
    }
    mark();
    const drawn = sorted.slice(0, shown);
    body.replaceChildren(...drawn.map(tr));
    shownText.textContent = `Showing ${count(drawn.length)} of ${count(all)}`;
    more.hidden = drawn.length >= all;
  }
  render();
  const wrap = h('div.table-wrap', {}, table, more);
  wrap.addRows = (extra, newTotal) => {
    rows.push(...extra);
    if (onMore) shown = rows.length; else shown += extra.length;
    all = Math.max(newTotal ?? all, rows.length);
    table.dataset.total = String(all);
    render();
  };
  return wrap;
}
