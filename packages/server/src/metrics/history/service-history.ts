import { CircuitState, systemClock, type Clock } from '@retryd/core';
import type { KnownTargetState } from '../../protection/target-protection.js';
import { SampleRing, type SampleColumn } from './sample-ring.js';

/** How often the history samples, in ms: 10 s. */
export const HISTORY_INTERVAL_MS = 10_000;
/** Samples kept: 360 (an hour at {@link HISTORY_INTERVAL_MS}). */
export const HISTORY_SAMPLES = 360;
/** Most targets with a history; later ones wait until a kept one has been unseen for the whole window. */
export const HISTORY_MAX_TARGETS = 100;
/** Most attempt outcomes with a history (there are fewer outcomes than this). */
const MAX_OUTCOMES = 32;

/** A breaker state as a number (a chart's y): the worse, the higher. */
const BREAKER_LEVEL: Readonly<Record<CircuitState, number>> = { CLOSED: 0, HALF_OPEN: 1, OPEN: 2 };
const BREAKER_OF_LEVEL: readonly CircuitState[] = [CircuitState.CLOSED, CircuitState.HALF_OPEN, CircuitState.OPEN];

/** One target's series in a {@link ConsoleHistory}. */
export interface TargetHistory {
  tenantId: string;
  targetKey: string;
  /** Its breaker at each sample; null where this instance did not know the target. */
  breaker: (CircuitState | null)[];
  /** The rate it allowed at each sample, per second; null where it had no limit or was not known. */
  allowedRatePerSecond: SampleColumn;
}

/** What `GET /console/history` serves: this instance's last hour, oldest first, the last point being now. */
export interface ConsoleHistory {
  /** The time between samples, in ms. */
  intervalMs: number;
  /** When each point was taken (epoch ms); the last is the moment of the read. */
  at: number[];
  /** Attempts recorded per second by outcome, over the interval that ends at each point (0 before the first attempt). */
  attemptsPerSecond: Record<string, SampleColumn>;
  /** The targets asked for, each tenant's of that key. */
  targets: TargetHistory[];
}

/** Options of {@link ServiceHistory}. Only `attempts` is required. */
export interface ServiceHistoryOptions {
  /** Attempts recorded since start, by outcome (`ServiceMetrics.attemptTotals`). */
  attempts: () => Promise<Record<string, number>>;
  /** What this instance knows of its targets now (`TargetProtection.knownTargets`). Absent: no target has a history. */
  targets?: { knownTargets(now: number): Iterable<KnownTargetState> };
  /** Times the samples. Default `systemClock`. */
  clock?: Clock;
  /** Between samples, in ms. Default {@link HISTORY_INTERVAL_MS}. */
  intervalMs?: number;
  /** Samples kept. Default {@link HISTORY_SAMPLES}. */
  samples?: number;
  /** Most targets kept. Default {@link HISTORY_MAX_TARGETS}. */
  maxTargets?: number;
  /** Told of a sample that failed (the next one tries again). */
  onError?: (error: unknown) => void;
}

/** A target's column name: tenant and key, joined by a character neither holds. */
const columnOf = (tenantId: string, targetKey: string) => `${tenantId}\n${targetKey}`;

/**
 * The short history the web console's charts draw, kept in this instance's memory: every 10 s, the attempts recorded
 * since the last sample by outcome (read from the metrics' counters) and each known target's breaker state and
 * allowed rate, for the last hour. Fixed memory: rings allocated once per series ({@link SampleRing}), at most
 * {@link HISTORY_MAX_TARGETS} targets, so at most about 0.6 MB (360 samples × 8 bytes × (1 + outcomes + 2 per target)).
 * Per instance: each instance of a deployment keeps what it saw, and a restart starts it again.
 *
 * @example
 * ```ts
 * const history = new ServiceHistory({ attempts: () => metrics.attemptTotals(), targets: protection });
 * history.start();
 * await history.read('https://api.example.com');
 * history.close();
 * ```
 */
export class ServiceHistory {
  readonly intervalMs: number;
  private readonly attemptsRead: () => Promise<Record<string, number>>;
  private readonly targets: ServiceHistoryOptions['targets'];
  private readonly clock: Clock;
  private readonly onError: (error: unknown) => void;
  private readonly attempts: SampleRing;
  private readonly breakers: SampleRing;
  private readonly rates: SampleRing;
  /** The totals at the last sample, and when: the next sample's rates count from them. */
  private last: { at: number; totals: Record<string, number> } | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(options: ServiceHistoryOptions) {
    this.attemptsRead = options.attempts;
    this.targets = options.targets;
    this.clock = options.clock ?? systemClock;
    this.intervalMs = options.intervalMs ?? HISTORY_INTERVAL_MS;
    this.onError = options.onError ?? (() => {});
    const capacity = options.samples ?? HISTORY_SAMPLES;
    const maxTargets = options.maxTargets ?? HISTORY_MAX_TARGETS;
    this.attempts = new SampleRing({ capacity, maxColumns: MAX_OUTCOMES });
    this.breakers = new SampleRing({ capacity, maxColumns: maxTargets });
    this.rates = new SampleRing({ capacity, maxColumns: maxTargets });
  }

