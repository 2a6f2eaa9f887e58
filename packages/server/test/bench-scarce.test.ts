import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

// The scarce-CPU variant of `npm run bench` (`--cpus N`, bench/report/scarce.mjs): its plan, its option's checks, the
// pinning of the machine's shared servers and the page's section, read from a quick run saved with `--cpus 1`.

const ROOT = join(import.meta.dirname, '..', '..', '..');
const SAMPLE = join(ROOT, 'bench', 'results', 'sample-scarce-quick.json');

interface Step {
  workload: string;
  script?: string;
  store: string;
  args: string[];
  minutes: number;
  cpus?: number;
  shareOfThroughput?: boolean;
}
interface ScarceModule {
  parseCpus(value: string | undefined, cores?: number): number | undefined;
  planScarce(steps: Step[], options: { cpus: number }): Step[];
  atShareOfThroughput(step: Step, runs: unknown[]): Step & { rateShare?: { usualRate: number; rate: number; missing?: boolean } };
  pinSharedServers(cpus: number): { pinned: { name: string; processes: number }[]; restore(): void };
}
interface PlanModule {
  planRuns(options: { quick: boolean; stores: string[]; peers: string[]; workloads: string[] }): Step[];
}
interface RenderModule {
  renderDoc(results: unknown, options: { chartPath: (name: string) => string; resultsPath: string }): string;
}

const load = async <T>(file: string): Promise<T> => (await import(pathToFileURL(join(ROOT, 'bench', 'report', file)).href)) as T;
const affinityOf = (pid: number) => /list:\s*(\S+)/.exec(execFileSync('taskset', ['-pc', String(pid)], { encoding: 'utf8' }))?.[1];

/**
 * A step of W4 in paired rounds as the report keeps it, from each round's lag p99 of [retryd, the relay with the
 * store's work, the bare relay]; the medians as w4-paired.mjs writes them (odd rounds only).
 */
function pairedRun(store: string, rounds: number[][], cpus?: number) {
  const lag = (p99: number) => ({ p50: 1, p99, max: p99 * 2, cpuMsPerTask: 0.1 });
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  const ratios = rounds.map(([r = NaN, s = NaN, b = NaN]) => ({ retrydOverBare: r / b, retrydOverStore: r / s, storeOverBare: s / b }));
  const m = (i: number) => lag(median(rounds.map((r) => r[i] ?? NaN)));
  const mr = (key: keyof (typeof ratios)[number]) => median(ratios.map((r) => r[key]));
  return {
    workload: 'w4paired',
    script: 'w4-paired',
    store,
    args: ['--store', store],
    ...(cpus === undefined ? {} : { cpus }),
    data: {
      rate: cpus === undefined ? 2000 : 1605,
      seconds: 20,
      rounds: ratios.map((r) => ({ ratios: r })),
      medians: { retryd: m(0), storeRelay: m(1), bareRelay: m(2), ratios: { retrydOverBare: mr('retrydOverBare'), retrydOverStore: mr('retrydOverStore'), storeOverBare: mr('storeOverBare') } },
    },
  };
}

