/**
 * How flaky the mock gateway is, as shares of charge requests (each 0 to 1, summing to at most 1). Cards are
 * flaky on top by their last four digits: {@link DECLINED_CARD_SUFFIX} is always declined,
 * {@link ISSUER_DOWN_CARD_SUFFIX} always answers 503 (its issuer is down: retries run out).
 */
export interface Flakiness {
  /** Held past any client's timeout and never applied. Default 0.05. */
  timeout: number;
  /** Applied, then the connection is dropped before the answer: the client cannot tell. Default 0.05. */
  loseResponse: number;
  /** Answered 503 without applying. Default 0.1. */
  unavailable: number;
}

/** The default {@link Flakiness}: one request in five goes wrong. */
export const DEFAULT_FLAKINESS: Flakiness = Object.freeze({ timeout: 0.05, loseResponse: 0.05, unavailable: 0.1 });

/** Cards ending so are declined (a permanent refusal). */
export const DECLINED_CARD_SUFFIX = '0002';
/** Cards ending so meet an issuer that is down for good: every request answers 503. */
export const ISSUER_DOWN_CARD_SUFFIX = '0005';

/** What the mock gateway does with one charge request. */
export type ChargeBehaviour = 'charge' | 'decline' | 'timeout' | 'lose_response' | 'unavailable' | 'issuer_down';

/**
 * The behaviour for a request with `card`, given one uniform `roll` in [0, 1). Pure: the gateway draws the roll
 * from its seeded random, tests pass their own.
 *
 * Transport faults come first, as on a real network: even a declined card can time out. A declined card is
 * declined on every request, so its key's first recorded answer is the decline.
 */
export function chargeBehaviour(card: string, roll: number, flakiness: Flakiness = DEFAULT_FLAKINESS): ChargeBehaviour {
  if (roll < flakiness.timeout) return 'timeout';
  if (roll < flakiness.timeout + flakiness.unavailable) return 'unavailable';
  if (card.endsWith(ISSUER_DOWN_CARD_SUFFIX)) return 'issuer_down';
  if (card.endsWith(DECLINED_CARD_SUFFIX)) return 'decline';
  if (roll < flakiness.timeout + flakiness.unavailable + flakiness.loseResponse) return 'lose_response';
  return 'charge';
}

/** Checks a {@link Flakiness} read from the environment; names the field and the rule. */
export function assertValidFlakiness(flakiness: Flakiness): void {
  for (const field of ['timeout', 'loseResponse', 'unavailable'] as const) {
    const value = flakiness[field];
    if (!Number.isFinite(value) || value < 0 || value > 1) throw new RangeError(`flakiness.${field} must be a number from 0 to 1, got ${value}`);
  }
  const sum = flakiness.timeout + flakiness.loseResponse + flakiness.unavailable;
  if (sum > 1) throw new RangeError(`flakiness shares must sum to at most 1, got ${sum}`);
}
