import { CircuitBreaker, CircuitState } from '@retryd/core';
import { ManualClock, seededRandom } from '@retryd/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { SharedBreaker, breakerKey } from '../src/protection/shared-breaker.js';
import { DEFAULT_TARGET_SETTINGS } from '../src/protection/target-settings.js';
import { A, opened, removeTempDir } from './sqlite-harness.js';

afterAll(removeTempDir);

// The shared breaker's reads on a real SQLite store: a version once adopted is not taken again, so that a read of a
// breaker that did not change costs no parse, while every change another instance writes is still adopted.

const target = { tenantId: 'default', targetKey: A };

describe('SharedBreaker.refresh', () => {
  it('adopts each new version once, reports a bad snapshot once per version, and counts every read as fresh', async () => {
    const store = await opened();
    const clock = new ManualClock(1_000_000);
    const invalid: Error[] = [];
    const breaker = new SharedBreaker(store.targetState, target, DEFAULT_TARGET_SETTINGS.breaker, clock, seededRandom(1), (e) => invalid.push(e));
    const key = breakerKey(A);

    expect(await breaker.refresh(clock.now())).toBe(false); // nothing stored: CLOSED, version 0
    expect(await store.targetState.putTargetState('default', key, 0, '{"not":"a breaker"}', clock.now())).toBe(true);
    expect(await breaker.refresh(clock.now())).toBe(true); // version 1, unreadable: adopted as closed, as before
    await clock.advance(10);
    expect(await breaker.refresh(clock.now())).toBe(false);
    expect(invalid.map((e) => e.message)).toEqual([`the stored breaker of ${A} is not a valid snapshot; it counts as closed`]);
    expect(breaker.readAt).toBe(clock.now());

    // Another instance opens it (version 2): adopted at the next read, and held.
    const other = new CircuitBreaker({ consecutiveFailures: 1, openDurationMs: 5_000, clock, random: seededRandom(2) });
    other.onFailure();
    const opening = other.toJSON();
    opening.openUntil = Math.ceil(opening.openUntil ?? 0);
    expect(await store.targetState.putTargetState('default', key, 1, JSON.stringify(opening), clock.now())).toBe(true);
    expect(await breaker.refresh(clock.now())).toBe(true);
    expect(breaker.stateAt(clock.now())).toBe(CircuitState.OPEN);
    expect(breaker.heldSince).toBe(opening.openedAt);
    // The same version again: nothing changes.
    await clock.advance(10);
    expect(await breaker.refresh(clock.now())).toBe(false);
    expect(breaker.snapshot).toEqual(opening);
    expect(breaker.readAt).toBe(clock.now());
    await store.close();
  });
});
