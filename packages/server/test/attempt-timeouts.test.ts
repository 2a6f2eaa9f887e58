import { describe, expect, it } from 'vitest';
import { resolveTimeouts } from '../src/domain/attempt-timeouts.js';
import { resolveEngineOptions } from '../src/engine/engine-options.js';
import { applySettingsPatch, DEFAULT_TARGET_SETTINGS } from '../src/protection/target-settings.js';
import { makeTask } from './fixtures/tasks.js';

const SERVICE = { attemptTimeoutMs: 30_000, connectTimeoutMs: 5_000 };
const NONE = { attemptTimeoutMs: null, connectTimeoutMs: null };

describe('resolveTimeouts', () => {
  it("takes each timeout from the task, else its target, else the service, field by field", () => {
    expect(resolveTimeouts(NONE, undefined, SERVICE)).toEqual(SERVICE);
    expect(resolveTimeouts(NONE, { attemptTimeoutMs: 120_000, connectTimeoutMs: null }, SERVICE)).toEqual({ attemptTimeoutMs: 120_000, connectTimeoutMs: 5_000 });
    expect(resolveTimeouts({ attemptTimeoutMs: null, connectTimeoutMs: 800 }, { attemptTimeoutMs: 120_000, connectTimeoutMs: 2_000 }, SERVICE)).toEqual({
      attemptTimeoutMs: 120_000,
      connectTimeoutMs: 800,
    });
    expect(resolveTimeouts({ attemptTimeoutMs: 60_000, connectTimeoutMs: null }, { attemptTimeoutMs: 120_000, connectTimeoutMs: 2_000 }, SERVICE)).toEqual({
      attemptTimeoutMs: 60_000,
      connectTimeoutMs: 2_000,
    });
  });

  it("cuts a connect timeout that levels combine past the attempt's to it", () => {
    expect(resolveTimeouts({ attemptTimeoutMs: 200, connectTimeoutMs: null }, undefined, SERVICE)).toEqual({ attemptTimeoutMs: 200, connectTimeoutMs: 200 });
    expect(resolveTimeouts(makeTask({ attemptTimeoutMs: 300 }), { attemptTimeoutMs: null, connectTimeoutMs: 1_000 }, SERVICE)).toEqual({
      attemptTimeoutMs: 300,
      connectTimeoutMs: 300,
    });
  });
});

describe("a target's timeouts in its settings", () => {
  it('are null by default, and checked with the field and the rule named', () => {
    expect(DEFAULT_TARGET_SETTINGS).toMatchObject(NONE);
    expect(applySettingsPatch(DEFAULT_TARGET_SETTINGS, { attemptTimeoutMs: 1_800_000, connectTimeoutMs: 1 })).toMatchObject({
      ok: true,
      settings: { attemptTimeoutMs: 1_800_000, connectTimeoutMs: 1 },
    });
    expect(applySettingsPatch(DEFAULT_TARGET_SETTINGS, { attemptTimeoutMs: '5s' })).toEqual({
      ok: false,
      errors: [
        {
          field: 'attemptTimeoutMs',
          rule: 'null or a whole number of ms from 1 to 1800000 (30 minutes)',
          message: 'attemptTimeoutMs must be null or a whole number of ms from 1 to 1800000 (30 minutes)',
        },
      ],
    });
  });
});

describe('the engine options', () => {
  it('cut a connect timeout longer than the attempt timeout to it, and default it to 5 s', () => {
    expect(resolveEngineOptions({ store: undefined as never, attemptTimeoutMs: 1_000, connectTimeoutMs: 2_000 }).connectTimeoutMs).toBe(1_000);
    expect(() => resolveEngineOptions({ store: undefined as never, connectTimeoutMs: 0 })).toThrow('Expected `connectTimeoutMs` to be an integer >= 1, got 0.');
    expect(resolveEngineOptions({ store: undefined as never, attemptTimeoutMs: 1_000 }).connectTimeoutMs).toBe(1_000);
    expect(resolveEngineOptions({ store: undefined as never }).connectTimeoutMs).toBe(5_000);
  });
});
