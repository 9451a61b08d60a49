// Seeds a live `astraeus serve` (simulated executor) with RUNS runs through the public API
// (POST /v1/runs, CONCURRENCY requests at a time, spread round-robin over the workspaces whose
// tokens are in TOKENS, "ws=token,ws=token,...", and over the pools in POOLS), then waits until
// every run has ended (GET /v1/runs?state=... lists none pending, starting, running or
// stopping), so that the goodput ledger no longer changes under the checks. Run i is named
// "<ws>-<i, 5 digits>", asks 1 worker of GPUS[i mod 6] GPUs for SIM[i mod 7] service seconds.
// Prints the seconds taken; exits 1 on a refused submission or when the runs do not end within
// WAIT_S seconds (default 120). Used by scale_server.sh (web_pages_scale, bench/web_scale.sh).
const { BASE, TOKENS, POOLS = 'default' } = process.env;
const RUNS = Number(process.env.RUNS || 5000);
const CONCURRENCY = Number(process.env.CONCURRENCY || 8);
const WAIT_S = Number(process.env.WAIT_S || 120);
const GPUS = [1, 1, 2, 2, 4, 8];
const SIM = [600, 900, 1200, 1800, 2400, 3000, 3600];
const spaces = TOKENS.split(',').map((p) => { const [ws, token] = p.split('='); return { ws, token }; });
const pools = POOLS.split(',');
const t0 = Date.now();

async function submit(i) {
  const { ws, token } = spaces[i % spaces.length];
  const body = { name: `${ws}-${String(i).padStart(5, '0')}`, workers: 1, gpus_per_worker: GPUS[i % GPUS.length],
    pool: pools[i % pools.length], sim_duration_s: SIM[i % SIM.length] };
  for (let attempt = 0; ; attempt++) {
    const r = await fetch(`${BASE}/v1/runs`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body) });
    if (r.status === 201) return;
    const text = await r.text();
    if (r.status !== 503 || attempt >= 5) throw new Error(`POST /v1/runs ${body.name}: ${r.status} ${text}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

let next = 0;
await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
  while (next < RUNS) await submit(next++);
}));
const submitted = (Date.now() - t0) / 1000;

const admin = process.env.ADMIN;
// Whether any run is in `state` (0 or 1).
const matches = async (state) => {
  const r = await fetch(`${BASE}/v1/runs?state=${state}&limit=1`, { headers: { Authorization: `Bearer ${admin}` } });
  return (await r.json()).runs.length;
};
let left = -1;
for (const until = Date.now() + WAIT_S * 1000; Date.now() < until;) {
  left = 0;
  for (const s of ['pending', 'starting', 'running', 'stopping']) left += await matches(s);
  if (left === 0) break;
  await new Promise((res) => setTimeout(res, 500));
}
const ended = (Date.now() - t0) / 1000;
console.log(`seeded ${RUNS} runs in ${submitted.toFixed(1)} s; all ended after ${ended.toFixed(1)} s${left ? ` (NOT: ${left} left)` : ''}`);
process.exit(left === 0 ? 0 : 1);
