// Drill-down links shared by the views: a run's page, a machine's page, and the Runs view
// filtered by pool or workspace (filters in the URL, url.js); long names shortened in the
// middle (the start and the end are what tell names apart: "nlp-research-te…-ablation-3"),
// the whole name in the title (hover) and in the link itself.
import { h } from './lib.js';

const enc = encodeURIComponent;
export const runHref = (ws, run) => `#/run/${enc(ws)}/${enc(run)}`;
export const machineHref = (name) => `#/machine/${enc(name)}`;
export const poolHref = (pool) => `#/runs?pool=${enc(pool)}`;
export const workspaceHref = (ws) => `#/runs?workspace=${enc(ws)}`;

// `name` at most `max` characters (code points): the first and last parts kept, '…' between.
export function middle(name, max = 32) {
  const cps = [...String(name ?? '')];
  if (cps.length <= max) return cps.join('');
  const tail = Math.floor((max - 1) / 2);
  return `${cps.slice(0, max - 1 - tail).join('')}…${cps.slice(cps.length - tail).join('')}`;
}

// A link showing `name` shortened in the middle, the whole name in its title (and its
// aria-label when shortened, so that screen readers read the whole name).
export function nameLink(href, name, label = name) {
  const short = middle(label);
  return h('a', { href, title: label, 'aria-label': short !== label ? label : null, 'data-name': label, text: short });
}

// The same for a name that links nowhere.
export function nameText(name) {
  const short = middle(name);
  return h('span', { title: name, 'aria-label': short !== name ? name : null, 'data-name': name, text: short });
}
