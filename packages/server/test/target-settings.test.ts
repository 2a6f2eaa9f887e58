import { CircuitBreaker, CircuitState } from '@retryd/core';
import { ManualClock } from '@retryd/core/testing';
import { describe, expect, it } from 'vitest';
import { breakerOptionsOf } from '../src/protection/core-options.js';
import { DEFAULT_TARGET_SETTINGS, PROTECTIONS_OFF, applySettingsPatch, burstOf } from '../src/protection/target-settings.js';

describe('target settings', () => {
  it('applies a partial patch over a base, leaving the rest as it was', () => {
    const result = applySettingsPatch(DEFAULT_TARGET_SETTINGS, { breaker: { openDurationMs: 2_000 }, maxInFlight: 8, rateLimit: { ratePerSecond: 50 } });
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    expect(result.settings.breaker).toEqual({ ...DEFAULT_TARGET_SETTINGS.breaker, openDurationMs: 2_000 });
    expect(result.settings.maxInFlight).toBe(8);
    expect(result.settings.rateLimit).toEqual({ ratePerSecond: 50, burst: null });
    expect(burstOf(result.settings)).toBe(1);
    expect(burstOf({ ...result.settings, rateLimit: { ratePerSecond: 500, burst: null } })).toBe(5);
    expect(result.settings.adaptive).toEqual(DEFAULT_TARGET_SETTINGS.adaptive);
    // The base is not changed.
    expect(DEFAULT_TARGET_SETTINGS.breaker.openDurationMs).toBe(20);
  });

  it('reports every broken rule at once, naming the field and the rule', () => {
    const result = applySettingsPatch(DEFAULT_TARGET_SETTINGS, {
      breaker: { failureRateThreshold: 0, halfOpenProbes: 1.5, colour: 'red' },
      maxInFlight: 0,
      adaptive: 'fast',
      retryBudget: { retryRatio: -1 },
      speed: 3,
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => `${e.field}: ${e.rule}`)).toEqual([
      'breaker.failureRateThreshold: a number > 0 and <= 1',
      'breaker.halfOpenProbes: an integer >= 1',
      'breaker.colour: absent (known fields: enabled, consecutiveFailures, failureRateThreshold, minimumCalls, windowMs, openDurationMs, openBackoffMultiplier, maxOpenDurationMs, halfOpenProbes)',
      'maxInFlight: null or an integer >= 1',
      'adaptive: an object',
      'retryBudget.retryRatio: a finite number >= 0',
      'speed: absent (known fields: breaker, rateLimit, adaptive, retryBudget, stormDetection, signing, maxInFlight, retryAfterHoldsTarget, attemptTimeoutMs, connectTimeoutMs)',
    ]);
    expect(result.errors[0]?.message).toBe('breaker.failureRateThreshold must be a number > 0 and <= 1');
  });

  it('checks the rules that tie fields together', () => {
    const tied = applySettingsPatch(DEFAULT_TARGET_SETTINGS, { breaker: { maxOpenDurationMs: 10 }, rateLimit: { burst: 5 } });
    expect(tied.ok ? [] : tied.errors.map((e) => e.field)).toEqual(['breaker.maxOpenDurationMs', 'rateLimit.burst']);
    expect(applySettingsPatch(DEFAULT_TARGET_SETTINGS, [] as unknown).ok).toBe(false);
  });

  it('takes signing secrets only as {{secret:NAME}} references, naming each refused one by its index', () => {
    const signed = applySettingsPatch(DEFAULT_TARGET_SETTINGS, { signing: { enabled: true, secrets: ['{{secret:HOOK_NEW}}', '{{secret:HOOK_OLD}}'] } });
    if (!signed.ok) throw new Error(JSON.stringify(signed.errors));
    expect(signed.settings.signing).toEqual({ enabled: true, secrets: ['{{secret:HOOK_NEW}}', '{{secret:HOOK_OLD}}'] });
    // Off by default, and off again without losing its secrets.
    expect(DEFAULT_TARGET_SETTINGS.signing).toEqual({ enabled: false, secrets: [] });
    const off = applySettingsPatch(signed.settings, { signing: { enabled: false } });
    expect(off.ok && off.settings.signing).toEqual({ enabled: false, secrets: ['{{secret:HOOK_NEW}}', '{{secret:HOOK_OLD}}'] });

    const reference =
      "a reference {{secret:NAME}} to a secret of the target's tenant or a shared one; a literal secret is never stored";
    const refused = applySettingsPatch(DEFAULT_TARGET_SETTINGS, {
      signing: { enabled: 'yes', secrets: ['{{secret:OK}}', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'x {{secret:OK}}', 7, '{{secret:a-b}}'] },
    });
    expect(refused.ok ? [] : refused.errors.map((e) => `${e.field}: ${e.rule}`)).toEqual([
      'signing.enabled: true or false',
      `signing.secrets[1]: ${reference}`,
      `signing.secrets[2]: ${reference}`,
      `signing.secrets[3]: ${reference}`,
      `signing.secrets[4]: ${reference}`,
    ]);
    // A refused value is named by its field, never quoted.
    expect(JSON.stringify(refused)).not.toContain('whsec_');
    const tooMany = applySettingsPatch(DEFAULT_TARGET_SETTINGS, { signing: { secrets: Array.from({ length: 6 }, (_, i) => `{{secret:S${i}}}`) } });
    expect(tooMany.ok ? [] : tooMany.errors.map((e) => `${e.field}: ${e.rule}`)).toEqual(['signing.secrets: an array of at most 5 items']);
    const none = applySettingsPatch(DEFAULT_TARGET_SETTINGS, { signing: { enabled: true } });
    expect(none.ok ? [] : none.errors.map((e) => `${e.field}: ${e.rule}`)).toEqual([
      'signing.secrets: at least one {{secret:NAME}} reference when signing.enabled is true',
    ]);
  });

  it('has every protection on by default but the retry budget, and a form with every one off', () => {
    expect(DEFAULT_TARGET_SETTINGS.breaker.enabled && DEFAULT_TARGET_SETTINGS.adaptive.enabled).toBe(true);
    expect(DEFAULT_TARGET_SETTINGS.stormDetection.enabled).toBe(true);
    // A backlog's retries outnumber its first attempts many times over once they are made: W7's overload took 29× longer.
    expect(DEFAULT_TARGET_SETTINGS.retryBudget.enabled).toBe(false);
    expect(PROTECTIONS_OFF.breaker.enabled || PROTECTIONS_OFF.adaptive.enabled || PROTECTIONS_OFF.retryBudget.enabled).toBe(false);
    expect(Object.isFrozen(DEFAULT_TARGET_SETTINGS.breaker)).toBe(true);
  });

  describe('the default breaker, on a manual clock with the longest jitter draw', () => {
    /**
     * A target that fails every call until `recoversAtMs`, probed as each half-open period admits (a failed probe
     * re-opens the breaker). Returns when the breaker closed and how many probe rounds it took.
     */
    function outage(recoversAtMs: number, untilMs = Number.POSITIVE_INFINITY) {
      const clock = new ManualClock(0);
      const breaker = new CircuitBreaker({ ...breakerOptionsOf(DEFAULT_TARGET_SETTINGS.breaker), clock, openJitter: 'EQUAL', random: () => 1 - 2 ** -20 });
      breaker.forceOpen();
      let rounds = 0;
      while (breaker.state !== CircuitState.CLOSED && clock.now() < untilMs) {
        clock.tick(breaker.retryAfterMs());
        rounds++;
        for (let probe = 0; probe < DEFAULT_TARGET_SETTINGS.breaker.halfOpenProbes; probe++) {
          if (!breaker.tryAcquire()) break; // a failed probe re-opened it
          if (clock.now() >= recoversAtMs) breaker.onSuccess();
          else breaker.onFailure();
        }
      }
      return { closedAtMs: clock.now(), rounds };
    }

    it('finds the end of an outage within about a fifth of its length', () => {
      // W3's outage: with periods that doubled, the breaker found it 1–10 s late and the backlog waited that long.
      expect(outage(10_000).closedAtMs - 10_000).toBeLessThanOrEqual(2_000);
      expect(outage(60_000).closedAtMs - 60_000).toBeLessThanOrEqual(12_000);
    });

    it('probes a target that stays dead for an hour in at most ~60 rounds (one call each: W7 allows 100)', () => {
      const { rounds } = outage(Number.POSITIVE_INFINITY, 3_600_000);
      expect(rounds).toBeLessThanOrEqual(60);
      expect(rounds).toBeGreaterThan(40);
    });
  });
});
