import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validate } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli as run } from './service-harness.js';
import { MAX_CONTENTION_CLIENTS, parseClientList, parseFailureRates } from '../src/cli/simulate-command.js';

describe('retryd simulate (the command)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryd-simulate-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('contention prints a table of mean calls and mean completion time, one row per client count, one column per strategy', async () => {
    const { code, stdout, stderr } = await run(['simulate', 'contention', '--clients', '10,20', '--runs', '3']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toContain('Mean calls (conditional writes) per run');
    expect(stdout).toContain('Mean completion time (ms)');
    expect(stdout).toMatch(/^clients +none +exponential +full +equal +decorrelated$/m);
    expect(stdout).toMatch(/^10 +[\d,.]+ +[\d,.]+ +[\d,.]+ +[\d,.]+ +[\d,.]+$/m);
    expect(stdout).toContain('3 runs each, seed 2015');
  });

  it('--json prints one object per strategy and client count, the same for the same seed and another for another seed', async () => {
    const args = ['simulate', 'contention', '--clients', '10-30/10', '--runs', '4', '--json'];
    const first = await run([...args, '--seed', '9']);
    expect(first.code).toBe(0);
    const rows = JSON.parse(first.stdout) as Record<string, unknown>[];
    expect(rows).toHaveLength(3 * 5);
    expect(Object.keys(rows[0] as object)).toEqual(['strategy', 'clients', 'runs', 'meanCalls', 'meanTimeMs']);
    expect(rows.map((r) => r.clients)).toEqual([10, 10, 10, 10, 10, 20, 20, 20, 20, 20, 30, 30, 30, 30, 30]);
    expect((await run([...args, '--seed', '9'])).stdout).toBe(first.stdout);
    expect((await run([...args, '--seed', '10'])).stdout).not.toBe(first.stdout);
  });

  it('--svg writes the chart as a well-formed SVG and still prints the table', async () => {
    const file = join(dir, 'contention.svg');
    const { code, stdout } = await run(['simulate', 'contention', '--clients', '10,20', '--runs', '2', '--svg', file]);
    expect(code).toBe(0);
    expect(stdout).toContain('Mean calls');
    const svg = await readFile(file, 'utf8');
    expect(validate(svg)).toBe(true);
    expect(svg).toContain('Mean completion time');
  });

  it('amplification prints one row per failure rate and mechanism, or JSON with fields named for what they are', async () => {
    const table = await run(['simulate', 'amplification', '--failure-rates', '0.5', '--duration', '5000']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^50% +retry-budget +[\d,]+ +[\d,]+ +[\d.]+× +[\d.]+× +[\d.]+%$/m);
    const json = await run(['simulate', 'amplification', '--failure-rates', '0.1,0.5', '--duration', '5000', '--json']);
    const rows = JSON.parse(json.stdout) as Record<string, unknown>[];
    expect(rows.map((r) => `${r.failureRate as number} ${r.mechanism as string}`)).toEqual([
      '0.1 no-retries', '0.1 retries', '0.1 retry-budget', '0.1 circuit-breaker',
      '0.5 no-retries', '0.5 retries', '0.5 retry-budget', '0.5 circuit-breaker',
    ]);
    expect(Object.keys(rows[0] as object)).toEqual(['mechanism', 'failureRate', 'requests', 'firstCalls', 'calls', 'amplification', 'callsPerRequest', 'successRate']);
  });

  it('w7 prints one row per case and design, none first as the reference, with the aims met or not', async () => {
    const { code, stdout, stderr } = await run(['simulate', 'w7', '--cases', 'a1,b20', '--designs', 'landed', '--tasks', '200']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toContain('200 tasks a case, all due at 0, 64 in flight');
    expect(stdout).toMatch(/^a1 +none +reference +200 +0 +0 +[\d.]+ +400 +2\.00 /m);
    expect(stdout).toMatch(/^a1 +landed +(met|NOT MET) +200 /m);
    expect(stdout).toMatch(/^b20 +landed +(met|NOT MET) +200 /m);
    expect(stdout.split('\n').filter((line) => /^(a1|b20) /.test(line))).toHaveLength(4);
    expect(stdout).toContain('aims (WORKLOADS.md W7), beside none: a1, b20: time ≤ 1.2× none, calls/task ≤ none');
  });

  it('w7 --json prints one object per case and design, the same for the same seed; --svg writes the chart', async () => {
    const file = join(dir, 'w7.svg');
    const args = ['simulate', 'w7', '--cases', 'a2,d,e,g', '--designs', 'sre,none,landed', '--tasks', '150', '--json'];
    const first = await run([...args, '--seed', '3', '--svg', file]);
    expect(first.code).toBe(0);
    const rows = JSON.parse(first.stdout) as Record<string, unknown>[];
    expect(rows.map((r) => `${r.case as string} ${r.design as string}`)).toEqual(
      ['a2', 'd', 'e', 'g'].flatMap((c) => [`${c} none`, `${c} sre`, `${c} landed`]),
    );
    const row = (c: string, design: string) => rows.find((r) => r.case === c && r.design === design) as Record<string, unknown>;
    expect(row('e', 'none')).toMatchObject({ timeouts: 0, goodLagP99Ms: null, aim: 'goodput ≥ 900/s, no timeouts' });
    expect(typeof row('e', 'none').goodputPerSecond).toBe('number');
    expect(typeof row('g', 'landed').goodLagRatio).toBe('number');
    expect(row('g', 'landed').goodputPerSecond).toBeNull();
    expect(Object.keys(rows[0] as object)).toEqual([
      'case', 'design', 'tasks', 'finished', 'timeMs', 'succeeded', 'exhausted', 'pending', 'calls', 'callsPerTask',
      'busiest100ms', 'refused', 'goodputPerSecond', 'timeouts', 'goodLagP99Ms', 'timeRatio', 'callsRatio', 'goodLagRatio', 'aim', 'met',
    ]);
    expect((await run([...args, '--seed', '3'])).stdout).toBe(first.stdout);
    const svg = await readFile(file, 'utf8');
    expect(validate(svg)).toBe(true);
    expect(svg).toContain('Time until every task ended ÷ none');
    expect(svg).toContain('64 in flight (e: 256)');
    for (const c of ['a2', 'd', 'e', 'g']) expect(svg).toContain(`text-anchor="middle" fill="#333333">${c}</text>`);
  });

  it('--help says what each model does, with every flag and its default', async () => {
    // Commander wraps the help at 80 columns.
    const words = (text: string) => text.replace(/\s+/g, ' ');
    const contention = await run(['simulate', 'contention', '--help']);
    expect(contention.code).toBe(0);
    for (const text of [
      'Exponential Backoff And Jitter',
      'base 5 ms, cap 2 s',
      '|Normal(10, 2)| ms',
      'no backoff, exponential without jitter, full, equal and decorrelated jitter',
      '--clients <list>',
      '(default: 10-190/10)',
      '--runs <n>',
      '(default: 100)',
      '--seed <n>',
      '(default: 2015)',
      '--json',
      '--svg <file>',
    ]) {
      expect(words(contention.stdout)).toContain(text);
    }
    const amplification = await run(['simulate', 'amplification', '--help']);
    for (const text of ['Poisson, 10 per second each', 'retry budget', 'circuit breaker', '--failure-rates <list>', '(default: 0.1,0.3,0.5,1)', '--clients <n>', '(default: 100)', '--duration <ms>', '(default: 60000)']) {
      expect(words(amplification.stdout)).toContain(text);
    }
    const w7 = await run(['simulate', 'w7', '--help']);
    for (const text of ['WORKLOADS.md W7', '64 attempts in flight (e: 256, the service\'s default)', '30 s attempt timeout', 'Google SRE client-side throttling', '--cases <list>', '(default: a1,a2,b20,b50,b90,d,e,f,g)', '--designs <list>', '(default: none,landed,previous,sre,budget,breaker-only)', '--tasks <n>', '(default: 2000)']) {
      expect(words(w7.stdout)).toContain(text);
    }
    const simulate = await run(['simulate', '--help']);
    expect(simulate.stdout).toMatch(/contention \[options\] +N clients contending for one row/);
    expect(simulate.stdout).toMatch(/amplification \[options\] +retries against a server failing at random/);
    expect(simulate.stdout).toMatch(/w7 \[options\] +W7 partial failure/);
  });

  it.each([
    [['contention', '--runs', '0'], '--runs must be an integer from 1 to 10000, got "0"'],
    [['contention', '--clients', '0'], `--clients must be comma-separated counts or ranges FROM-TO/STEP (FROM <= TO, STEP >= 1), each from 1 to ${MAX_CONTENTION_CLIENTS}, got "0"`],
    [['contention', '--clients', '190-10/10'], '--clients must be comma-separated counts or ranges'],
    [['contention', '--clients', '10,abc'], 'got "10,abc"'],
    [['contention', '--seed', '-1'], '--seed must be an integer from 0 to 4294967295, got "-1"'],
    [['amplification', '--failure-rates', '0.1,1.5'], '--failure-rates must be comma-separated numbers from 0 to 1, got "0.1,1.5"'],
    [['amplification', '--duration', '10'], '--duration must be an integer from 1000 to 3600000, got "10"'],
    [['amplification', '--clients', '0'], '--clients must be an integer from 1 to 10000, got "0"'],
    [['contention', '--runs', '1', '--clients', '5', '--svg', '/nonexistent-dir/chart.svg'], '--svg must name a file that can be written, got "/nonexistent-dir/chart.svg"'],
    [['w7', '--cases', 'a1,z'], '--cases must be comma-separated names from a1, a2, b20, b50, b90, d, e, f, g, got "a1,z"'],
    [['w7', '--cases', ''], '--cases must be comma-separated names from a1, a2, b20, b50, b90, d, e, f, g, got ""'],
    [['w7', '--designs', 'landed,magic'], '--designs must be comma-separated names from none, landed, previous, sre, budget, breaker-only, got "landed,magic"'],
    [['w7', '--tasks', '0'], '--tasks must be an integer from 1 to 20000, got "0"'],
    [['w7', '--seed', 'x'], '--seed must be an integer from 0 to 4294967295, got "x"'],
    [['contention', '--bogus'], "unknown option '--bogus'"],
    [['nonsense'], "unknown command 'nonsense'"],
  ])('refuses %j with one line naming the flag and the rule, exit code 2', async (args, message) => {
    const { code, stderr, stdout } = await run(['simulate', ...args]);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(stderr).not.toContain('    at ');
    expect(stdout).toBe('');
  });

  it('without a model, shows the models and exits 2', async () => {
    const { code, stderr } = await run(['simulate']);
    expect(code).toBe(2);
    expect(stderr).toContain('contention');
    expect(stderr).toContain('amplification');
    expect(stderr).toContain('w7');
  });
});

describe('the list flags', () => {
  it('--clients takes counts and ranges, in order, without repeats', () => {
    expect(parseClientList('10-190/10')).toEqual(Array.from({ length: 19 }, (_, i) => 10 * (i + 1)));
    expect(parseClientList('5, 1-3, 3, 100-130/15')).toEqual([5, 1, 2, 3, 100, 115, 130]);
    expect(parseClientList(String(MAX_CONTENTION_CLIENTS))).toEqual([MAX_CONTENTION_CLIENTS]);
    for (const bad of ['', '0', '1001', '10-', '10-5', '1-10/0', '1.5', '-3', '1,,2']) {
      expect(() => parseClientList(bad), bad).toThrow(`got ${JSON.stringify(bad)}`);
    }
  });

  it('--failure-rates takes numbers from 0 to 1', () => {
    expect(parseFailureRates('0,0.25,.5,1,0.5')).toEqual([0, 0.25, 0.5, 1]);
    for (const bad of ['', '1.01', '-0.1', 'half', '1e-1', '0.1,,0.2']) {
      expect(() => parseFailureRates(bad), bad).toThrow(`got ${JSON.stringify(bad)}`);
    }
  });
});
