// The Machines view (#/machines: every machine with its pool, GPUs in use, state and the runs
// there now) and a machine's page (#/machine/<name>): its GPUs, state and drain (with Drain /
// Undrain for operators and org admins), the runs holding GPUs there now, its goodput and bar
// over the last 7 days (GET /v1/goodput?by=machine), the runs that held GPUs there in those days
// with their time there (GET /v1/goodput?by=run&machine=NAME) and a row per week for the last 8 weeks and
// this one (GET /v1/goodput/weekly?by=machine, the current week marked partial). The machine
// list (GET /v1/machines) is the operators' and org admins'; a workspace token's page shows its
// own workspace's time on the machine only (the goodput API's rule).
import { api, q, h, gpuh, pct, when, stackedBar, legend, biggestLoss, message, sortableTable, ApiError } from './lib.js';
import { sortFromUrl } from './url.js';
import { runHref, poolHref, machineHref, nameLink } from './links.js';

const sees = (me) => me.scope === 'org-admin' || me.scope === 'operator';

// GET /v1/machines, or null for a token that may not list machines (403).
async function machines(me) {
  if (!sees(me)) return null;
  try { return (await api('/machines')).machines; } catch (e) {
    if (e instanceof ApiError && e.status === 403) return null;
    throw e;
  }
}

const runsThere = (m) => (m.runs || []).map((r, i) => [i ? ', ' : '',
  h('a', { href: runHref(r.workspace, r.run), text: `${r.workspace}/${r.run}` })]);

export async function machinesView(me, params = new URLSearchParams()) {
  const [list, gp] = await Promise.all([machines(me), api('/goodput?by=machine&days=7')]);
  const root = h('section.view', { 'aria-labelledby': 'machines-h' }, h('h1', { id: 'machines-h', text: 'Machines' }));
  const goodput = new Map(gp.rows.map((r) => [r.machine, r]));
  // Without the list (workspace tokens): the machines its runs held GPUs on in the last 7 days.
  const rows = list || gp.rows.map((r) => ({ name: r.machine }));
  if (!list) root.append(message('The machine list (GPUs, state, runs there now, drain) is for operators and org admins; these are the machines your workspace used in the last 7 days.'));
  const columns = [
    { key: 'name', label: 'Machine', value: (m) => m.name, cls: 'name', cell: (m) => nameLink(machineHref(m.name), m.name) },
    list ? { key: 'pool', label: 'Pool', value: (m) => m.pool, cls: 'ref', cell: (m) => nameLink(poolHref(m.pool), m.pool) } : null,
    list ? { key: 'gpus', label: 'GPUs used', num: true, value: (m) => m.gpus_used, cell: (m) => `${m.gpus_used} / ${m.gpus}` } : null,
    list ? { key: 'state', label: 'State', value: (m) => m.state, cell: (m) => h('span', { class: `mstate mstate-${m.state.replace(/,/g, '-')}`, text: m.state }) } : null,
    { key: 'goodput', label: 'Goodput (7 d)', num: true, value: (m) => goodput.get(m.name)?.goodput, cell: (m) => pct(goodput.get(m.name)?.goodput) },
    { key: 'held', label: 'Held (7 d)', num: true, value: (m) => goodput.get(m.name)?.allocated_gpu_hours ?? 0, cell: (m) => gpuh(goodput.get(m.name)?.allocated_gpu_hours) },
    list ? { label: 'Runs there now', cls: 'runs-now', cell: (m) => runsThere(m) } : null,
    { label: 'Where the time went (7 d)', cls: 'barcell', cell: (m) => stackedBar(goodput.get(m.name)) },
  ].filter(Boolean);
  root.append(legend(), rows.length
    ? sortableTable(columns, rows, { ...sortFromUrl(columns, params, 0, false), id: 'machines-table', caption: `${rows.length} machine${rows.length === 1 ? '' : 's'}` })
    : message('No machine.'));
  return root;
}

