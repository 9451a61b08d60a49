// The Fairness view (GET /v1/fairness): per pool, each workspace's GPU time received against
// what it deserved over ASTRAEA's fairness window (deserved = min(demand, its share) over time),
// now and hour by hour, and why each pending run waits.
import { api, h, s, gpuh, when, message, counted } from './lib.js';
import { runHref, poolHref, workspaceHref, nameLink } from './links.js';

const RECEIVED = 'var(--c-restart)';  // the theme's blue (style.css)
const DESERVED = 'var(--fg)';  // the text colour of the theme (style.css)

export async function fairnessView(me) {
  const doc = await api('/fairness');
  const hours = doc.window_s / 3600;
  const root = h('section.view', { 'aria-labelledby': 'fair-h' }, h('h1', { id: 'fair-h', text: 'Fairness' }),
    h('p.note', {}, `GPU time each workspace received against what it deserved over the last ${hours} hours (the fairness window, in ${doc.bucket_s / 60}-minute buckets). `,
      'Deserved is its weighted share of the pool, capped by what it asked for; a workspace below 100% is owed GPU time and goes first.'));
  if (me.scope === 'workspace') root.append(message('Your token shows your own workspace only.'));
  for (const p of doc.pools) root.append(poolSection(p));
  root.append(h('h2', { text: 'Why pending runs wait' }));
  root.append(doc.pending.length
    ? h('ul.pending', { id: 'pending-list' }, doc.pending.map((r) => h('li', {},
      nameLink(runHref(r.workspace, r.run), `${r.workspace}/${r.run}`),
      ` (${counted(r.gpus, 'GPU')} in `, nameLink(poolHref(r.pool), r.pool), `, waiting since ${when(r.waiting_since)}): `,
      h('strong', { text: r.reason }), r.explanation ? h('span', { text: ` — ${r.explanation}` }) : null)))
    : message('No run is waiting.'));
  return root;
}

function poolSection(p) {
  const sec = h('section.pool', {}, h('h2', {}, 'Pool ', nameLink(poolHref(p.pool), p.pool)),
    h('p.note', { text: `${counted(p.gpus, 'GPU')}, ${p.free_gpus} free · policy ${p.policy} · as of ${when(p.at)}` }));
  if (!p.workspaces.length) { sec.append(message('No workspace.')); return sec; }
  const rows = p.workspaces.map((w) => h('tr', {},
    h('td', { class: 'name' }, nameLink(workspaceHref(w.workspace), w.workspace)), h('td.num', { text: String(w.weight) }),
    h('td.num', { text: `${w.used_gpus} / ${w.quota_gpus}` }), h('td.num', { text: String(w.demand_gpus) }),
    h('td.num', { text: gpuh(w.received_gpu_hours) }), h('td.num', { text: gpuh(w.deserved_gpu_hours) }),
    h('td.num', { text: w.fairness === undefined ? '-' : `${Math.round(w.fairness * 100)}%` }),
    h('td.barcell', {}, pairBar(w, Math.max(...p.workspaces.map((x) => Math.max(x.received_gpu_hours, x.deserved_gpu_hours)))))));
  sec.append(h('div.table-wrap', {}, h('table.data', { class: 'fair-table' },
    h('caption', { text: 'Over the fairness window' }),
    h('thead', {}, h('tr', {}, ['Workspace', 'Weight', 'GPUs held / share', 'Asking', 'Received GPU-h', 'Deserved GPU-h', 'Received ÷ deserved', 'Received vs deserved']
      .map((c, i) => h('th', { scope: 'col', class: i > 0 && i < 7 ? 'num' : null, text: c })))),
    h('tbody', {}, rows))));
  sec.append(h('h3', { text: 'Hour by hour' }), key(), h('div.multiples', {}, p.workspaces.map(history)));
  return sec;
}

function key() {
  const sw = (cls, color) => { const e = h(`span.${cls}`); e.style.borderColor = color; if (cls === 'swatch') e.style.backgroundColor = color; return e; };
  return h('ul.legend', {}, h('li', {}, sw('swatch', RECEIVED), 'received'), h('li', {}, sw('tick', DESERVED), 'deserved'));
}

// Received (a filled bar) against deserved (a black tick) over the window.
function pairBar(w, max) {
  const box = h('div.pair', { role: 'img', 'aria-label': `received ${gpuh(w.received_gpu_hours)}, deserved ${gpuh(w.deserved_gpu_hours)} GPU-hours` });
  const got = h('span.got');
  got.style.width = `${max > 0 ? (100 * w.received_gpu_hours) / max : 0}%`;
  got.style.backgroundColor = RECEIVED;
  const due = h('span.due');
  due.style.left = `${max > 0 ? (100 * w.deserved_gpu_hours) / max : 0}%`;
  box.append(got, due);
  return box;
}

// One small chart per workspace: received per bucket (bars) and deserved (ticks).
function history(w) {
  const W = 300, H = 130, L = 36, B = 28, T = 8, R = 6;
  const hist = w.history;
  const max = Math.max(1e-9, ...hist.map((b) => Math.max(b.received_gpu_hours, b.deserved_gpu_hours)));
  const step = (W - L - R) / Math.max(1, hist.length);
  const y = (v) => T + (H - T - B) * (1 - v / max);
  const g = s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart small', role: 'img', 'aria-label': `${w.workspace}: received and deserved GPU-hours per bucket` });
  g.append(s('line', { x1: L, x2: W - R, y1: y(0), y2: y(0), class: 'grid' }), s('line', { x1: L, x2: W - R, y1: y(max), y2: y(max), class: 'grid' }),
    s('text', { x: L - 4, y: y(max) + 4, 'text-anchor': 'end', class: 'tick' }, max.toFixed(max < 10 ? 1 : 0)),
    s('text', { x: L - 4, y: y(0) + 4, 'text-anchor': 'end', class: 'tick' }, '0'),
    s('text', { x: 10, y: (H - B + T) / 2, transform: `rotate(-90 10 ${(H - B + T) / 2})`, 'text-anchor': 'middle', class: 'axis' }, 'GPU-h'));
  hist.forEach((b, i) => {
    const x = L + i * step;
    g.append(s('rect', { x: x + step * 0.15, width: step * 0.7, y: y(b.received_gpu_hours), height: y(0) - y(b.received_gpu_hours), fill: RECEIVED, opacity: b.partial ? 0.55 : 1 },
      s('title', {}, `${when(b.start)}${b.partial ? ' (so far)' : ''}: received ${gpuh(b.received_gpu_hours)}, deserved ${gpuh(b.deserved_gpu_hours)} GPU-h`)));
    g.append(s('line', { x1: x + step * 0.05, x2: x + step * 0.95, y1: y(b.deserved_gpu_hours), y2: y(b.deserved_gpu_hours), stroke: DESERVED, 'stroke-width': 2 }));
  });
  const first = hist[0], last = hist[hist.length - 1];
  if (first) g.append(s('text', { x: L, y: H - B + 14, class: 'tick' }, first.start.slice(11, 16)));
  if (last) g.append(s('text', { x: W - R, y: H - B + 14, 'text-anchor': 'end', class: 'tick' }, last.start.slice(11, 16)));
  g.append(s('text', { x: (W + L) / 2, y: H - 2, 'text-anchor': 'middle', class: 'axis' }, 'bucket start (UTC)'));
  return h('figure.multiple', {}, h('figcaption', { text: w.workspace }), g);
}
