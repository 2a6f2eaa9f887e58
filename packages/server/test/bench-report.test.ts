import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// `npm run bench` (bench/report/main.mjs) as a user runs it: rendering from a saved results file, and one tiny real
// run on SQLite. The full run's figures are not tested here: they are measured, on a quiet machine.

const ROOT = join(import.meta.dirname, '..', '..', '..');
const MAIN = join(ROOT, 'bench', 'report', 'main.mjs');
const SAMPLE = join(ROOT, 'bench', 'results', 'sample-quick.json');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function bench(args: string[], script = MAIN): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The charts a page links to, resolved from the page's folder. */
function chartLinks(page: string, pageFile: string): string[] {
  return [...page.matchAll(/!\[[^\]]*\]\(([^)]+\.svg)\)/g)].map((m) => join(dirname(pageFile), m[1] ?? ''));
}

interface W1Row {
  id: string;
  name?: string;
  role?: string;
  pairId?: string;
  protection?: string;
  protectionPairId?: string;
  durability?: string;
  attemptsPerSec: number;
  enqueuePerSec?: number;
  storeCpuMsPerAttempt?: number;
  pass: boolean;
  runs?: { attemptsPerSec: number }[];
}
interface Results {
  quick: boolean;
  baseline?: { cli: string; commit?: string };
  runs: { workload: string; script?: string; store: string; error?: string; data?: { results?: W1Row[] } & Record<string, unknown> }[];
}

const README_START = '<!-- bench:headline -->';
const README_END = '<!-- /bench:headline -->';