describe('npm run bench --cpus', () => {
  it('plans W1, W4 and the bare relay again on the scarce cores after the usual steps, the relay on both settings', async () => {
    const { planScarce } = await load<ScarceModule>('scarce.mjs');
    const { planRuns } = await load<PlanModule>('plan.mjs');
    const usual = planRuns({ quick: true, stores: ['sqlite', 'redis'], peers: ['bullmq'], workloads: ['w1', 'w2', 'w4'] });
    const steps = planScarce(usual, { cpus: 1 });
    const name = (s: Step) => `${s.script ?? s.workload} ${s.store}${s.cpus === undefined ? '' : ' 1'}`;
    expect(steps.map(name)).toEqual([
      ...usual.map(name),
      'w4-ceiling sqlite',
      'w4-ceiling redis',
      // The bare relay's throughput on both settings, W4's scarce rate read from them.
      'w4-ceiling sqlite,redis',
      'w4-ceiling sqlite,redis 1',
      'w1 sqlite,redis 1',
      'w4 sqlite 1',
      'w4 redis 1',
      'w4-ceiling sqlite 1',
      'w4-ceiling redis 1',
    ]);
    // The relay at W4's own size, and without syncs for Redis (no AOF: nothing committed to disk).
    const relay = steps.find((s) => s.script === 'w4-ceiling' && s.store === 'redis');
    expect(relay?.args).toEqual(['--no-sync', '--seconds', '2', '--warmup', '1', '--rate', '500']);
    // The scarce W4 and relay steps take their rate from the throughputs; W1 and the usual steps keep theirs.
    expect(steps.filter((s) => s.shareOfThroughput).map(name)).toEqual(['w4 sqlite 1', 'w4 redis 1', 'w4-ceiling sqlite 1', 'w4-ceiling redis 1']);
    expect(steps.filter((s) => s.args.includes('--throughput')).map((s) => s.args)).toEqual([
      ['--throughput', '--rounds', '3', '--seconds', '2', '--warmup', '1', '--rate', '500'],
      ['--throughput', '--rounds', '3', '--seconds', '2', '--warmup', '1', '--rate', '500'],
    ]);
  });

  it("gives a scarce W4 step the share of the relay's throughput its rate has on the usual cores", async () => {
    const { atShareOfThroughput } = await load<ScarceModule>('scarce.mjs');
    const throughput = (tasksPerSec: number, cpus?: number) => ({ workload: 'ceilings', script: 'w4-ceiling', store: 'sqlite', args: ['--throughput'], ...(cpus === undefined ? {} : { cpus }), data: { tasksPerSec } });
    const runs = [throughput(8_000), throughput(6_000, 1)];
    const w4 = { workload: 'w4', store: 'sqlite', args: ['--store', 'sqlite', '--rate', '500'], minutes: 1, cpus: 1, shareOfThroughput: true };
    expect(atShareOfThroughput(w4, runs)).toMatchObject({ args: ['--store', 'sqlite', '--rate', '375'], rateShare: { usualRate: 500, rate: 375, usualTasksPerSec: 8_000, scarceTasksPerSec: 6_000 } });
    // No --rate: W4's default, 2,000 tasks/s, is the usual rate.
    expect(atShareOfThroughput({ ...w4, args: ['--store', 'sqlite'] }, runs).args).toEqual(['--store', 'sqlite', '--rate', '1500']);
    // A throughput missing on either setting: the planned rate, and the run says why.
    expect(atShareOfThroughput(w4, runs.slice(0, 1))).toMatchObject({ args: w4.args, rateShare: { rate: 500, missing: true } });
    // Unmarked steps (W1, the usual W4) are left alone.
    const usual = { workload: 'w4', store: 'sqlite', args: ['--store', 'sqlite', '--rate', '500'], minutes: 1 };
    expect(atShareOfThroughput(usual, runs)).toBe(usual);
  });

  it("runs the relays with a store's work again on the scarce cores, without a second relay on a log", async () => {
    const { planScarce } = await load<ScarceModule>('scarce.mjs');
    const { planRuns } = await load<PlanModule>('plan.mjs');
    const usual = planRuns({ quick: true, stores: ['sqlite', 'postgres'], peers: [], workloads: ['w4', 'ceilings'] });
    const relayName = (s: Step) => `${s.store} ${s.args.slice(0, 2).join(' ')}${s.cpus === undefined ? '' : ' 1'}`;
    const relays = (list: Step[]) => list.filter((s) => s.script === 'w4-ceiling').map(relayName);
    expect(relays(usual)).toEqual(['sqlite,postgres --seconds 2', 'sqlite --store sqlite', 'postgres --store postgres']);
    expect(relays(planScarce(usual, { cpus: 1 }))).toEqual([
      ...relays(usual),
      'sqlite,postgres --throughput --rounds',
      'sqlite,postgres --throughput --rounds 1',
      'sqlite,postgres --seconds 2 1',
      'sqlite --store sqlite 1',
      'postgres --store postgres 1',
    ]);
  });

  it('plans W4 in paired rounds per store, again on the scarce cores at the share of the throughput measured on both', async () => {
    const { planScarce } = await load<ScarceModule>('scarce.mjs');
    const { planRuns } = await load<PlanModule>('plan.mjs');
    const usual = planRuns({ quick: true, stores: ['sqlite', 'redis'], peers: [], workloads: ['w4paired'] });
    expect(usual.map((s) => `${s.script} ${s.args.join(' ')}`)).toEqual([
      'w4-paired --store sqlite --rounds 1 --seconds 2 --warmup 1 --rate 500',
      'w4-paired --store redis --rounds 1 --seconds 2 --warmup 1 --rate 500',
    ]);
    const steps = planScarce(usual, { cpus: 1 });
    const name = (s: Step) => `${s.script ?? s.workload} ${s.store}${s.cpus === undefined ? '' : ' 1'}`;
    // Paired rounds bring their own relays: only the throughputs, which the scarce rate is read from, are added.
    expect(steps.map(name)).toEqual([...usual.map(name), 'w4-ceiling sqlite,redis', 'w4-ceiling sqlite,redis 1', 'w4-paired sqlite 1', 'w4-paired redis 1']);
    expect(steps.find((s) => s.args.includes('--throughput'))?.args).toEqual(['--throughput', '--rounds', '3', '--seconds', '2', '--warmup', '1', '--rate', '500']);
    expect(steps.filter((s) => s.shareOfThroughput).map(name)).toEqual(['w4-paired sqlite 1', 'w4-paired redis 1']);
  });

  it('names the option and the rule when --cpus is wrong', async () => {
    const { parseCpus } = await load<ScarceModule>('scarce.mjs');
    expect(parseCpus(undefined, 2)).toBeUndefined();
    expect(parseCpus('1', 2)).toBe(1);
    for (const wrong of ['0', '2', '1.5', 'one']) {
      expect(() => parseCpus(wrong, 2)).toThrow(`--cpus must be a whole number from 1 to 1 (fewer cores than the machine's 2), got ${wrong}`);
    }
  });

  it('pins the shared Redis and PostgreSQL to the scarce cores and gives them their affinity back', async () => {
    const { pinSharedServers } = await load<ScarceModule>('scarce.mjs');
    const redis = Number(execFileSync('pgrep', ['-x', 'redis-server'], { encoding: 'utf8' }).split('\n')[0]);
    const before = affinityOf(redis);
    const shared = pinSharedServers(1);
    try {
      expect(affinityOf(redis)).toBe('0');
      expect(shared.pinned.map((p) => p.name).sort()).toEqual(['postgres', 'redis-server']);
    } finally {
      shared.restore();
    }
    expect(affinityOf(redis)).toBe(before);
  });

  it('shows the aims of issue 45 on the usual cores and on one, and what was pinned', async () => {
    const { renderDoc } = await load<RenderModule>('render-doc.mjs');
    const results = JSON.parse(await readFile(SAMPLE, 'utf8')) as { runs: Step[] };
    expect(results.runs.filter((r) => r.cpus === 1).map((r) => r.script ?? r.workload)).toEqual(['w1', 'w4', 'w4-ceiling']);
    const page = renderDoc(results, { chartPath: (n) => n, resultsPath: 'r.json' });
    const section = page.slice(page.indexOf('## Scarce CPU'));
    expect(section).toContain('| Aim | Usual run (2 cores) | One core |');
    expect(section).toContain('postgres (');
    for (const aim of ["W1 SQLite: CPU per attempt ≤ 1.2× the bare loop with the store's work", 'W1 SQLite: ≥ 2× BullMQ attempts/s', "W4 SQLite: lag p99 ≤ 1.2× the bare relay's"]) {
      const row = section.split('\n').find((l) => l.startsWith(`| ${aim} |`));
      // Both settings measured: a figure in each column, none missing.
      expect(row?.split(' | ').slice(1).every((cell) => /\d/.test(cell))).toBe(true);
    }
    // The usual sections read the usual steps only: W1's table has the two-core run, not the one-core one.
    const w1 = results.runs.find((r) => r.workload === 'w1' && r.cpus === undefined) as unknown as { data: { results: { id: string; attemptsPerSec: number }[] } };
    const bare = w1.data.results.find((r) => r.id === 'bare');
    expect(page.slice(0, page.indexOf('## Scarce CPU'))).toContain(Math.round(bare?.attemptsPerSec ?? NaN).toLocaleString('en-US'));
  });

  it("reads W4 beside the relay with the store's work, beyond the ceiling where that relay misses the aim too", async () => {
    const { scarceSection } = await load<{ scarceSection(results: unknown): string | undefined }>('scarce-section.mjs');
    const w4 = (store: string, p99: number, cpus?: number) => ({
      workload: 'w4', store, args: ['--store', store], ...(cpus === undefined ? {} : { cpus }),
      data: { results: [{ lag: { p50: 1, p99 }, rate: cpus === undefined ? 2000 : 1692 }] },
    });
    const relay = (p99: number, store?: string, cpus?: number) => ({
      workload: 'ceilings', script: 'w4-ceiling', store: store ?? 'sqlite,postgres', args: store === undefined ? [] : ['--store', store],
      ...(cpus === undefined ? {} : { cpus }), data: { sync: true, store: store ?? null, lag: { p50: 1, p99 }, rounds: [] },
    });
    const results = {
      environment: { machine: { cores: 2 } },
      runs: [
        w4('sqlite', 13.3), w4('postgres', 25.4), relay(7.5), relay(6.4, 'sqlite'), relay(21, 'postgres'),
        w4('sqlite', 8.3, 1), w4('postgres', 72.4, 1), relay(10.3, undefined, 1), relay(8.4, 'sqlite', 1), relay(159.2, 'postgres', 1),
      ],
    };
    const rows = (scarceSection(results) ?? '').split('\n');
    const row = (store: string) => rows.find((l) => l.startsWith(`| W4 ${store}: lag p99`))?.split(' | ');
    // SQLite's own store work is within the aim: retryd's miss is its own, not beyond the ceiling; met on one core.
    expect(row('SQLite')?.[1]).toBe("13.3 ÷ 7.5 ms = **1.77×, missed** (2,000 tasks/s); the relay with the store's work 6.4 ms (0.85× the bare relay's; retryd 2.08× of it)");
    expect(row('SQLite')?.[2]).toMatch(/^8\.3 ÷ 10\.3 ms = 0\.81×, met \(1,692 tasks\/s\)/);
    // PostgreSQL's store work alone misses it (21.0 ÷ 7.5 ms): beyond the ceiling, on both settings.
    expect(row('PostgreSQL')?.[1]).toMatch(/^25\.4 ÷ 7\.5 ms = \*\*3\.39×, missed\*\*, beyond the ceiling \(2,000 tasks\/s\); the relay with the store's work 21\.0 ms \(2\.80× the bare relay's/);
    expect(row('PostgreSQL')?.[2]).toContain('**7.03×, missed**, beyond the ceiling');
  });

  it('judges W4 in paired rounds on the median of the rounds, beyond the ceiling where the relay with the store\'s work misses too', async () => {
    const { scarceSection } = await load<{ scarceSection(results: unknown): string | undefined }>('scarce-section.mjs');
    const paired = pairedRun;
    const results = {
      environment: { machine: { cores: 2 } },
      runs: [
        paired('sqlite', [[6, 5, 5], [5.5, 5, 5], [12, 6, 5]]),
        paired('redis', [[9, 8, 6], [10, 9, 6], [8, 8, 6]]),
        paired('sqlite', [[9, 9, 8], [10, 9, 8], [8, 8, 8]], 1),
        paired('redis', [[9, 9, 6], [10, 9, 6], [9.5, 9, 6]], 1),
      ],
    };
    const section = scarceSection(results) ?? '';
    expect(section).toContain('In paired rounds (`w4-paired.mjs`)');
    const row = (store: string) => section.split('\n').find((l) => l.startsWith(`| W4 ${store}: lag p99 ≤ 1.2× the bare relay's, paired rounds |`))?.split(' | ');
    // One slow round does not move the median: 1.20× on SQLite, met.
    expect(row('SQLite')?.[1]).toBe("median of 3 rounds 1.20×, met (1.20×, 1.10×, 2.40×; 2,000 tasks/s); lag p99 6.0 / 5.0 ms; the relay with the store's work 5.0 ms (1.00× the bare relay's; retryd 1.20× of it)");
    expect(row('SQLite')?.[2]).toMatch(/^median of 3 rounds 1\.13×, met \(1\.13×, 1\.25×, 1\.00×; 1,605 tasks\/s\)/);
    // Redis: the relay with Redis's work is itself past 1.2× the bare relay (1.33×, 1.50×): beyond the ceiling on both.
    expect(row('Redis')?.[1]).toMatch(/^median of 3 rounds \*\*1\.50×, missed\*\*, beyond the ceiling \(1\.50×, 1\.67×, 1\.33×; 2,000 tasks\/s\)/);
    expect(row('Redis')?.[2]).toContain("**1.58×, missed**, beyond the ceiling");
    // No single W4 run in these results: no row read from one.
    expect(section).not.toMatch(/\| W4 SQLite: lag p99 ≤ 1\.2× the bare relay's \|/);
  });

  it('shows W4 in paired rounds in a section of its own, from the usual steps', async () => {
    const { renderDoc } = await load<RenderModule>('render-doc.mjs');
    const results = JSON.parse(await readFile(SAMPLE, 'utf8')) as { runs: unknown[] };
    results.runs.push(pairedRun('sqlite', [[6, 5, 5], [5.5, 5, 5], [12, 6, 5]]), pairedRun('sqlite', [[30, 9, 8], [30, 9, 8], [30, 8, 8]], 1));
    const page = renderDoc(results, { chartPath: (n) => n, resultsPath: 'r.json' });
    const section = page.slice(page.indexOf('## W4 in paired rounds'), page.indexOf('\n## ', page.indexOf('## W4 in paired rounds') + 1));
    expect(section).toContain('3 rounds, each of retryd, the relay with the store\'s work and the bare relay back to back, at 2,000 tasks/s for 20 s');
    expect(section).toContain('| SQLite | 6.00 ms / 5.00 ms / 5.00 ms | **1.20×** (1.20×, 1.10×, 2.40×) | 1.20× | 1.00× | 0.100 / 0.100 / 0.100 |');
    // The one-core rounds are the scarce section's, not this one's.
    expect(section).not.toContain('3.75×');
  });

  it("marks W1 SQLite ÷ BullMQ beyond the ceiling where the bare loop with SQLite's work misses 2× too", async () => {
    const { scarceSection } = await load<{ scarceSection(results: unknown): string | undefined }>('scarce-section.mjs');
    const row = (id: string, name: string, attemptsPerSec: number) => ({ id, name, attemptsPerSec, cpuMsPerAttempt: 0.1, pass: true });
    const w1 = (retryd: number, bareStore: number, bullmq: number, cpus?: number) => ({
      workload: 'w1', store: 'sqlite', args: ['--store', 'sqlite'], ...(cpus === undefined ? {} : { cpus }),
      data: { results: [row('retryd-sqlite-full', 'retryd (SQLite)', retryd), row('bare-store', 'bare loop with SQLite', bareStore), row('bullmq', 'BullMQ', bullmq)] },
    });
    const section = scarceSection({ environment: { machine: { cores: 2 } }, runs: [w1(7_000, 7_600, 4_000), w1(4_000, 4_400, 1_800, 1)] }) ?? '';
    const cells = section.split('\n').find((l) => l.startsWith('| W1 SQLite: ≥ 2× BullMQ attempts/s |'))?.slice(2, -2).split(' | ');
    expect(cells?.[1]).toBe("**1.75×, missed**, beyond the ceiling; the bare loop with SQLite's work 1.90×");
    expect(cells?.[2]).toBe("2.22×, met; the bare loop with SQLite's work 2.44×");
  });

  it('names the rate of W4 and of W4 in paired rounds each, when a merged page holds them from runs at different rates', async () => {
    const { scarceSection } = await load<{ scarceSection(results: unknown): string | undefined }>('scarce-section.mjs');
    const share = (rate: number, scarceTasksPerSec: number) => ({ usualRate: 2_000, rate, usualTasksPerSec: 10_000, scarceTasksPerSec });
    const step = (workload: string, rate: number, scarceTasksPerSec: number) => ({ workload, store: 'sqlite', args: [], cpus: 1, rateShare: share(rate, scarceTasksPerSec), data: {} });
    const opening = (runs: unknown[]) => (scarceSection({ environment: { machine: { cores: 2 } }, runs }) ?? '').split('\n')[2] ?? '';
    const both = opening([step('w4paired', 849, 4_245), step('w4', 1_271, 6_355)]);
    expect(both).toContain('W4 and its relays run at 1,271 tasks/s on one core and 2,000 on 2 cores');
    expect(both).toContain("W4 in paired rounds ran at 849 tasks/s on one core and 2,000 on 2 cores, the same share of that run's bare relay (the median of its rounds: 4,245 and 10,000 tasks/s).");
    // One run of both: one rate, named once.
    expect(opening([step('w4paired', 1_271, 6_355), step('w4', 1_271, 6_355)])).not.toContain('W4 in paired rounds ran at');
    expect(opening([step('w4paired', 849, 4_245)])).toContain('W4 and its relays run at 849 tasks/s on one core');
  });

  it('runs a quick W4 in paired rounds end to end, pinned to one core', { timeout: 180_000 }, async () => {
    const { runStep } = await load<{ runStep(step: Step, o: { quiet: boolean }): Promise<{ cpus?: number; data?: { rounds: { order: string[]; ratios: Record<string, number> }[]; medians: { ratios: Record<string, number> } }; error?: string }> }>('run-workloads.mjs');
    const result = await runStep(
      { workload: 'w4paired', script: 'w4-paired', store: 'sqlite', args: ['--store', 'sqlite', '--rounds', '1', '--seconds', '1', '--warmup', '0.5', '--rate', '200'], minutes: 0.3, cpus: 1 },
      { quiet: true },
    );
    expect(result.error).toBeUndefined();
    expect(result.cpus).toBe(1);
    expect(result.data?.rounds.map((r) => r.order)).toEqual([['retryd', 'storeRelay', 'bareRelay']]);
    for (const key of ['retrydOverBare', 'retrydOverStore', 'storeOverBare']) expect(result.data?.medians.ratios[key]).toBeGreaterThan(0);
  });

  it('runs a quick W4 step pinned to one core end to end', { timeout: 180_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'retryd-bench-scarce-'));
    try {
      const { runStep } = await load<{ runStep(step: Step, o: { quiet: boolean }): Promise<{ cpus?: number; pinned?: unknown[]; data?: { lag?: { p99: number } }; error?: string }> }>('run-workloads.mjs');
      const result = await runStep({ workload: 'ceilings', script: 'w4-ceiling', store: 'sqlite', args: ['--seconds', '1', '--warmup', '0.5', '--rate', '200'], minutes: 0.2, cpus: 1 }, { quiet: true });
      expect(result.error).toBeUndefined();
      expect(result.cpus).toBe(1);
      expect(result.pinned?.length).toBeGreaterThan(0);
      expect(result.data?.lag?.p99).toBeGreaterThan(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
