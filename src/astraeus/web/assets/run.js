// A run's page: state and reason, its workers and their machines, its attempts on a timeline
// (placed, ended with the outcome), its goodput and bar under Goodput, each worker's progress,
// its logs when the server has GET /v1/runs/{run}/logs, and stop for its owner. A pending run
// shows why it waits, its place in its pool's order and its estimated start (the scheduler's
// forecast). Refreshed every few seconds (live.js), every second while the run is stopping; the
// log's worker is the URL's (#/run/<workspace>/<run>?worker=K).
import { api, q, h, s, gpuh, pct, when, CATEGORIES, stackedBar, legend, biggestLoss, message, ApiError, unmeasuredNote } from './lib.js';
import { stateBadge } from './runs.js';
import { navigate } from './url.js';
import { machineHref, poolHref, workspaceHref, nameLink } from './links.js';

// An attempt's colour by how it ended (style.css classes: the categories' colours of the theme).
const OUTCOME_CLASS = { succeeded: 'c-productive', failed: 'c-failure', preempted: 'c-preemption', lease: 'c-preemption', stopped: 'o-stopped', cancelled: 'o-stopped', '': 'c-restart' };

export async function runView(me, ws, name, params = new URLSearchParams()) {
  const at = q({ workspace: ws });
  const path = `/runs/${encodeURIComponent(name)}`;
  const [run, detail, gp] = await Promise.all([api(`${path}${at}`), api(`${path}/attempts${at}`), api(`${path}/goodput${at}`)]);
  const root = h('section.view', { 'aria-labelledby': 'run-h' },
    h('p.crumb', {}, h('a', { href: '#/runs', text: 'Runs' }), ' / ', nameLink(workspaceHref(run.workspace), run.workspace)),
    h('h1', { id: 'run-h', text: run.name }));
  const stalled = run.state === 'running' ? (detail.workers || []).filter((w) => w.stalled).length : 0;
  root.append(h('p', { id: 'run-state' }, 'State: ', stateBadge({ ...run, stalled_workers: stalled })));
  if (run.state === 'pending') root.append(pendingFacts(run, detail.now));
  const canStop = !['succeeded', 'failed', 'stopped', 'cancelled'].includes(run.state) &&
    (me.scope === 'org-admin' || (me.scope === 'workspace' && me.workspace === run.workspace));
  if (canStop) root.append(stopButton(path, at));
  // A stop takes the workers' grace: the page shows "stopping" and looks again every second
  // until the run has stopped (while it is still the page on screen; live.js).
  if (run.state === 'stopping') root.dataset.refreshS = '1';

  const dl = h('dl.facts');
  const fact = (k, v) => dl.append(h('dt', { text: k }), h('dd', {}, v));
  fact('Workspace', nameLink(workspaceHref(run.workspace), run.workspace));
  fact('Pool', nameLink(poolHref(run.pool), run.pool));
  fact('Workers', `${run.workers} × ${run.gpus_per_worker} ${run.gpus_per_worker === 1 ? 'GPU' : 'GPUs'}`);
  fact('Submitted', when(run.submitted_at));
  fact('Started', when(run.started_at));
  fact('Ended', when(run.ended_at));
  fact('Time limit', run.time_limit_s ? `${run.time_limit_s} s` : '-');
  fact('Command', commandText(run.command));
  if (run.image) fact('Image', run.image);
  fact('Attempts', String(run.attempts));
  root.append(dl);

  root.append(h('h2', { text: 'Goodput' }));
  const loss = biggestLoss(gp);
  root.append(h('p', { id: 'run-goodput' }, `Goodput ${pct(gp.goodput)} · held ${gpuh(gp.allocated_gpu_hours)} GPU-h · productive ${gpuh(gp.productive_gpu_hours)} GPU-h · waiting ${gpuh(gp.waiting_gpu_hours)} GPU-h`,
    loss ? ` · biggest loss: ${loss.label.toLowerCase()} ${gpuh(loss.value)} GPU-h` : ''));
  root.append(stackedBar(gp), legend());
  if (unmeasuredNote(gp)) root.append(h('p.note', { id: 'run-unmeasured', text: unmeasuredNote(gp) }));

  root.append(h('h2', { text: 'Attempts' }), timeline(detail));
  if (Array.isArray(run.history) && run.history.length) root.append(historyList(run.history));
  root.append(h('h2', { text: 'Workers' }), workersTable(detail.workers));
  // Logs are readable inside the run's workspace only (org admins and operators get a 403).
  const worker = Math.min(run.workers - 1, Math.max(0, Number.parseInt(params.get('worker'), 10) || 0));
  const logs = me.scope === 'workspace' && me.workspace === run.workspace ? await logsSection(path, at, run.workers, worker, run.attempts) : null;
  if (logs) root.append(logs);
  return root;
}

