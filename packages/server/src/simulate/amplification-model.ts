import { CircuitBreaker, DEFAULT_POLICY, planRetry, RetryBudget, type CircuitBreakerOptions, type RetryBudgetOptions, type RetryPolicy } from '@retryd/core';
import { breakerOptionsOf, retryBudgetOptionsOf } from '../protection/core-options.js';
import { DEFAULT_TARGET_SETTINGS } from '../protection/target-settings.js';
import { EventQueue } from './event-queue.js';
import { networkDelay } from './network-delay.js';
import { DEFAULT_SIMULATION_SEED, deriveSeed, exponential, xoshiro128 } from './seeded-random.js';
import { simulationClock } from './simulation-clock.js';

/** How the clients of the amplification model retry, in the order tables and charts list them. */
export const AmplificationMechanism = {
  /** One attempt per request. */
  NO_RETRIES: 'no-retries',
  /** Up to 3 retries ({@link AMPLIFICATION_POLICY}). */
  RETRIES: 'retries',
  /** Up to 3 retries, each granted by one `RetryBudget` shared by all clients; a denied retry ends the request. */
  RETRY_BUDGET: 'retry-budget',
  /** Up to 3 retries, every attempt admitted by one `CircuitBreaker` shared by all clients; a refusal ends the request. */
  CIRCUIT_BREAKER: 'circuit-breaker',
} as const;
export type AmplificationMechanism = (typeof AmplificationMechanism)[keyof typeof AmplificationMechanism];

/** Every mechanism, in display order. */
export const AMPLIFICATION_MECHANISMS: readonly AmplificationMechanism[] = Object.freeze(Object.values(AmplificationMechanism));

/** The retry policy of every mechanism but `no-retries`: core's default backoff (100 ms ×2 up to 10 s, full jitter), 4 attempts. */
export const AMPLIFICATION_POLICY: Readonly<RetryPolicy> = Object.freeze({ ...DEFAULT_POLICY, maxAttempts: 4 });

/** The breaker of `circuit-breaker`: the service's default per-target breaker settings. */
export const AMPLIFICATION_BREAKER: Readonly<Omit<CircuitBreakerOptions, 'clock'>> = Object.freeze(breakerOptionsOf(DEFAULT_TARGET_SETTINGS.breaker));

/** The budget of `retry-budget`: the service's default per-target retry budget. */
export const AMPLIFICATION_BUDGET: Readonly<Omit<RetryBudgetOptions, 'clock'>> = Object.freeze(retryBudgetOptionsOf(DEFAULT_TARGET_SETTINGS.retryBudget));

/** What {@link simulateAmplification} runs. */
export interface AmplificationOptions {
  /** Shares of calls the server fails, each from 0 to 1. Default 0.1, 0.3 and 0.5. */
  failureRates?: readonly number[];
  /** Clients, each sending requests as a Poisson process of {@link AMPLIFICATION_REQUESTS_PER_SECOND}. Default 100. */
  clients?: number;
  /** Virtual ms during which requests arrive; the requests still retrying then are followed to their end. Default 60,000. */
  durationMs?: number;
  /** The mechanisms, in output order. Default all of {@link AMPLIFICATION_MECHANISMS}. */
  mechanisms?: readonly AmplificationMechanism[];
  /** Seed of every draw. Default {@link DEFAULT_SIMULATION_SEED}. */
  seed?: number;
}

/** One mechanism at one failure rate. */
export interface AmplificationResult {
  mechanism: AmplificationMechanism;
  failureRate: number;
  /** Requests the clients made (each wants one first call). */
  requests: number;
  /** First attempts that reached the server (a breaker may refuse some). */
  firstCalls: number;
  /** Every call that reached the server, first attempts and retries. */
  calls: number;
  /** Load amplification: `calls / firstCalls` (0 when no call was made). */
  amplification: number;
  /** Server load against demand: `calls / requests`. */
  callsPerRequest: number;
  /** Requests that ended in a successful call: `succeeded / requests`. */
  successRate: number;
}

/** Requests per second of each client. */
export const AMPLIFICATION_REQUESTS_PER_SECOND = 10;
/** Default failure rates: 10%, 30% and 50% (a server that answers part of its calls), and 100% (one that is down). */
export const DEFAULT_FAILURE_RATES: readonly number[] = Object.freeze([0.1, 0.3, 0.5, 1]);
/** Default number of clients. */
export const DEFAULT_AMPLIFICATION_CLIENTS = 100;
/** Default time during which requests arrive, in virtual ms. */
export const DEFAULT_AMPLIFICATION_DURATION_MS = 60_000;

// An event is `id × 4 + kind`: a client's next request arrives; a request's next attempt is due; an attempt's
// answer reaches its client.
const ARRIVAL = 0;
const ATTEMPT = 1;
const ANSWER = 2;
// Mixed into every seed of this model, so that its streams are not the contention model's.
const MODEL_TAG = 0xa4f1;

