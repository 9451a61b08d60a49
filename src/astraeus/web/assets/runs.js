// The Runs view: the runs the token sees (GET /v1/runs, newest first, PAGE at a time following
// the server's cursor; "Show 100 more" reads the next page only), with their state, pool, GPUs,
// submitted and started times and goodput since submitted (each summary's "goodput": no
// request per run, no list of every run's goodput); filters by state, pool and name (applied by
// the server; the pools and workspaces offered are the rows' and those with GPU time in the
// last 400 days, GET /v1/goodput?by=pool|workspace), and for org admins
// and operators the workspace column and a workspace filter. The filters, pages shown and sort
// are the URL's (#/runs?state=&pool=&workspace=&name=&pages=N&sort=KEY&dir=asc|desc). A running
// run with a worker stalled now (GET /v1/stalls) shows "running · stalled", not a green running.
// Each name links on: a run to its page, its workspace and pool to this view filtered by them,
// the machines its workers hold now to their pages.
import { api, q, h, pct, when, sortableTable, message, SHOW, count } from './lib.js';
import { navigate, push, sortFromUrl } from './url.js';
import { runHref, machineHref, poolHref, workspaceHref, nameLink } from './links.js';

const STATES = ['pending', 'starting', 'running', 'stopping', 'succeeded', 'failed', 'stopped', 'cancelled'];
const PAGE = SHOW;
const READ = 1000;  // the most runs one GET /v1/runs answers
const filters = { state: '', workspace: '', pool: '', name: '', pages: 1 };

// What the last render read, so that "Show 100 more" (the same filters, one page more, within
// MORE_MS) reads only the next page from the saved cursor, and not the pools' and workspaces'
// totals again: {key, at, runs, cursor, matches, pages, byPool, byWs}. A refresh (the same
// pages) or other filters read everything again.
const MORE_MS = 15000;
let last = null;
const viewKey = (wide) => JSON.stringify([wide, filters.state, filters.workspace, filters.pool, filters.name]);
const extending = (wide) => last && last.key === viewKey(wide) && filters.pages === last.pages + 1 &&
  Date.now() - last.at < MORE_MS;

// The first `pages` pages of the filtered list, read READ runs at a time: {runs, more, matches,
// cursor}; when extending the last render's list, only the pages after it.
async function readPages(wide) {
  const runs = extending(wide) ? [...last.runs] : [];
  let cursor = runs.length ? last.cursor : '', matches = runs.length ? last.matches : 0;
  if (runs.length && !cursor) return { runs, more: false, matches, cursor };
  for (let left = filters.pages * PAGE - runs.length; left > 0;) {
    const page = await api(`/runs${q({ state: filters.state, workspace: wide ? filters.workspace : '',
      pool: filters.pool, name: filters.name, limit: String(Math.min(READ, left)), cursor })}`);
    runs.push(...page.runs);
    left -= page.runs.length;
    matches = page.matches ?? runs.length;
    cursor = page.next_cursor || '';
    if (!cursor) break;
  }
  return { runs, more: cursor !== '', matches, cursor };
}