export async function machineView(me, name) {
  const [list, gp, weekly, ran] = await Promise.all([machines(me), api(`/goodput${q({ by: 'machine', days: 7 })}`),
    api(`/goodput/weekly${q({ by: 'machine', weeks: 8 })}`), api(`/goodput${q({ by: 'run', days: 7, machine: name })}`)]);
  const m = list ? list.find((x) => x.name === name) : null;
  if (list && !m) throw new Error(`no machine named "${name}"`);
  const root = h('section.view', { 'aria-labelledby': 'machine-h', 'data-machine': name },
    h('p.crumb', {}, h('a', { href: '#/machines', text: 'Machines' }), m ? [' / ', nameLink(poolHref(m.pool), `pool ${m.pool}`)] : null),
    h('h1', { id: 'machine-h', text: name }));
  if (m) {
    const dl = h('dl.facts', { id: 'machine-facts' });
    const fact = (k, v, id) => dl.append(h('dt', { text: k }), h('dd', { id }, v));
    fact('Pool', nameLink(poolHref(m.pool), m.pool));
    fact('GPUs', `${m.gpus_used} of ${m.gpus} in use`, 'machine-gpus');
    fact('State', m.state, 'machine-state');
    fact('Drained', m.drained ? 'yes: no new placement here' : 'no', 'machine-drained');
    fact('Source', m.source);
    if (m.addr) fact('Address', m.addr);
    if (m.last_heartbeat) fact('Last heartbeat', when(m.last_heartbeat));
    root.append(dl, drainButton(me, m));
    root.append(h('h2', { text: 'Runs there now' }), (m.runs || []).length
      ? h('ul', { id: 'machine-runs' }, m.runs.map((r) => h('li', {}, h('a', { href: runHref(r.workspace, r.run), text: `${r.workspace}/${r.run}` }),
        ` — ${r.state}, attempt ${r.attempt}, worker${r.workers.length > 1 ? 's' : ''} ${r.workers.join(', ')}`)))
      : message('No run holds GPUs here now.'));
  } else {
    root.append(message('GPUs, state, drain and the runs there now are shown to operators and org admins; below, your workspace\'s time on this machine.'));
  }
  const row = gp.rows.find((r) => r.machine === name);
  root.append(h('h2', { text: 'Goodput, last 7 days' }));
  const loss = biggestLoss(row);
  root.append(h('p', { id: 'machine-goodput' }, row
    ? `Goodput ${pct(row.goodput)} · held ${gpuh(row.allocated_gpu_hours)} GPU-h · productive ${gpuh(row.productive_gpu_hours)} GPU-h${loss ? ` · biggest loss: ${loss.label.toLowerCase()} ${gpuh(loss.value)} GPU-h` : ''}`
    : 'No GPU time held here in the last 7 days.'), stackedBar(row), legend());
  root.append(h('h2', { text: 'What ran here, last 7 days' }), ran.rows.length ? sortableTable([
    { key: 'run', label: 'Run', cls: 'name', value: (r) => `${r.workspace}/${r.run}`, cell: (r) => nameLink(runHref(r.workspace, r.run), `${r.workspace}/${r.run}`) },
    { key: 'held', label: 'Held here', num: true, value: (r) => r.allocated_gpu_hours, cell: (r) => gpuh(r.allocated_gpu_hours) },
    { key: 'goodput', label: 'Goodput', num: true, value: (r) => r.goodput, cell: (r) => pct(r.goodput) },
    { label: 'Where the time went', cls: 'barcell', cell: (r) => stackedBar(r) },
  ], ran.rows, { sortBy: 1, desc: true, id: 'machine-ran', caption: 'Each run\'s GPU time on this machine' }) : message('No run held GPUs here in the last 7 days.'));
  root.append(h('h2', { text: 'By week (8)' }), weekRows(weekly, name));
  root.append(h('p', {}, h('a', { id: 'machine-runs-link', href: `#/goodput?by=run&period=7d`, text: 'Every run\'s goodput (7 days)' }),
    ' · ', h('a', { href: `#/goodput?by=machine&period=weeks`, text: 'Every machine by week' })));
  return root;
}

// A row per week for machine `name` (8 complete weeks and this one, marked partial).
function weekRows(weekly, name) {
  const nowWeek = weekly.weeks.at(-1)?.week;
  const rows = weekly.weeks.map((w) => ({ ...(w.rows.find((r) => r.machine === name) || {}), week: w.week, start: w.start }));
  return h('div.table-wrap', {}, h('table.data', { id: 'machine-weeks' },
    h('thead', {}, h('tr', {}, ['Week', 'Held', 'Goodput', 'Where the time went'].map((c, i) => h('th', { scope: 'col', class: i === 1 || i === 2 ? 'num' : null, text: c })))),
    h('tbody', {}, rows.map((r) => h('tr', { 'data-partial': r.week === nowWeek ? 'true' : null },
      h('td', {}, `${r.week} (from ${r.start.slice(0, 10)})`, r.week === nowWeek ? h('span.partial', { text: ' partial: this week so far' }) : null),
      h('td.num', { text: gpuh(r.allocated_gpu_hours) }), h('td.num', { text: pct(r.goodput) }),
      h('td.barcell', {}, stackedBar(r)))))));
}

// Drain (no new placement; runs there are stopped with the checkpoint signal and placed again
// elsewhere) and Undrain, with a confirmation step, for operators and org admins.
function drainButton(me, m) {
  if (!sees(me)) return null;
  const box = h('div.stop', { id: 'drain-box' });
  const verb = m.drained ? 'undrain' : 'drain';
  const label = m.drained ? 'Undrain' : 'Drain';
  const ask = h('button', { type: 'button', id: 'drain', class: m.drained ? null : 'danger', text: `${label} machine`, onclick: () => {
    box.dataset.hold = '';
    box.replaceChildren(h('span', { text: m.drained ? 'Let this machine take work again? ' : `Drain ${m.name}? No new run is placed here and the ${(m.runs || []).length} run(s) here are stopped with the checkpoint signal, to be placed elsewhere. ` }),
      h('button', { type: 'button', id: 'drain-confirm', class: m.drained ? null : 'danger', text: label, onclick: async () => {
        try {
          await api(`/machines/${encodeURIComponent(m.name)}/${verb}`, { method: 'POST', body: {} });
          delete box.dataset.hold;
          window.dispatchEvent(new Event('astraeus:refresh'));
        } catch (e) { box.append(h('span.error', { role: 'alert', text: e.message })); }
      } }), ' ', h('button', { type: 'button', text: 'Cancel', onclick: () => { delete box.dataset.hold; box.replaceChildren(ask); } }));
    box.querySelector('#drain-confirm').focus();
  } });
  box.append(ask);
  return box;
}

