// Live views: each view refreshes itself (the pages' data every PAGE_S seconds, a run's page and
// its log every RUN_S), paused while the tab is hidden, with "Updated HH:MM:SS UTC" above the
// view; when the service cannot be reached a banner says so, the view on screen stays, and the
// page retries by itself (every RETRY_S) until it answers. The page's query `?refresh=N` sets
// every interval to N seconds (`?refresh=0`: no automatic refresh or retry; docs/web.md).
import { h } from './lib.js';

export const PAGE_S = 20;
export const RUN_S = 5;
export const RETRY_S = 5;
const override = new URLSearchParams(location.search).get('refresh');
const fixed = override !== null && /^\d+(\.\d+)?$/.test(override) ? Number(override) : null;

// The seconds between two refreshes of `view` ('run' or a page), or 0 for none.
export function every(view) {
  if (fixed !== null) return fixed;
  return view === 'run' ? RUN_S : PAGE_S;
}
const retryEvery = (view) => (fixed !== null ? fixed : Math.min(RETRY_S, every(view)));

// The banner and the "updated" line, made once before the view.
let banner = null, updated = null;
function parts() {
  if (!banner) {
    const view = document.getElementById('view');
    banner = h('div.offline', { id: 'offline', role: 'alert', hidden: true });
    updated = h('p.updated', { id: 'updated' });
    view.before(banner, updated);
  }
  return { banner, updated };
}
const hms = (d) => d.toISOString().slice(11, 19);

// A failure that means the service is not there (the fetch itself failed, or a proxy in front
// answered for it) rather than an answer of the service.
export const unreachable = (e) => e && (e.status === 0 || e.status === 502 || e.status === 503 || e.status === 504);

let timer = 0;
let lastOk = null;
let current = null;  // {view, run}: what the next tick refreshes

function arm(seconds) {
  clearTimeout(timer);
  timer = 0;
  if (!current || !(seconds > 0) || document.visibilityState === 'hidden') return;
  timer = setTimeout(tick, seconds * 1000);
}
// A tick waits while the user is typing in the view (a field changed, not yet applied) or
// confirming something ([data-hold]).
function tick() {
  timer = 0;
  if (!current) return;
  const view = document.getElementById('view');
  const active = document.activeElement;
  const typing = active && view.contains(active) && active.tagName === 'INPUT' && active.type !== 'radio' &&
    active.type !== 'checkbox' && active.value !== active.defaultValue;
  if (typing || view.querySelector('[data-hold]')) { arm(1); return; }
  current.run();
}

// route() calls this after each load of `view` (ok: it was shown; error: it failed). `hint`: a
// shorter interval a view asks for (a run's page while its run is stopping: 1 s).
export function loaded(view, run, error = null, hint = 0) {
  current = { view, run };
  const { banner: b, updated: u } = parts();
  if (error && unreachable(error)) {
    const retry = retryEvery(view);
    b.replaceChildren(h('strong', { text: 'Cannot reach the service. ' }),
      `${lastOk ? `Showing what it answered at ${hms(lastOk)} UTC. ` : ''}`,
      retry > 0 ? `Retrying every ${retry} s (last try ${hms(new Date())} UTC). ` : `Last try ${hms(new Date())} UTC. `,
      h('button', { type: 'button', id: 'retry', text: 'Retry now', onclick: () => current && current.run() }));
    b.hidden = false;
    arm(retry);
    return;
  }
  b.hidden = true;
  b.replaceChildren();
  if (!error) {
    lastOk = new Date();
    u.textContent = `Updated ${hms(lastOk)} UTC`;
    u.dataset.at = lastOk.toISOString();
  }
  const n = every(view);
  arm(hint > 0 ? (n > 0 ? Math.min(n, hint) : hint) : n);
}

// Signed out: nothing refreshes, no banner.
export function stop() {
  current = null;
  arm(0);
  if (banner) { banner.hidden = true; updated.textContent = ''; }
}

// A hidden tab does not refresh; shown again, it refreshes at once when its data is older than
// its interval, else when the interval is over.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'hidden') { clearTimeout(timer); timer = 0; return; }
  if (!current) return;
  const n = every(current.view);
  if (!(n > 0) && banner && banner.hidden) return;
  const age = lastOk ? (Date.now() - lastOk.getTime()) / 1000 : Infinity;
  if (banner && !banner.hidden) current.run();
  else if (age >= n) current.run();
  else arm(n - age);
});

// The scroll of elements marked [data-keep-scroll] (the logs) across a refresh: one at its end
// stays at its end (follows new lines), another keeps its place. New ones start at their end.
export function keepScroll(view) {
  const before = new Map([...view.querySelectorAll('[data-keep-scroll][id]')].map((e) =>
    [e.id, { top: e.scrollTop, end: e.scrollTop + e.clientHeight >= e.scrollHeight - 4 }]));
  return () => {
    for (const e of view.querySelectorAll('[data-keep-scroll][id]')) {
      const was = before.get(e.id);
      e.scrollTop = !was || was.end ? e.scrollHeight : was.top;
    }
  };
}

// The focused control across a refresh that rebuilds the view: found again by its place in the
// view (its child indexes) when it has no id.
export function keepFocus(view) {
  const a = document.activeElement;
  if (!a || a === view || !view.contains(a) || a.id) return () => {};
  const path = [];
  for (let e = a; e && e !== view; e = e.parentElement) path.unshift([...e.parentElement.children].indexOf(e));
  return () => {
    let e = view;
    for (const i of path) { e = e && e.children[i]; }
    if (e && e.tagName === a.tagName && typeof e.focus === 'function') e.focus({ preventScroll: true });
  };
}