export async function runsView(me, params = new URLSearchParams()) {
  const wide = me.scope !== 'workspace';
  for (const k of ['state', 'workspace', 'pool', 'name']) filters[k] = params.get(k) || '';
  filters.pages = Math.min(100, Math.max(1, Number.parseInt(params.get('pages'), 10) || 1));
  const more = extending(wide);
  const [list, byPool, byWs, stalls] = await Promise.all([readPages(wide),
    more ? last.byPool : api('/goodput?by=pool&days=400'),
    more ? last.byWs : wide ? api('/goodput?by=workspace&days=400') : { rows: [] }, api('/stalls')]);
  last = { key: viewKey(wide), at: more ? last.at : Date.now(), runs: list.runs, cursor: list.cursor,
    matches: list.matches, pages: filters.pages, byPool, byWs };
  const stalled = new Map(stalls.stalled.map((st) => [`${st.workspace}/${st.run}`, st.workers.length]));
  const marked = (runs) => runs.map((r) => (stalled.has(`${r.workspace}/${r.name}`) ? { ...r, stalled_workers: stalled.get(`${r.workspace}/${r.name}`) } : r));
  const rows = marked(list.runs);
  const pools = [...new Set([...rows.map((r) => r.pool), ...byPool.rows.map((r) => r.pool).filter(Boolean)])].sort();
  if (filters.pool && !pools.includes(filters.pool)) pools.push(filters.pool);
  const workspaces = [...new Set([...rows.map((r) => r.workspace), ...byWs.rows.map((r) => r.workspace).filter(Boolean)])].sort();
  if (filters.workspace && !workspaces.includes(filters.workspace)) workspaces.push(filters.workspace);

  const select = (id, label, key, values) => h('label', {}, `${label} `,
    h('select', { id, onchange: (ev) => navigate({ [key]: ev.target.value, pages: null }) },
      h('option', { value: '', text: 'all' }), values.map((v) => h('option', { value: v, selected: filters[key] === v, text: v }))));
  const name = h('input', { id: 'filter-name', type: 'search', value: filters.name, placeholder: 'name contains' });
  const controls = h('form.controls', { role: 'search', onsubmit: (ev) => { ev.preventDefault(); navigate({ name: name.value, pages: null }); } },
    select('filter-state', 'State', 'state', STATES),
    select('filter-pool', 'Pool', 'pool', pools),
    wide ? select('filter-workspace', 'Workspace', 'workspace', workspaces) : null,
    h('label', {}, 'Name ', name), h('button', { type: 'submit', text: 'Filter' }));

  const columns = [
    { key: 'name', label: 'Name', value: (r) => r.name, cls: 'name',
      cell: (r) => nameLink(runHref(r.workspace, r.name), r.name) },
    wide ? { key: 'workspace', label: 'Workspace', value: (r) => r.workspace, cls: 'ref', cell: (r) => nameLink(workspaceHref(r.workspace), r.workspace) } : null,
    { key: 'state', label: 'State', value: (r) => r.state, cell: (r) => stateBadge(r) },
    { key: 'pool', label: 'Pool', value: (r) => r.pool, cls: 'ref', cell: (r) => nameLink(poolHref(r.pool), r.pool) },
    { key: 'gpus', label: 'GPUs', num: true, value: (r) => r.workers * r.gpus_per_worker, cell: (r) => `${r.workers} × ${r.gpus_per_worker}` },
    { key: 'goodput', label: 'Goodput', num: true, value: (r) => r.goodput, cell: (r) => pct(r.goodput) },
    { key: 'submitted', label: 'Submitted', cls: 'time', value: (r) => r.submitted_at, cell: (r) => when(r.submitted_at) },
    { key: 'started', label: 'Started', cls: 'time', value: (r) => r.started_at || '', cell: (r) => when(r.started_at) },
    // Last, and wrapping: a gang on many machines does not push the figures off screen.
    { label: 'Machines', cls: 'machines', cell: (r) => (r.machines || []).map((m, i) => [i ? ', ' : '', nameLink(machineHref(m), m)]) },
  ].filter(Boolean);
  const caption = (l) => `${count(l.matches)} run${l.matches === 1 ? '' : 's'}${l.more ? ' (newest first; more follow)' : ''}`;
  const table = rows.length ? sortableTable(columns, rows, { ...sortFromUrl(columns, params, wide ? 6 : 5, true), id: 'runs-table',
    caption: caption(list), total: list.matches, onMore: () => showMore(wide, table, marked, caption) }) : null;
  return h('section.view', { 'aria-labelledby': 'runs-h' }, h('h1', { id: 'runs-h', text: 'Runs' }), controls,
    table || message('No run matches.'));
}

// "Show 100 more": the next page, read from the saved cursor, is added to the table on screen
// (the rows drawn stay; sortableTable makes only the new ones) and the URL's pages grows by one
// (a new history entry: Back shows one page fewer). Past MORE_MS since the view's full read, the
// view is read again with one page more. `marked`: the stalled marks of the view's read.
let adding = false;
async function showMore(wide, table, marked, caption) {
  if (adding) return;
  filters.pages += 1;
  if (!extending(wide)) {
    filters.pages -= 1;
    navigate({ pages: filters.pages + 1 });
    return;
  }
  adding = true;
  push({ pages: filters.pages });
  table.setAttribute('aria-busy', 'true');
  try {
    const had = last.runs.length;
    const list = await readPages(wide);
    last = { ...last, runs: list.runs, cursor: list.cursor, matches: list.matches, pages: filters.pages };
    table.addRows(marked(list.runs.slice(had)), list.matches);
    const cap = table.querySelector('caption');
    if (cap) cap.textContent = caption(list);
  } catch {
    window.dispatchEvent(new Event('astraeus:navigate'));  // the view read again: its error shown
  } finally {
    adding = false;
    table.removeAttribute('aria-busy');
  }
}

// A run's state; a running run with workers stalled now (r.stalled_workers > 0) is not shown as
// a healthy running one: "running · stalled" in the stalled category's colour.
export function stateBadge(r) {
  if (r.state === 'running' && r.stalled_workers > 0) {
    return h('span', { class: 'state state-stalled', title: `${r.stalled_workers} worker${r.stalled_workers > 1 ? 's' : ''} stalled: no progress within the stall timeout` },
      'running · stalled');
  }
  return h('span', { class: `state state-${r.state}`, title: r.reason || null }, r.state, r.reason ? h('span.reason', { text: ` — ${r.reason}` }) : null);
}
