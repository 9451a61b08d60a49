// The web pages' entry: sign-in with an API token (traded for the session cookie, never kept by
// the page nor put in a URL), sign-out (ends the session on the server), and the hash router:
// #/goodput, #/runs, #/run/<workspace>/<run>, #/machines, #/machine/<name>, #/fairness.
import { api, session, h, ApiError } from './lib.js';
import { goodputView } from './goodput.js';
import { runsView } from './runs.js';
import { runView } from './run.js';
import { fairnessView } from './fairness.js';
import { loaded, stop as stopLive, unreachable, keepFocus, keepScroll } from './live.js';
import { hashState } from './url.js';

const $ = (id) => document.getElementById(id);
let me = null;  // GET /v1/whoami of the signed-in session
let routing = 0;  // the latest route(): an older one still loading is not shown

function showSignIn(error) {
  me = null;
  $('nav').hidden = true;
  $('signout').hidden = true;
  $('who').textContent = '';
  $('view').replaceChildren();
  $('signin').hidden = false;
  $('signin-error').textContent = error || '';
  $('token').focus();
}

// Shows the views for `who` (whoami of the session).
function signedIn(who) {
  me = who;
  $('token').value = '';
  $('signin').hidden = true;
  $('nav').hidden = false;
  $('signout').hidden = false;
  $('who').textContent = me.scope === 'workspace'
    ? `workspace ${me.workspace} · ${me.cluster}`
    : `${me.scope} · ${me.organization} / ${me.cluster}`;
  route();
}

async function signIn(token) {
  try {
    signedIn(await session.start(token));
  } catch (e) {
    const why = e instanceof ApiError && e.status === 401
      ? `The token was refused: ${e.message}. Check it, or create one with "astraeus admin token create".`
      : `Cannot sign in: ${e.message}`;
    showSignIn(why);
  }
}

// At load: this browser's session, if it has one (another tab signed in); the form otherwise.
async function resume() {
  try {
    signedIn(await api('/whoami'));
  } catch (e) {
    showSignIn(e instanceof ApiError && e.status === 401 ? '' : `Cannot reach the service: ${e.message}`);
  }
}

async function route(ev) {
  if (!me) { stopLive(); return; }
  const focused = document.activeElement && document.activeElement.id;
  const mine = ++routing;
  const { parts, params } = hashState();
  const name = parts[0];
  const key = parts.join('/');  // the view and what it shows (a run's page: which run)
  for (const a of document.querySelectorAll('#nav a')) {
    const on = a.dataset.view === name || (name === 'run' && a.dataset.view === 'runs') || (name === 'machine' && a.dataset.view === 'machines');
    if (on) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    // The top bar's link reopens a view as it was last seen (its URL state).
    if (a.dataset.view === name) a.setAttribute('href', location.hash || `#/${name}`);
  }
  const view = $('view');
  // A refresh of the view on screen (automatic, a retry, a filter or period changed, Back
  // between two states of it) keeps it until the new one is ready (no flicker).
  const refresh = ev && ['astraeus:refresh', 'astraeus:navigate', 'astraeus:tick', 'hashchange'].includes(ev.type) &&
    view.dataset.shown === key;
  if (!refresh) { view.replaceChildren(h('p.note', { text: 'Loading…' })); delete view.dataset.shown; }
  view.removeAttribute('data-ready');
  let node, failed = null, hint = 0;
  try {
    if (name === 'runs') node = await runsView(me, params);
    else if (name === 'run') node = await runView(me, parts[1], parts[2], params);
    else if (name === 'machines' || name === 'machine') {
      // Loaded when first shown (not part of the first view's bytes).
      const m = await import('./machine.js');
      node = name === 'machines' ? await m.machinesView(me, params) : await m.machineView(me, parts[1] || '');
    }
    else if (name === 'fairness') node = await fairnessView(me);
    else node = await goodputView(me, params);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return showSignIn(`Signed out: ${e.message}`);
    node = h('p.error', { role: 'alert', text: `Cannot show this view: ${e.message}` });
    failed = e;
  }
  if (mine !== routing || !me) return;
  const again = () => route({ type: 'astraeus:tick' });
  // The service cannot be reached: the view on screen stays (with its time), a banner says so.
  if (failed && unreachable(failed) && view.dataset.shown === key) {
    view.setAttribute('data-ready', name);
    return loaded(name, again, failed);
  }
  const restoreFocus = keepFocus(view);
  const restoreScroll = keepScroll(view);
  view.replaceChildren(node);
  view.setAttribute('data-ready', name);
  view.dataset.shown = key;
  restoreScroll();
  hint = Number(node.dataset?.refreshS || 0);
  loaded(name, again, failed, hint);
  if (!performance.getEntriesByName('astraeus:first-view').length) performance.mark('astraeus:first-view');
  const title = view.querySelector('h1');
  document.title = `${title ? title.textContent : 'Astraeus'} · Astraeus`;
  // Keyboard and screen-reader users land on the new view's heading; a refresh of the same view
  // (a filter changed) keeps the focus on the control they used.
  if (ev && ev.type === 'hashchange' && title) { title.tabIndex = -1; title.focus(); }
  else if (focused && document.getElementById(focused)) document.getElementById(focused).focus();
  else if (refresh) restoreFocus();
}

$('signin-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const token = $('token').value.trim();
  if (token) signIn(token);
});
$('signout').addEventListener('click', async () => {
  try {
    await session.end();
  } catch (e) {
    return showSignIn(`Sign-out failed: ${e.message}. The session ends by itself when it expires.`);
  }
  location.hash = '';
  showSignIn('Signed out.');
});
window.addEventListener('hashchange', route);
window.addEventListener('astraeus:navigate', route);
// Choosing the view on screen again in the top bar refreshes it (and retries an unreachable
// service) rather than doing nothing.
$('nav').addEventListener('click', (ev) => {
  const a = ev.target.closest('a[data-view]');
  if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0 || a.dataset.view !== hashState().name) return;
  ev.preventDefault();
  route({ type: 'astraeus:refresh' });
});
window.addEventListener('astraeus:refresh', route);

sessionStorage.removeItem('astraeus.token');  // where earlier versions kept the token
resume();
