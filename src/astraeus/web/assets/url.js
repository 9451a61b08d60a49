// A view's state in the URL's hash, so that a link (or a reload) reopens the same view:
// #/<view>[/<part>...][?key=value&...], e.g. #/goodput?period=1d&by=pool&sort=goodput&dir=asc,
// #/runs?state=pending&pool=default&sort=submitted&dir=desc, #/run/<workspace>/<run>?worker=1.
// Parts are URI-encoded (a name may hold '/' or '?'); docs/web.md lists the keys of each view.

// The hash now: {name, parts, params (URLSearchParams)}.
export function hashState() {
  const raw = location.hash.replace(/^#\/?/, '');
  const cut = raw.indexOf('?');
  const path = cut < 0 ? raw : raw.slice(0, cut);
  const parts = (path || 'goodput').split('/').map(decodeURIComponent);
  return { name: parts[0], parts, params: new URLSearchParams(cut < 0 ? '' : raw.slice(cut + 1)) };
}

// The hash of the view on screen with `changes` applied to its query ('' or null removes a key).
export function withParams(changes) {
  const { parts, params } = hashState();
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined || v === null || v === '') params.delete(k); else params.set(k, String(v));
  }
  const q = params.toString();
  return `#/${parts.map(encodeURIComponent).join('/')}${q ? `?${q}` : ''}`;
}

// A new state of the view on screen: a new history entry (Back returns to the previous one),
// shown at once (astraeus:navigate: the view stays until the new one is ready, the focus stays
// on the control used).
export function navigate(changes) {
  const next = withParams(changes);
  if (next === location.hash) return;
  history.pushState(null, '', next);
  window.dispatchEvent(new Event('astraeus:navigate'));
}

// A state that needs no new load (a column sorted in the page): the URL only, no history entry.
export function remember(changes) {
  const next = withParams(changes);
  if (next !== location.hash) history.replaceState(null, '', next);
}

// The sort of a table from the URL: {sortBy: column index, desc} for columns with `key`s, or the
// defaults; `onSort` keeps a new sort in the URL.
export function sortFromUrl(columns, params, sortBy, desc) {
  const i = columns.findIndex((c) => c.key && c.key === params.get('sort') && c.value);
  return {
    sortBy: i >= 0 ? i : sortBy,
    desc: i >= 0 ? params.get('dir') !== 'asc' : desc,
    onSort: (k, down) => remember({ sort: columns[k].key || null, dir: down ? 'desc' : 'asc' }),
  };
}

// A new state the view shows by itself (without a new route): a new history entry, no event.
export function push(changes) {
  const next = withParams(changes);
  if (next !== location.hash) history.pushState(null, '', next);
}