/**
 * Load amplification under failure: `clients` clients with independent Poisson arrivals call a server that fails
 * each call with probability `failureRate`, every message taking `|Normal(10, 2)|` ms. Retries follow core's
 * `retry()` step by step (the same `planRetry`, breaker checks and budget withdrawals, in its order) on a virtual
 * clock, with one breaker or budget for all clients, as the service keeps one per target. Pure and seeded.
 *
 * @example
 * ```ts
 * simulateAmplification({ failureRates: [0.5], mechanisms: ['retries'] });
 * // [{ mechanism: 'retries', failureRate: 0.5, amplification: ≈1.875, successRate: ≈0.94, … }]
 * ```
 */
export function simulateAmplification(options: AmplificationOptions = {}): AmplificationResult[] {
  const rates = options.failureRates ?? DEFAULT_FAILURE_RATES;
  const mechanisms = options.mechanisms ?? AMPLIFICATION_MECHANISMS;
  const results: AmplificationResult[] = [];
  for (const failureRate of rates) {
    for (const mechanism of mechanisms) {
      results.push(runCell(mechanism, failureRate, options));
    }
  }
  return results;
}

function runCell(mechanism: AmplificationMechanism, failureRate: number, options: AmplificationOptions): AmplificationResult {
  const clients = options.clients ?? DEFAULT_AMPLIFICATION_CLIENTS;
  const durationMs = options.durationMs ?? DEFAULT_AMPLIFICATION_DURATION_MS;
  const seed = options.seed ?? DEFAULT_SIMULATION_SEED;
  // Arrivals draw from their own stream, the same in every cell: every mechanism and failure rate gets the same requests.
  const arrivals = xoshiro128(deriveSeed(seed, MODEL_TAG));
  const random = xoshiro128(deriveSeed(seed, MODEL_TAG, AMPLIFICATION_MECHANISMS.indexOf(mechanism), Math.round(failureRate * 1e6)));
  const delay = networkDelay(random);
  const queue = new EventQueue();
  const clock = simulationClock(() => queue.time);
  const breaker = mechanism === 'circuit-breaker' ? new CircuitBreaker({ ...AMPLIFICATION_BREAKER, clock }) : undefined;
  const budget = mechanism === 'retry-budget' ? new RetryBudget({ ...AMPLIFICATION_BUDGET, clock }) : undefined;
  const policy: RetryPolicy = mechanism === 'no-retries' ? { ...AMPLIFICATION_POLICY, maxAttempts: 1 } : AMPLIFICATION_POLICY;
  const meanGapMs = 1000 / AMPLIFICATION_REQUESTS_PER_SECOND;

  // Per request: when it began, attempts made, the last backoff delay, and whether the attempt in flight failed.
  const startedAt: number[] = [];
  const attempts: number[] = [];
  const previousDelay: number[] = [];
  const failing: boolean[] = [];
  let firstCalls = 0;
  let calls = 0;
  let succeeded = 0;

  const attempt = (request: number, now: number) => {
    if (breaker && !breaker.tryAcquire()) return;
    const made = (attempts[request] as number) + 1;
    attempts[request] = made;
    if (made === 1) {
      budget?.recordAttempt();
      firstCalls++;
    }
    calls++;
    failing[request] = random() < failureRate;
    queue.push(now + delay() + delay(), request * 4 + ANSWER);
  };

  const answer = (request: number, now: number) => {
    if (!failing[request]) {
      breaker?.onSuccess();
      succeeded++;
      return;
    }
    breaker?.onFailure();
    const plan = planRetry({
      policy,
      attemptsMade: attempts[request] as number,
      elapsedMs: now - (startedAt[request] as number),
      previousDelayMs: previousDelay[request] as number,
      random,
    });
    if (!plan.retry) return;
    // As retry() does: no sleep for a retry the breaker will refuse, and a retry is paid for before the sleep.
    if (breaker && breaker.retryAfterMs() > plan.delayMs) return;
    if (budget && !budget.tryWithdraw()) return;
    previousDelay[request] = plan.previousDelayMs;
    queue.push(now + plan.delayMs, request * 4 + ATTEMPT);
  };

  for (let client = 0; client < clients; client++) {
    const first = exponential(arrivals, meanGapMs);
    if (first < durationMs) queue.push(first, client * 4 + ARRIVAL);
  }
  while (queue.size > 0) {
    const event = queue.pop();
    const now = queue.time;
    const id = event >> 2;
    switch (event & 3) {
      case ARRIVAL: {
        const request = startedAt.length;
        startedAt.push(now);
        attempts.push(0);
        previousDelay.push(0);
        failing.push(false);
        attempt(request, now);
        const next = now + exponential(arrivals, meanGapMs);
        if (next < durationMs) queue.push(next, id * 4 + ARRIVAL);
        break;
      }
      case ATTEMPT:
        attempt(id, now);
        break;
      case ANSWER:
        answer(id, now);
        break;
    }
  }
  const requests = startedAt.length;
  return {
    mechanism,
    failureRate,
    requests,
    firstCalls,
    calls,
    amplification: firstCalls === 0 ? 0 : calls / firstCalls,
    callsPerRequest: requests === 0 ? 0 : calls / requests,
    successRate: requests === 0 ? 0 : succeeded / requests,
  };
}