  /** The memory its rings hold now, in bytes. */
  get bytes(): number {
    return this.attempts.bytes + this.breakers.bytes + this.rates.bytes;
  }

  /** Takes a first sample now, then one every {@link intervalMs} until {@link close}; the timer keeps no process alive. */
  start(): void {
    if (this.timer !== undefined) return;
    const tick = () => void this.sample().catch(this.onError);
    tick();
    this.timer = setInterval(tick, this.intervalMs);
    this.timer.unref();
  }

  /** Stops sampling. What it holds can still be read. */
  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Takes one sample now: the attempts since the last one, per second, and each known target's state. */
  async sample(): Promise<void> {
    const point = await this.point();
    this.last = { at: point.at, totals: point.totals };
    this.attempts.push(point.at, point.attemptsPerSecond);
    this.breakers.push(point.at, point.breakers);
    this.rates.push(point.at, point.rates);
  }

  /**
   * The samples held, then a point for now (the rates since the last sample), with the series of the targets of key
   * `targetKey` (every tenant's) when it is given; none otherwise.
   */
  async read(targetKey?: string): Promise<ConsoleHistory> {
    const now = await this.point();
    const attempts = this.attempts.read();
    const at = [...attempts.at, now.at];
    const attemptsPerSecond: Record<string, SampleColumn> = {};
    for (const [outcome, values] of attempts.columns) attemptsPerSecond[outcome] = [...values, now.attemptsPerSecond[outcome] ?? 0];
    for (const [outcome, rate] of Object.entries(now.attemptsPerSecond)) {
      attemptsPerSecond[outcome] ??= [...attempts.at.map(() => null), rate];
    }
    // Before an outcome's first attempt its rate was 0, not unknown.
    for (const values of Object.values(attemptsPerSecond)) for (let i = 0; i < values.length; i++) values[i] ??= 0;
    const targets: TargetHistory[] = [];
    if (targetKey !== undefined) {
      const ofKey = (name: string) => name.endsWith(`\n${targetKey}`);
      const breakers = this.breakers.read(ofKey).columns;
      const rates = this.rates.read(ofKey).columns;
      const names = new Set([...breakers.keys(), ...Object.keys(now.breakers).filter(ofKey)]);
      for (const name of names) {
        const tenantId = name.slice(0, name.indexOf('\n'));
        const levels = [...(breakers.get(name) ?? attempts.at.map(() => null)), now.breakers[name] ?? null];
        const allowed = [...(rates.get(name) ?? attempts.at.map(() => null)), now.rates[name] ?? null];
        targets.push({
          tenantId,
          targetKey,
          breaker: levels.map((level) => (level === null ? null : (BREAKER_OF_LEVEL[level] ?? null))),
          allowedRatePerSecond: allowed.map((rate) => (rate === null || !Number.isFinite(rate) ? null : rate)),
        });
      }
    }
    return { intervalMs: this.intervalMs, at, attemptsPerSecond, targets };
  }

  /** Reads the counters and targets now, and the attempts' rates since the last sample. */
  private async point() {
    const at = this.clock.now();
    const totals = await this.attemptsRead();
    const attemptsPerSecond: Record<string, number> = {};
    const seconds = this.last === undefined ? 0 : (at - this.last.at) / 1_000;
    for (const [outcome, total] of Object.entries(totals)) {
      // The first sample has nothing before it to count from: its rates are 0.
      const delta = this.last === undefined ? 0 : Math.max(0, total - (this.last.totals[outcome] ?? 0));
      attemptsPerSecond[outcome] = seconds > 0 ? delta / seconds : 0;
    }
    const breakers: Record<string, number> = {};
    const rates: Record<string, number> = {};
    for (const target of this.targets?.knownTargets(at) ?? []) {
      const name = columnOf(target.tenantId, target.targetKey);
      breakers[name] = BREAKER_LEVEL[target.breaker];
      // No limit: Infinity inside, null once read.
      rates[name] = target.allowedRatePerSecond ?? Infinity;
    }
    return { at, totals, attemptsPerSecond, breakers, rates };
  }
}