// Why a pending run waits, its place in its pool's order (1 = next) and when it is expected to
// start (the scheduler's forecast, docs/api.md "Why and when a pending run starts"; unknown when
// it cannot tell), with how far ahead that is on the service's clock (`now`).
function pendingFacts(run, now) {
  const eta = run.estimated_start;
  const ahead = eta && now ? Math.round((Date.parse(eta) - Date.parse(now)) / 60000) : null;
  const inText = ahead === null ? '' : ahead <= 0 ? ' (due now)' : ahead < 120 ? ` (in ${ahead} min)` : ` (in ${Math.round(ahead / 60)} h)`;
  return h('dl.facts.pending-facts', { id: 'run-pending', 'data-position': run.position ?? '', 'data-estimated-start': eta || '' },
    h('dt', { text: 'Waiting because' }), h('dd', { id: 'run-reason', text: run.reason || 'waiting for the next round' }),
    h('dt', { text: 'Position' }), h('dd', { id: 'run-position', text: run.position ? `${run.position} in pool ${run.pool}` : '-' }),
    h('dt', { text: 'Estimated start' }), h('dd', { id: 'run-eta', text: eta ? `${when(eta)}${inText}` : 'unknown (the forecast cannot tell)' }));
}

// A command as text: a string as is; an argv array joined by spaces, arguments with spaces or
// quotes shown quoted.
function commandText(cmd) {
  if (Array.isArray(cmd)) return cmd.length ? cmd.map((a) => (/[\s"'\\]/.test(a) ? JSON.stringify(a) : a)).join(' ') : '-';
  return cmd || '-';
}

// The run's states with when each began and why it stopped, when the server keeps them.
function historyList(history) {
  return h('div', {}, h('h3', { text: 'States' }), h('ol.history', { id: 'history-list' }, history.map((e) =>
    h('li', {}, `${when(e.at)} ${e.state}`, e.cause ? ` (${e.cause})` : '', e.attempt ? `, attempt ${e.attempt}` : ''))));
}

function stopButton(path, at) {
  const box = h('div.stop');
  const ask = h('button.danger', { type: 'button', id: 'stop', text: 'Stop run', onclick: () => {
    box.dataset.hold = '';  // no automatic refresh while the question is asked
    box.replaceChildren(h('span', { text: 'Stop this run? Its workers wind down (counted productive). ' }),
      h('button.danger', { type: 'button', id: 'stop-confirm', text: 'Stop', onclick: async () => {
        try { await api(`${path}/stop${at}`, { method: 'POST' }); window.dispatchEvent(new Event('astraeus:refresh')); }
        catch (e) { box.append(h('span.error', { role: 'alert', text: e.message })); }
      } }), ' ', h('button', { type: 'button', text: 'Cancel', onclick: () => { delete box.dataset.hold; box.replaceChildren(ask); } }));
    box.querySelector('#stop-confirm').focus();
  } });
  box.append(ask);
  return box;
}

// The run's life from submission to now (or its end): waiting stretches in grey, each attempt
// coloured by how it ended, with its number and outcome; the same as a list below.
function timeline(d) {
  const t0 = Date.parse(d.submitted_at);
  const t1 = Date.parse(d.ended_at || d.now);
  const span = Math.max(1, t1 - t0);
  const W = 720, H = 78, L = 8, R = 8;
  const x = (t) => L + ((W - L - R) * (Date.parse(t) - t0)) / span;
  const g = s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart timeline', role: 'img', 'aria-label': 'Attempts on a timeline' });
  g.append(s('rect', { x: L, y: 14, width: W - L - R, height: 26, class: 'o-waiting' }, s('title', {}, 'waiting to be placed')));
  for (const a of d.attempts) {
    const end = a.ended_at || d.ended_at || d.now;
    const x0 = x(a.started_at), x1 = Math.max(x0 + 2, x(end));
    g.append(s('rect', { x: x0, y: 14, width: x1 - x0, height: 26, class: OUTCOME_CLASS[a.outcome || ''] || 'c-restart' },
      s('title', {}, `attempt ${a.number}: ${when(a.started_at)} – ${a.ended_at ? when(a.ended_at) : 'now'} ${a.outcome || 'running'}`)));
    if (x1 - x0 > 30) g.append(s('text', { x: (x0 + x1) / 2, y: 31, 'text-anchor': 'middle', class: 'onbar' }, `#${a.number}`));
  }
  g.append(s('text', { x: L, y: 58, class: 'tick' }, `${when(d.submitted_at)} submitted`),
    s('text', { x: W - R, y: 58, 'text-anchor': 'end', class: 'tick' }, d.ended_at ? `${when(d.ended_at)} ended` : `${when(d.now)} now`),
    s('text', { x: W / 2, y: 74, 'text-anchor': 'middle', class: 'axis' }, 'time (UTC)'));
  const key = h('ul.legend.plain', {}, [['waiting', 'o-waiting'], ['running now', 'c-restart'], ['succeeded', 'c-productive'], ['failed', 'c-failure'], ['preempted', 'c-preemption'], ['stopped', 'o-stopped']]
    .map(([label, cls]) => h('li', {}, h('span', { class: `swatch ${cls}` }), label)));
  const list = h('ol.attempts', { id: 'attempt-list' }, d.attempts.map((a) => h('li', {},
    `Attempt ${a.number}: placed ${when(a.started_at)}, `, a.ended_at ? `ended ${when(a.ended_at)} — ${a.outcome || 'ended'}` : 'still going')));
  return h('div', {}, g, key, d.attempts.length ? list : message('Not placed yet.'));
}

function workersTable(workers) {
  const rows = workers.map((w) => h('tr', {},
    h('td.num', { text: String(w.index) }), h('td', { text: w.state }), h('td', {}, w.machine ? nameLink(machineHref(w.machine), w.machine) : '-'),
    h('td.num', { text: String(w.attempt) }), h('td.num', { text: w.step === undefined ? '-' : String(w.step) }),
    h('td.num', { text: w.steps_per_s === undefined ? '-' : w.steps_per_s.toFixed(2) }),
    h('td', { class: w.stalled || w.straggler ? 'warn' : null, text: [w.stalled ? 'stalled' : '', w.straggler ? 'straggler' : ''].filter(Boolean).join(', ') || 'ok' })));
  return h('div.table-wrap', {}, h('table.data', { id: 'workers-table' },
    h('thead', {}, h('tr', {}, ['Worker', 'State', 'Machine', 'Attempt', 'Last step', 'Steps/s', 'Health'].map((c, i) => h('th', { scope: 'col', class: [0, 3, 4, 5].includes(i) ? 'num' : null, text: c })))),
    h('tbody', {}, rows)));
}

// Logs, only when the server answers GET /v1/runs/{run}/logs (servers without it, executors that
// keep none and tokens outside the run's workspace get an error: no section then). One worker's
// output of every attempt in order (the last MAX_ATTEMPTS), a line "--- attempt K ---" before
// each attempt after the first, as `astra runs logs --follow` prints them; a choice of worker
// when there are several. Followed: each refresh reads only what was written since (the API's
// offset and next_offset), an attempt over (done) is not read again, and a new attempt appears
// at the end by itself; a log scrolled to its end stays at its end (live.js keepScroll).
const MAX_ATTEMPTS = 10;
const READS = 8;  // at most 8 reads (1 MiB each) per attempt and refresh
let logRun = '';
const logCache = new Map();  // `${worker}/${attempt}` -> {text, next, done} of the run on screen

async function attemptLog(path, at, worker, attempt) {
  const key = `${worker}/${attempt}`;
  const c = logCache.get(key) || { text: '', next: 0, done: false };
  for (let k = 0; k < READS && !c.done; k++) {
    const body = await api(`${path}/logs${at ? `${at}&` : '?'}worker=${worker}&attempt=${attempt}&offset=${c.next}`);
    if (typeof body === 'string' || !body || typeof body.text !== 'string') {  // a server without offsets
      c.text = typeof body === 'string' ? body : JSON.stringify(body, null, 2); c.done = true; break;
    }
    if (Number(body.size) < c.next) { c.text = ''; c.next = 0; continue; }  // cut by the log quota: read again
    c.text += body.text;
    const moved = Number(body.next_offset) > c.next;
    c.next = Number(body.next_offset) || c.next;
    c.done = !!body.done;
    if (!moved || c.next >= Number(body.size)) break;
  }
  logCache.set(key, c);
  return c;
}

async function logsSection(path, at, workers = 1, worker = 0, attempts = 1) {
  if (logRun !== `${path}${at}`) { logRun = `${path}${at}`; logCache.clear(); }
  const first = Math.max(1, attempts - MAX_ATTEMPTS + 1);
  const parts = [];
  let shown = 0;
  for (let a = first; a <= Math.max(1, attempts); a++) {
    let text;
    try { text = (await attemptLog(path, at, worker, a)).text; } catch (e) {
      if (a === attempts && !shown) return null;  // no log at all (no server support, not placed)
      text = `(no log for attempt ${a}: ${e.message})\n`;
    }
    shown++;
    if (a > first || first > 1) {
      if (parts.length && !parts[parts.length - 1].endsWith('\n')) parts.push('\n');
      parts.push(`--- attempt ${a} ---\n`);
    }
    parts.push(text);
  }
  const pre = h('pre.logs', { id: 'logs', tabindex: '0', 'data-keep-scroll': true, 'data-attempts': String(attempts), text: parts.join('') || '(empty)' });
  const pick = workers > 1 ? h('label', {}, 'Worker ', h('select', { id: 'log-worker', onchange: (ev) => navigate({ worker: ev.target.value === '0' ? null : ev.target.value }) },
    Array.from({ length: workers }, (_, k) => h('option', { value: String(k), selected: k === worker, text: String(k) })))) : null;
  const note = first > 1 ? h('p.note', { text: `Attempts ${first} to ${attempts} (the earlier ones: astra runs logs --attempt K).` }) : null;
  return h('div', {}, h('h2', { text: 'Logs' }), pick, note, pre);
}