describe('npm run bench', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryd-bench-report-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('renders the page, its charts and the README headline from a saved results file, the same every time', async () => {
    const sample = JSON.parse(await readFile(SAMPLE, 'utf8')) as Results;
    const out = join(dir, 'from');
    await mkdir(out, { recursive: true });
    const readme = join(out, 'README.md');
    await copyFile(join(ROOT, 'README.md'), readme);
    const original = await readFile(readme, 'utf8');
    const docFile = join(out, 'docs', 'benchmarks.md');
    // A page written by hand, which the report replaces.
    await mkdir(dirname(docFile), { recursive: true });
    await writeFile(docFile, '# Benchmarks\n\n## Results\n\nA figure typed by hand: 1,234 attempts/s.\n');
    const run = await bench(['--from', SAMPLE, '--doc', docFile, '--charts', join(out, 'docs', 'bench'), '--readme', readme, '--quiet']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const page = await readFile(docFile, 'utf8');

    // A quick run says so, and every workload of the sample has its section.
    expect(sample.quick).toBe(true);
    expect(page).toContain('**QUICK SMOKE RUN**');
    for (const heading of ['## W1:', '## W2:', '## W3:', '## W4:', '## W5:', '## This build against the one before', '## Ceilings and space', '## Aims', '## Machine and software']) {
      expect(page).toContain(heading);
    }

    // The figures are the results file's: retryd on SQLite ÷ BullMQ and ÷ the bare loop, computed here from the raw rows.
    const w1 = sample.runs.find((r) => r.workload === 'w1')?.data?.results ?? [];
    const sqlite = w1.find((r) => r.id === 'retryd-sqlite-full');
    const bullmq = w1.find((r) => r.id === 'bullmq');
    const bare = w1.find((r) => r.id === 'bare');
    const bareStore = w1.find((r) => r.id === 'bare-store');
    expect(sqlite && bullmq && bare && bareStore).toBeTruthy();
    if (sqlite && bullmq && bare && bareStore) {
      expect(page).toContain(`${(sqlite.attemptsPerSec / bullmq.attemptsPerSec).toFixed(2)}× BullMQ`);
      expect(page).toContain(`${Math.round((100 * sqlite.attemptsPerSec) / bare.attemptsPerSec)} %`);
      // The aim is judged on the same ratio, beside the machine's ceilings for it: the bare loop ÷ BullMQ, and the
      // bare loop with SQLite's store work ÷ BullMQ, the one a durable dispatcher is held to.
      const ratio = sqlite.attemptsPerSec / bullmq.attemptsPerSec;
      const ceiling = bare.attemptsPerSec / bullmq.attemptsPerSec;
      const durable = bareStore.attemptsPerSec / bullmq.attemptsPerSec;
      // A reference below retryd itself bounds nothing in that run: the verdict then goes by the bare loop.
      const binding = durable >= ratio ? durable : ceiling;
      const verdict = ratio >= 2 ? 'met' : binding < 2 ? '**missed**, beyond the ceiling' : '**missed**';
      const noBound = durable >= ratio ? '' : ' (below retryd in this run: no bound)';
      expect(page).toContain(
        `| W1 SQLite: ≥ 2× BullMQ 5.81.5 (Redis) attempts/s | ${ratio.toFixed(2)}× | ${verdict} | the bare loop: ${ceiling.toFixed(2)}× BullMQ 5.81.5 (Redis); with the store's work: ${durable.toFixed(2)}×${noBound} |`,
      );
      expect(page).toContain(`| ${bareStore.name} | durable: WAL fsynced at every commit (synchronous=FULL) | `);
      // The enqueue aim's ceiling is the store's insert alone, as insert-floor.mjs measured it in the same run: the
      // best of its rows that call the store's insertTasks at the service's durability.
      const floor = sample.runs.find((r) => r.workload === 'ceilings' && r.store === 'sqlite' && r.script === 'insert-floor')?.data as
        | { rows: { kind: string; tasksPerSec: number }[]; ceilingTasksPerSec: number }
        | undefined;
      expect(floor?.rows.some((r) => r.kind === 'store' && r.tasksPerSec === floor.ceilingTasksPerSec)).toBe(true);
      const enqueued = sqlite.enqueuePerSec ?? NaN;
      const floorText = `the store's insert alone: ${Math.round(floor?.ceilingTasksPerSec ?? NaN).toLocaleString('en-US')} tasks/s`;
      const enqueueVerdict = enqueued >= 100_000 ? 'met' : (floor?.ceilingTasksPerSec ?? 0) < 100_000 ? '**missed**, beyond the ceiling' : '**missed**';
      expect(page).toContain(`| Enqueue SQLite: ≥ 100,000 tasks/s | ${Math.round(enqueued).toLocaleString('en-US')} tasks/s | ${enqueueVerdict} | ${floorText} |`);
      // W4's aim beside the bare relay's p99, durable for SQLite; the space per task beside its aim.
      const relay = sample.runs.find((r) => r.workload === 'ceilings' && r.script === 'w4-ceiling' && r.store.split(',').includes('sqlite'))?.data as
        | { sync: boolean; lag: { p99: number } }
        | undefined;
      expect(relay?.sync).toBe(true);
      expect(page).toContain(`| a bare relay, durable: p99 ${relay?.lag.p99.toFixed(1)} ms |`);
      const space = sample.runs.find((r) => r.workload === 'space' && r.store === 'sqlite')?.data as
        | { stores: { store: string; totalBytesPerTask: number }[] }
        | undefined;
      const bytes = space?.stores.find((s) => s.store === 'sqlite')?.totalBytesPerTask ?? NaN;
      expect(page).toContain(`| Space SQLite: ≤ 400 bytes per pending task | ${Math.round(bytes).toLocaleString('en-US')} B | ${bytes <= 400 ? 'met' : '**missed**'} | – |`);
    }
    // PostgreSQL and Redis are read against the bare loop with their own store's work, as SQLite is against its.
    for (const [store, name, peerId, peerName, factor] of [
      ['postgres', 'PostgreSQL', 'pgboss', 'pg-boss 10.4.2 (PostgreSQL)', 3],
      ['redis', 'Redis', 'bullmq', 'BullMQ 5.81.5 (Redis)', 1.5],
    ] as const) {
      const retryd = w1.find((r) => r.id === `retryd-${store}`);
      const peer = w1.find((r) => r.id === peerId);
      const bareStore = w1.find((r) => r.id === `bare-store-${store}`);
      expect(retryd && peer && bare && bareStore, store).toBeTruthy();
      if (!(retryd && peer && bare && bareStore)) continue;
      const ratio = retryd.attemptsPerSec / peer.attemptsPerSec;
      const durable = bareStore.attemptsPerSec / peer.attemptsPerSec;
      const binding = durable >= ratio ? durable : bare.attemptsPerSec / peer.attemptsPerSec;
      const verdict = ratio >= factor ? 'met' : binding < factor ? '**missed**, beyond the ceiling' : '**missed**';
      expect(page).toContain(
        `| W1 ${name}: ≥ ${factor}× ${peerName} attempts/s | ${ratio.toFixed(2)}× | ${verdict} | the bare loop: ${(bare.attemptsPerSec / peer.attemptsPerSec).toFixed(2)}× ${peerName}; with the store's work: ${durable.toFixed(2)}×${durable >= ratio ? '' : ' (below retryd in this run: no bound)'} |`,
      );
      expect(page).toContain(`| ${bareStore.name} | `);
    }

    // The sample ran a --baseline build beside this one: its rows are the before of the before-and-after table, not
    // contenders of the W1 table, and the ratio there is computed from the raw rows too.
    expect(sample.baseline?.cli).toMatch(/dist\/cli\/main\.js$/);
    // With the baseline, W1 also ran this build a second time (the control): its A/A ratio is in that table too.
    const sqliteBefore = w1.find((r) => r.role === 'before' && r.pairId === 'retryd-sqlite-full');
    const sqliteControl = w1.find((r) => r.role === 'control' && r.pairId === 'retryd-sqlite-full');
    expect(sqliteBefore).toBeTruthy();
    expect(sqliteControl).toBeTruthy();
    if (sqlite && sqliteBefore && sqliteControl) {
      const w1Table = /## W1:[\s\S]*?\n\n(\|[\s\S]*?)\n\n/.exec(page)?.[1] ?? '';
      expect(w1Table.split('\n').filter((line) => line.startsWith('| retryd'))).toHaveLength(3);
      const pair = /## This build against the one before[\s\S]*?\n\| SQLite \| ([^|]+) \| \*\*([^*]+)\*\* \|(?:[^|]*\|){2} ([^|(]+) \(/.exec(page);
      expect(pair?.[2]).toBe(`${(sqlite.attemptsPerSec / sqliteBefore.attemptsPerSec).toFixed(2)}×`);
      expect(pair?.[3]?.trim()).toBe(`${(sqlite.attemptsPerSec / sqliteControl.attemptsPerSec).toFixed(2)}×`);
    }

    // Every chart the page links to exists and is a whole SVG document: W1's bars, W4's lag, W3's rate per store.
    const charts = chartLinks(page, docFile);
    expect(charts.map((c) => c.slice(c.lastIndexOf('/') + 1)).sort()).toEqual(
      ['w1-attempts.svg', 'w3-rate-postgres.svg', 'w3-rate-redis.svg', 'w3-rate-sqlite.svg', 'w4-lag.svg'].sort(),
    );
    for (const chart of charts) {
      const svg = await readFile(chart, 'utf8');
      expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
      expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    }

    // The README changes between its markers only, and quotes the page's headline.
    const filled = await readFile(readme, 'utf8');
    const before = (s: string) => s.slice(0, s.indexOf(README_START));
    const after = (s: string) => s.slice(s.indexOf(README_END));
    expect(before(filled)).toBe(before(original));
    expect(after(filled)).toBe(after(original));
    const headline = /## Headline\n\n([\s\S]*?)\n\n## /.exec(page)?.[1];
    expect(headline).toMatch(/^- W1, retryd on SQLite/);
    // The sample has no run on a Redis with AOF: its Redis line leads with the run without persistence, and says so.
    expect(headline).toContain('- W1, retryd on Redis (NO durability; these results have no run on a Redis with AOF), ');
    expect(filled).toContain(headline);
    expect(filled).toContain('[docs/benchmarks.md](docs/benchmarks.md)');

    // Rendering again gives the same bytes: the page is a function of its results file (laid out alike, so the
    // links agree).
    const again = join(dir, 'again');
    const second = await bench(['--from', SAMPLE, '--doc', join(again, 'docs', 'benchmarks.md'), '--charts', join(again, 'docs', 'bench'), '--readme', 'none', '--quiet']);
    expect(second.code).toBe(0);
    expect(await readFile(join(again, 'docs', 'benchmarks.md'), 'utf8')).toBe(page);
    for (const name of await readdir(join(out, 'docs', 'bench'))) {
      expect(await readFile(join(again, 'docs', 'bench', name), 'utf8')).toBe(await readFile(join(out, 'docs', 'bench', name), 'utf8'));
    }

    // The hand-written page was kept in the history beside it, once: a generated page is not archived again.
    const historyFile = join(out, 'docs', 'benchmarks-history.md');
    const history = await readFile(historyFile, 'utf8');
    expect(history).toMatch(/^\n## The hand-assembled report that the generated one replaced \(\d{4}-\d\d-\d\d\)\n\n### Results\n\nA figure typed by hand: 1,234 attempts\/s\.\n$/);
    const third = await bench(['--from', SAMPLE, '--doc', docFile, '--charts', join(out, 'docs', 'bench'), '--readme', 'none', '--quiet']);
    expect(third.code).toBe(0);
    expect(await readFile(historyFile, 'utf8')).toBe(history);
    expect((await readdir(join(again, 'docs'))).sort()).toEqual(['bench', 'benchmarks.md']);
  });

  it('a quick run on SQLite measures W1, W4, the space and the ceilings, saves them and renders them', { timeout: 180_000 }, async () => {
    const out = join(dir, 'quick');
    const resultsFile = join(out, 'results.json');
    const docFile = join(out, 'benchmarks.md');
    const run = await bench(['--quick', '--stores', 'sqlite', '--peers', 'none', '--workloads', 'w1,w4,space,ceilings', '--out', resultsFile, '--doc', docFile, '--charts', out, '--quiet']);
    expect(run.code, run.stderr).toBe(0);
    const results = JSON.parse(await readFile(resultsFile, 'utf8')) as Results;
    expect(results.quick).toBe(true);
    expect(results.runs.map((r) => `${r.workload} ${r.script ?? ''} ${r.store} ${r.error ?? 'ok'}`)).toEqual([
      'w1  sqlite ok',
      'w4  sqlite ok',
      'space store-space sqlite ok',
      'ceilings insert-floor sqlite ok',
      'ceilings ingest-floor sqlite ok',
      'ceilings w4-ceiling sqlite ok',
      'ceilings w4-ceiling sqlite ok',
    ]);
    const w1 = results.runs[0]?.data?.results ?? [];
    // W1 with the default protections, and beside it with them off.
    expect(w1.map((r) => [r.id, r.pass])).toEqual([
      ['retryd-sqlite-full', true],
      ['retryd-sqlite-full-protection-off', true],
      ['bare', true],
      ['bare-store', true],
    ]);
    const page = await readFile(docFile, 'utf8');
    expect(page).toContain('| retryd (SQLite, synchronous=FULL');
    expect(page).not.toContain('## W2:');
    // The ceilings stand beside the aims they bound.
    expect(page).toMatch(
      /\| Enqueue SQLite: ≥ 100,000 tasks\/s \| [\d,]+ tasks\/s \| [^|]+ \| the store's insert alone: [\d,]+ tasks\/s; W6 through the least HTTP enqueue: [\d,]+ tasks\/s \|/,
    );
    // W6 through retryd and through the floor, side by side (no peer in this run).
    const ingest = results.runs.find((r) => r.script === 'ingest-floor')?.data as { rows: { id: string; tasksPerSec: number }[]; peerPerSec?: number } | undefined;
    expect(ingest?.rows.map((r) => r.id)).toEqual(['retryd', 'floor']);
    expect(ingest?.rows.every((r) => r.tasksPerSec > 0)).toBe(true);
    expect(ingest?.peerPerSec).toBeUndefined();
    expect(page).toContain("**W6's requests through the least an HTTP enqueue does**");
    expect(page).toMatch(
      /\| W4 SQLite: dispatch lag p99 < 2 ms \| [\d,.]+ ms \| [^|]+ \| a bare relay, durable: p99 [\d.]+ ms; the bare relay with the store's work: p99 [\d.]+ ms \|/,
    );
    // The relay with SQLite's work wrote what the hand-off writes: every task of the run, none missing.
    const relays = results.runs.filter((r) => r.script === 'w4-ceiling').map((r) => r.data as { store: string | null; rounds: { missing: number }[] });
    expect(relays.map((r) => r.store)).toEqual([null, 'sqlite']);
    expect(relays.every((r) => r.rounds.length === 1 && r.rounds[0]?.missing === 0)).toBe(true);
    expect(page).toContain("| W4's work on the SQLite store | SQLite |");
    // The headline's W4 lag stands beside what the machine allows: both relays of the run.
    expect(page).toMatch(/- W4 dispatch lag p99 on SQLite: [\d.]+ ms \(on this machine: a bare relay [\d.]+ ms, the relay with SQLite's work [\d.]+ ms\)\./);
    expect(page).toMatch(/\| Space SQLite: ≤ 400 bytes per pending task \| [\d,]+ B \|/);
    expect(chartLinks(page, docFile).map((c) => c.slice(c.lastIndexOf('/') + 1))).toEqual(['w1-attempts.svg', 'w4-lag.svg']);
  });

  it('reads the enqueue aims against W6 through the least HTTP enqueue when it ran, beside its own run of the peer', async () => {
    // By URL: the report's modules are plain JavaScript, without types.
    const { aims } = (await import(pathToFileURL(join(ROOT, 'bench', 'report', 'figures.mjs')).href)) as { aims: (results: unknown) => { aim: string; ceiling?: { text: string; beyond: boolean } }[] };
    const sample = JSON.parse(await readFile(SAMPLE, 'utf8')) as Results;
    const bullmq = { id: 'bullmq', name: 'BullMQ 5.81.5 (Redis)' };
    const ingest = (store: string, floorPerSec: number, peerPerSec?: number) => ({
      workload: 'ceilings',
      script: 'ingest-floor',
      store,
      data: { store, rows: [], floorPerSec, retrydPerSec: floorPerSec / 2, ...(peerPerSec === undefined ? {} : { peer: bullmq, peerPerSec }) },
    });
    const enqueueAim = (runs: unknown[], store: string) => aims({ ...sample, runs: [...sample.runs, ...runs] }).find((a) => a.aim.startsWith(`Enqueue ${store}`));
    // The sample alone: the store's insert alone is the ceiling, as before.
    expect(enqueueAim([], 'Redis')?.ceiling?.text).toMatch(/^the store's insert alone: [\d,]+ tasks\/s \([\d.]+× BullMQ 5\.81\.5 \(Redis\)\)$/);
    // With the floor: it binds, at its ratio to the peer in its own run, whatever the insert alone reached.
    const below = enqueueAim([ingest('redis', 19_124, 16_992)], 'Redis')?.ceiling;
    expect(below?.text).toMatch(/; W6 through the least HTTP enqueue: 19,124 tasks\/s \(1\.13× BullMQ 5\.81\.5 \(Redis\) beside it\)$/);
    expect(below?.beyond).toBe(true);
    expect(enqueueAim([ingest('redis', 40_000, 16_000)], 'Redis')?.ceiling?.beyond).toBe(false);
    // SQLite's aim is a rate: the floor's own, with or without a peer beside it.
    const sqlite = enqueueAim([ingest('sqlite', 120_000)], 'SQLite')?.ceiling;
    expect(sqlite?.text).toMatch(/; W6 through the least HTTP enqueue: 120,000 tasks\/s$/);
    expect(sqlite?.beyond).toBe(false);
    expect(enqueueAim([ingest('sqlite', 20_817, 17_095)], 'SQLite')?.ceiling?.beyond).toBe(true);
  });

  it('sets the space aims beside what the store’s peer keeps for the same calls, when the step measured it', async () => {
    const { aims } = (await import(pathToFileURL(join(ROOT, 'bench', 'report', 'figures.mjs')).href)) as { aims: (results: unknown) => { aim: string; met: boolean; ceiling?: { text: string; beyond: boolean } }[] };
    const sample = JSON.parse(await readFile(SAMPLE, 'utf8')) as Results;
    const space = (peers: unknown[]) => ({
      workload: 'space',
      script: 'store-space',
      store: 'postgres',
      data: { tasks: 1000, stores: [{ store: 'postgres', peer: 'pgboss', rows: [], totalBytesPerTask: 528 }], peers },
    });
    const spaceAim = (peers: unknown[]) => aims({ ...sample, runs: [...sample.runs.filter((r) => r.workload !== 'space'), space(peers)] }).find((a) => a.aim.startsWith('Space PostgreSQL'));
    const beside = spaceAim([{ peer: 'pgboss', name: 'pg-boss 10.4.2 (PostgreSQL)', rows: [], totalBytesPerTask: 464 }]);
    expect(beside?.met).toBe(false);
    expect(beside?.ceiling).toEqual({ text: 'no ceiling; pg-boss 10.4.2 (PostgreSQL), the same calls as jobs: 464 B (retryd 1.14× of it)', beyond: false });
    // Another peer's figures (or none) are not this store's.
    expect(spaceAim([{ peer: 'bullmq', name: 'BullMQ 5.81.5 (Redis)', rows: [], totalBytesPerTask: 1025 }])?.ceiling).toBeUndefined();
    expect(spaceAim([])?.ceiling).toBeUndefined();
  });

  it('leads W1 on Redis with the run on a Redis with AOF, against BullMQ on the same server; the run without persistence is a second row', async () => {
    const sample = JSON.parse(await readFile(SAMPLE, 'utf8')) as Results;
    const step = sample.runs.find((r) => r.workload === 'w1');
    const rows = step?.data?.results ?? [];
    const find = (id: string): W1Row => {
      const row = rows.find((r) => r.id === id);
      if (row === undefined) throw new Error(`the sample has no W1 row ${id}`);
      return row;
    };
    // The rows w1.mjs --redis-aof everysec adds, their figures set here (one round each, as the sample's).
    const aofLabel = 'AOF on, appendfsync everysec (NOT durable: up to 1 s lost)';
    const row = (from: string, id: string, attemptsPerSec: number, extra: Partial<W1Row>): W1Row => ({
      ...find(from),
      id,
      pairId: id,
      durability: aofLabel,
      attemptsPerSec,
      runs: [{ attemptsPerSec }],
      ...extra,
    });
    const aofRows = [
      row('retryd-redis', 'retryd-redis-aof', 6_000, { protection: 'defaults', protectionPairId: 'retryd-redis-aof', name: 'retryd (Redis, AOF everysec, prefix retryd-bench-w1, default protections)' }),
      row('retryd-redis', 'retryd-redis-aof-protection-off', 6_100, { protection: 'off', protectionPairId: 'retryd-redis-aof', name: 'retryd (Redis, AOF everysec, prefix retryd-bench-w1, --protection off)' }),
      row('bullmq', 'bullmq-aof', 4_000, { name: 'BullMQ 5.81.5 (Redis, AOF everysec)' }),
      row('bare-store-redis', 'bare-store-redis-aof', 7_000, { name: 'reference: bare undici loop, Redis store (AOF everysec) on the same thread' }),
    ];
    // The run on the machine's Redis with the defaults too, as w1.mjs runs it today: the AOF row leads all the same.
    const machineRows = rows.map((r) => (r.id === 'retryd-redis' ? { ...r, protection: 'defaults' } : r));
    const w1 = { ...step, data: { ...step?.data, redisAof: { appendfsync: 'everysec', durability: aofLabel }, results: [...machineRows, ...aofRows] } };
    const resultsFile = join(dir, 'aof-results.json');
    await writeFile(resultsFile, JSON.stringify({ ...sample, runs: sample.runs.map((r) => (r === step ? w1 : r)) }));
    const out = join(dir, 'aof');
    await mkdir(out, { recursive: true });
    const readme = join(out, 'README.md');
    await copyFile(join(ROOT, 'README.md'), readme);
    const docFile = join(out, 'benchmarks.md');
    const run = await bench(['--from', resultsFile, '--doc', docFile, '--charts', out, '--readme', readme, '--quiet']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const page = await readFile(docFile, 'utf8');

    // Every figure from the raw rows: each retryd row ÷ BullMQ on its own server.
    const [aof, aofOff, bullmqAof, bareStoreAof] = aofRows as [W1Row, W1Row, W1Row, W1Row];
    const [plain, bullmq, bare] = [find('retryd-redis'), find('bullmq'), find('bare')];
    const times = (a: W1Row, b: W1Row) => `${(a.attemptsPerSec / b.attemptsPerSec).toFixed(2)}×`;
    const headline = /## Headline\n\n([\s\S]*?)\n\n## /.exec(page)?.[1] ?? '';
    expect(headline).toContain(
      `- W1, retryd on Redis (AOF everysec, NOT durable: up to 1 s lost), with its default protections: **${times(aof, bullmqAof)}** the attempts/s of BullMQ 5.81.5 (Redis, AOF everysec) on the same server, ` +
        `${Math.round((100 * aof.attemptsPerSec) / bare.attemptsPerSec)} % of the machine's ceiling (a bare HTTP loop); ${times(aof, aofOff)} its attempts/s with them off (median of the rounds' ratios); ` +
        `on the machine's Redis (no persistence), ${times(plain, bullmq)} the attempts/s of BullMQ 5.81.5 (Redis) there.`,
    );
    expect(await readFile(readme, 'utf8')).toContain(headline);

    // W1's table: both Redis rows, each with its durability and its ratio to the peer on its own server.
    const w1Line = (name: string | undefined) => page.split('\n').find((line) => line.startsWith(`| ${name} | `)) ?? '';
    expect(w1Line(aof.name)).toContain(`| ${aofLabel} | `);
    expect(w1Line(aof.name)).toContain(`| ${times(aof, bullmqAof)} BullMQ 5.81.5 (Redis, AOF everysec) |`);
    expect(w1Line(plain.name)).toContain('| NO durability: appendonly no, save "" (everything since start is lost on a crash) | ');
    expect(w1Line(plain.name)).toContain(`| ${times(plain, bullmq)} BullMQ 5.81.5 (Redis) |`);
    expect(w1Line(bareStoreAof.name)).toContain(`| ${aofLabel} | `);
    expect(page).toContain("| Redis, W1's own server (`--redis-aof`) | AOF on, appendfsync everysec (NOT durable: up to 1 s lost) |");
    expect(page).toContain(`| Redis, AOF everysec | 6,000 | 6,100 | **${times(aof, aofOff)}** |`);

    // The aim is judged on the AOF pair, beside the bare loop with the Redis store's work on the same server.
    const ratio = aof.attemptsPerSec / bullmqAof.attemptsPerSec;
    const durable = bareStoreAof.attemptsPerSec / bullmqAof.attemptsPerSec;
    const binding = durable >= ratio ? durable : bare.attemptsPerSec / bullmqAof.attemptsPerSec;
    const verdict = ratio >= 1.5 ? 'met' : binding < 1.5 ? '**missed**, beyond the ceiling' : '**missed**';
    expect(page).toContain(
      `| W1 Redis, AOF everysec: ≥ 1.5× BullMQ 5.81.5 (Redis, AOF everysec) attempts/s | ${ratio.toFixed(2)}× | ${verdict} | the bare loop: ${(bare.attemptsPerSec / bullmqAof.attemptsPerSec).toFixed(2)}× BullMQ 5.81.5 (Redis, AOF everysec); with the store's work: ${durable.toFixed(2)}×${durable >= ratio ? '' : ' (below retryd in this run: no bound)'} |`,
    );
    expect(page).not.toContain('| W1 Redis: ≥');
    expect(await readFile(join(out, 'w1-attempts.svg'), 'utf8')).toContain('retryd, Redis, AOF everysec, default protections');
  });

  it('plans W1 on a Redis with AOF beside the machine’s when the run has Redis, at full size and quick', async () => {
    const { planRuns } = (await import(pathToFileURL(join(ROOT, 'bench', 'report', 'plan.mjs')).href)) as {
      planRuns: (options: { quick: boolean; stores?: string[] }) => { workload: string; args: string[] }[];
    };
    const w1Args = (quick: boolean, stores?: string[]) => planRuns({ quick, ...(stores === undefined ? {} : { stores }) }).find((s) => s.workload === 'w1')?.args.join(' ');
    for (const quick of [false, true]) {
      expect(w1Args(quick)).toMatch(/^--store sqlite,postgres,redis .* --redis-aof everysec$/);
      expect(w1Args(quick, ['redis'])).toMatch(/ --redis-aof everysec$/);
      expect(w1Args(quick, ['sqlite', 'postgres'])).not.toContain('--redis-aof');
    }
  });

  it('w1.mjs --redis-aof runs retryd and BullMQ on a Redis of its own with AOF beside the machine’s, then removes it', { timeout: 180_000 }, async () => {
    const jsonFile = join(dir, 'w1-aof.json');
    const w1 = join(ROOT, 'bench', 'service', 'w1.mjs');
    const run = await bench(['--store', 'redis', '--only', 'retryd,bullmq', '--tasks', '300', '--rounds', '1', '--protection', 'defaults', '--redis-aof', 'everysec', '--json-file', jsonFile], w1);
    expect(run.code, run.stderr).toBe(0);
    const output = JSON.parse(await readFile(jsonFile, 'utf8')) as { redisAof: { url: string; dir: string; durability: string }; results: W1Row[] };
    const aofLabel = 'AOF on, appendfsync everysec (NOT durable: up to 1 s lost)';
    expect(output.redisAof.durability).toBe(aofLabel);
    // The machine's Redis as it reports itself, read the way the benchmarks read it.
    const { redisDurability } = (await import(pathToFileURL(join(ROOT, 'bench', 'service', 'lib', 'servers.mjs')).href)) as {
      redisDurability: (redis: Redis) => Promise<{ label: string; persistence: string }>;
    };
    const redis = new Redis(process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379');
    const machine = await redisDurability(redis).finally(() => redis.quit());
    expect(output.results.map((r) => [r.id, r.name, r.durability, r.pass])).toEqual([
      ['retryd-redis', `retryd (Redis, ${machine.persistence}, prefix retryd-bench-w1, default protections)`, machine.label, true],
      ['retryd-redis-aof', 'retryd (Redis, AOF everysec, prefix retryd-bench-w1, default protections)', aofLabel, true],
      ['bullmq', `BullMQ 5.81.5 (Redis, ${machine.persistence})`, machine.label, true],
      ['bullmq-aof', 'BullMQ 5.81.5 (Redis, AOF everysec)', aofLabel, true],
    ]);
    // retryd's store server on its own: the AOF server's process worked for it.
    expect(output.results.find((r) => r.id === 'retryd-redis-aof')?.storeCpuMsPerAttempt).toBeGreaterThan(0);
    // Gone at the end: its files, and the server (its port refuses connections).
    expect(existsSync(output.redisAof.dir)).toBe(false);
    const { port } = new URL(output.redisAof.url);
    const refused = await new Promise<string>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    });
    expect(refused).toBe('ECONNREFUSED');
  });

  it('w1.mjs names the option and the rule when --redis-aof is wrong', async () => {
    const w1 = join(ROOT, 'bench', 'service', 'w1.mjs');
    const policy = await bench(['--store', 'redis', '--only', 'retryd', '--redis-aof', 'sometimes'], w1);
    expect(policy.code).not.toBe(0);
    expect(policy.stderr).toContain('--redis-aof must be one of everysec, always, got sometimes');
    const nothing = await bench(['--store', 'sqlite', '--only', 'retryd', '--redis-aof', 'everysec'], w1);
    expect(nothing.code).not.toBe(0);
    expect(nothing.stderr).toContain('--redis-aof runs the Redis contenders on a Redis with AOF: it needs --store redis (with retryd or bare-store in --only) or bullmq in --only');
  });

  it('judges W8 per store: the size against half-time, the lag against W4 on the same store, nothing lost', async () => {
    const { aims } = (await import(pathToFileURL(join(ROOT, 'bench', 'report', 'figures.mjs')).href)) as { aims: (results: unknown) => { aim: string; met: boolean; figure?: number; figureText?: string }[] };
    const sample = JSON.parse(await readFile(SAMPLE, 'utf8')) as Results;
    const w4 = sample.runs.find((r) => r.workload === 'w4' && r.store === 'sqlite')?.data as unknown as { results: { role?: string; lag: { p99: number } }[] };
    const w4P99 = w4.results.find((r) => r.role !== 'before')?.lag.p99 ?? NaN;
    const MiB = 2 ** 20;
    const w8 = (deviation: number, p99: number, lost: number) => ({
      workload: 'w8',
      store: 'sqlite',
      data: {
        minutes: 10,
        rate: 500,
        retentionMs: 60_000,
        sizeAt: { atS: 300, bytes: 40 * MiB },
        sizeLastHalf: { min: 40 * MiB, max: 40 * MiB * (1 + deviation), deviation },
        rss: { startMiB: 120, endMiB: 150, peakMiB: 180 },
        lagWarm: { p99 },
        purgedPerSecSteady: 500,
        check: { lost, otherStatus: 0, noExpiry: 0 },
        downstream: { duplicates: 0, neverRequested: 0 },
      },
    });
    const w8Aims = (step: unknown) => aims({ ...sample, runs: [...sample.runs, step] }).filter((a) => a.aim.startsWith('W8 SQLite'));
    const good = w8Aims(w8(0.061, w4P99 * 0.9, 0));
    expect(good.map((a) => [a.aim, a.met])).toEqual([
      ["W8 SQLite: the store's size over the second half within ±10% of its size at half-time", true],
      [`W8 SQLite: dispatch lag p99 no worse than W4's (${w4P99.toFixed(2)} ms)`, true],
      ['W8 SQLite: nothing lost', true],
    ]);
    expect(good[0]?.figureText).toBe('worst 6.1% (40.0 MiB at half-time)');
    expect(w8Aims(w8(0.137, w4P99 * 1.1, 2)).map((a) => a.met)).toEqual([false, false, false]);
  });

  it('plans W6 through the transactional enqueue once, on PostgreSQL, beside pg-boss when the run has it', async () => {
    const { planRuns } = (await import(pathToFileURL(join(ROOT, 'bench', 'report', 'plan.mjs')).href)) as {
      planRuns: (options: { quick: boolean; stores?: string[]; peers?: string[]; workloads?: string[] }) => { workload: string; script?: string; store: string; args: string[] }[];
    };
    const w6tx = (options: { quick: boolean; stores?: string[]; peers?: string[] }) =>
      planRuns(options)
        .filter((s) => s.workload === 'w6tx')
        .map((s) => `${s.script ?? ''} ${s.store} ${s.args.join(' ')}`);
    expect(w6tx({ quick: false })).toEqual(['w6-transactional postgres --tasks 50000 --rounds 7']);
    expect(w6tx({ quick: true })).toEqual(['w6-transactional postgres --tasks 2000 --rounds 1']);
    expect(w6tx({ quick: false, peers: [] })).toEqual(['w6-transactional postgres --peer none --tasks 50000 --rounds 7']);
    expect(w6tx({ quick: false, stores: ['sqlite', 'redis'] })).toEqual([]);
    // Between W5 and W7, as the page orders its sections.
    expect(planRuns({ quick: true, stores: ['postgres'], workloads: ['w5', 'w6tx', 'w7'] }).map((s) => s.workload)).toEqual(['w5', 'w6tx', 'w7']);
  });

  it('w6-transactional.mjs writes both sides’ rates and the server’s durability with --json-file, and retryd alone with --peer none', { timeout: 120_000 }, async () => {
    const script = join(ROOT, 'bench', 'service', 'w6-transactional.mjs');
    interface W6txOutput {
      tasks: number;
      batch: number;
      durability: { durable: boolean; label: string };
      peer?: { id: string; name: string };
      rows: { id: string; tasksPerSec: number; rounds: number[] }[];
      retrydPerSec: number;
      peerPerSec?: number;
    }
    const jsonFile = join(dir, 'w6tx.json');
    const run = await bench(['--tasks', '300', '--batch', '100', '--rounds', '2', '--json-file', jsonFile], script);
    expect(run.code, run.stderr).toBe(0);
    const output = JSON.parse(await readFile(jsonFile, 'utf8')) as W6txOutput;
    expect([output.tasks, output.batch]).toEqual([300, 100]);
    expect(output.durability.label.startsWith(output.durability.durable ? 'durable: ' : 'NOT durable: ')).toBe(true);
    expect(output.peer).toEqual({ id: 'pgboss', name: 'pg-boss 10.4.2' });
    expect(output.rows.map((r) => [r.id, r.rounds.length])).toEqual([
      ['retryd', 2],
      ['pgboss', 2],
    ]);
    expect(output.rows.every((r) => r.tasksPerSec > 0)).toBe(true);
    expect(output.retrydPerSec).toBe(output.rows[0]?.tasksPerSec);
    expect(output.peerPerSec).toBe(output.rows[1]?.tasksPerSec);

    const alone = join(dir, 'w6tx-alone.json');
    const aloneRun = await bench(['--tasks', '100', '--batch', '100', '--rounds', '1', '--peer', 'none', '--json-file', alone], script);
    expect(aloneRun.code, aloneRun.stderr).toBe(0);
    const aloneOutput = JSON.parse(await readFile(alone, 'utf8')) as W6txOutput;
    expect(aloneOutput.rows.map((r) => r.id)).toEqual(['retryd']);
    expect(aloneOutput.peer).toBeUndefined();
    expect(aloneOutput.peerPerSec).toBeUndefined();

    const wrong = await bench(['--peer', 'bullmq'], script);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('--peer: expected none (or no --peer: pg-boss), got "bullmq"');
  });

  it('judges W6 through the transactional enqueue against pg-boss’s insert, durable, and renders its section and headline', async () => {
    const figures = (await import(pathToFileURL(join(ROOT, 'bench', 'report', 'figures.mjs')).href)) as {
      aims: (results: unknown) => { aim: string; met: boolean; figureText?: string }[];
    };
    const { renderDoc } = (await import(pathToFileURL(join(ROOT, 'bench', 'report', 'render-doc.mjs')).href)) as {
      renderDoc: (results: unknown, paths: { chartPath: (name: string) => string; resultsPath: string }) => string;
    };
    const sample = JSON.parse(await readFile(SAMPLE, 'utf8')) as Results & { workloads: string[] };
    const durable = 'durable: fsync=on, synchronous_commit=on, wal_sync_method=fdatasync';
    const notDurable = 'NOT durable: fsync=on, synchronous_commit=off, wal_sync_method=fdatasync';
    const step = (retrydPerSec: number, peerPerSec: number, label = durable) => ({
      workload: 'w6tx',
      script: 'w6-transactional',
      store: 'postgres',
      args: ['--tasks', '50000', '--rounds', '3'],
      exitCode: 0,
      seconds: 61,
      data: {
        tasks: 50_000,
        batch: 1000,
        concurrency: 4,
        rounds: 3,
        durability: { durable: label.startsWith('durable'), label },
        peer: { id: 'pgboss', name: 'pg-boss 10.4.2' },
        rows: [
          { id: 'retryd', name: 'retryd `enqueueBatch` (@retryd/server/pg)', tasksPerSec: retrydPerSec, rounds: [retrydPerSec, retrydPerSec * 0.9, retrydPerSec * 1.1] },
          { id: 'pgboss', name: 'pg-boss 10.4.2 `insert` (`db`: the same client)', tasksPerSec: peerPerSec, rounds: [peerPerSec, peerPerSec, peerPerSec] },
        ],
        retrydPerSec,
        peerPerSec,
      },
    });
    const withStep = (s: unknown) => ({ ...sample, workloads: [...sample.workloads, 'w6tx'], runs: [...sample.runs, s] });
    const aim = (s: unknown) => figures.aims(withStep(s)).find((a) => a.aim.startsWith('W6 transactional'));
    expect(aim(step(24_000, 20_000))).toEqual({ aim: 'W6 transactional (PostgreSQL): ≥ 1.0× pg-boss 10.4.2 `insert` tasks/s, durable', figureText: '1.20× (24,000 ÷ 20,000 tasks/s)', met: true });
    expect(aim(step(18_000, 20_000))?.met).toBe(false);
    // Faster than the peer is not enough when the server does not flush the commits.
    const fast = aim(step(24_000, 20_000, notDurable));
    expect(fast?.met).toBe(false);
    expect(fast?.figureText).toBe(`1.20× (24,000 ÷ 20,000 tasks/s); **${notDurable}**`);
    // No step (or a run without PostgreSQL): no aim.
    expect(figures.aims(sample).some((a) => a.aim.startsWith('W6 transactional'))).toBe(false);

    const page = renderDoc(withStep(step(24_000, 20_000)), { chartPath: (name) => name, resultsPath: 'results.json' });
    const section = /## W6 through the transactional enqueue\n\n([\s\S]*?)\n\n## /.exec(page)?.[1] ?? '';
    expect(section).toContain('50,000 of W6\'s tasks, 1,000 a transaction, 4 transactions in flight:');
    expect(section).toContain('- PostgreSQL: `node bench/service/w6-transactional.mjs --tasks 50000 --rounds 3` (61 s)');
    expect(section).toContain(`| retryd \`enqueueBatch\` (@retryd/server/pg) | ${durable} | **24,000** | **1.20×** | 24,000, 21,600, 26,400 |`);
    expect(section).toContain(`| pg-boss 10.4.2 \`insert\` (\`db\`: the same client) | ${durable} | 20,000 | – | 20,000, 20,000, 20,000 |`);
    // After W5 (and before W7, which the sample has not), ahead of the ceilings; in the headline and the aims.
    expect(page.indexOf('## W5:')).toBeGreaterThan(0);
    expect(page.indexOf('## W5:')).toBeLessThan(page.indexOf('## W6 through the transactional enqueue'));
    expect(page.indexOf('## W6 through the transactional enqueue')).toBeLessThan(page.indexOf('## Ceilings and space'));
    expect(page).toContain('- W6 through the transactional enqueue on PostgreSQL (durable): **1.20×** the tasks/s of pg-boss 10.4.2\'s `insert` in the same transactions (24,000 against 20,000).');
    expect(page).toContain('| W6 transactional (PostgreSQL): ≥ 1.0× pg-boss 10.4.2 `insert` tasks/s, durable | 1.20× (24,000 ÷ 20,000 tasks/s) | met | – |');
    expect(page).toContain(', and W6 through the transactional enqueue of `@retryd/server/pg` on PostgreSQL, with BullMQ');
  });

  it('names the option and the rule when a list is wrong', async () => {
    const run = await bench(['--quick', '--stores', 'sqlite,mysql', '--quiet']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('--stores must list some of sqlite, postgres, redis (or none), got mysql');
  });
});
