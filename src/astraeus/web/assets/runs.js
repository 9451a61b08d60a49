// The Runs view: the runs the token sees (GET /v1/runs, newest first, PAGE at a time following
// the server's cursor; "Show more" reads the next page), with their state, pool, GPUs, submitted
// and started times and goodput since submitted (GET /v1/goodput?by=run over the longest period
// kept, 400 days); filters by state, pool and name (applied by the server), and for org admins
// and operators the workspace column and a workspace filter. The filters, pages shown and sort
// are the URL's (#/runs?state=&pool=&workspace=&name=&pages=N&sort=KEY&dir=asc|desc). A running
// run with a worker stalled now (GET /v1/stalls) shows "running · stalled", not a green running.
// Each name links on: a run to its page, its workspace and pool to this view filtered by them,
// the machines its workers hold now to their pages.
import { api, q, h, pct, when, sortableTable, message } from './lib.js';
import { navigate, sortFromUrl } from './url.js';
import { runHref, machineHref, poolHref, workspaceHref, nameLink } from './links.js';

const STATES = ['pending', 'starting', 'running', 'stopping', 'succeeded', 'failed', 'stopped', 'cancelled'];
const PAGE = 200;
const filters = { state: '', workspace: '', pool: '', name: '', pages: 1 };

// The first `pages` pages of the filtered list: {runs, more}.
async function readPages(wide) {
  const runs = [];
  let cursor = '';
  for (let k = 0; k < filters.pages; k++) {
    const page = await api(`/runs${q({ state: filters.state, workspace: wide ? filters.workspace : '',
      pool: filters.pool, name: filters.name, limit: String(PAGE), cursor })}`);
    runs.push(...page.runs);
    cursor = page.next_cursor || '';
    if (!cursor) break;
  }
  return { runs, more: cursor !== '' };
}

export async function runsView(me, params = new URLSearchParams()) {
  const wide = me.scope !== 'workspace';
  for (const k of ['state', 'workspace', 'pool', 'name']) filters[k] = params.get(k) || '';
  filters.pages = Math.min(50, Math.max(1, Number.parseInt(params.get('pages'), 10) || 1));
  const [list, gp, stalls] = await Promise.all([readPages(wide), api('/goodput?by=run&days=400'), api('/stalls')]);
  const goodput = new Map(gp.rows.map((r) => [`${r.workspace}/${r.run}`, r.goodput]));
  const stalled = new Map(stalls.stalled.map((st) => [`${st.workspace}/${st.run}`, st.workers.length]));
  const rows = list.runs.map((r) => (stalled.has(`${r.workspace}/${r.name}`) ? { ...r, stalled_workers: stalled.get(`${r.workspace}/${r.name}`) } : r));
  const pools = [...new Set([...rows.map((r) => r.pool), ...gp.rows.map((r) => r.pool).filter(Boolean)])].sort();
  if (filters.pool && !pools.includes(filters.pool)) pools.push(filters.pool);
  const workspaces = [...new Set([...rows.map((r) => r.workspace), ...gp.rows.map((r) => r.workspace).filter(Boolean)])].sort();
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
    { key: 'goodput', label: 'Goodput', num: true, value: (r) => goodput.get(`${r.workspace}/${r.name}`), cell: (r) => pct(goodput.get(`${r.workspace}/${r.name}`)) },
    { key: 'submitted', label: 'Submitted', cls: 'time', value: (r) => r.submitted_at, cell: (r) => when(r.submitted_at) },
    { key: 'started', label: 'Started', cls: 'time', value: (r) => r.started_at || '', cell: (r) => when(r.started_at) },
    // Last, and wrapping: a gang on many machines does not push the figures off screen.
    { label: 'Machines', cls: 'machines', cell: (r) => (r.machines || []).map((m, i) => [i ? ', ' : '', nameLink(machineHref(m), m)]) },
  ].filter(Boolean);
  const more = list.more
    ? h('button', { type: 'button', id: 'runs-more', text: `Show ${PAGE} more`, onclick: () => navigate({ pages: filters.pages + 1 }) })
    : null;
  return h('section.view', { 'aria-labelledby': 'runs-h' }, h('h1', { id: 'runs-h', text: 'Runs' }), controls,
    rows.length ? sortableTable(columns, rows, { ...sortFromUrl(columns, params, wide ? 6 : 5, true), id: 'runs-table',
      caption: `${rows.length} run${rows.length === 1 ? '' : 's'}${list.more ? ' (newest first; more follow)' : ''}` })
      : message('No run matches.'), more);
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
