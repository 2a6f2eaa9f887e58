import { ManualClock } from '@retryd/core/testing';
import { describe, expect, it } from 'vitest';
import { KeptPlaces, MAX_KEPT_PLACES } from '../src/protection/kept-places.js';
import type { RescheduleChange, TaskRef, TransitionResult } from '../src/store/store.js';

// The moves that give a held target's retries back their place in line, on a manual clock, recorded as the store is
// asked for them (what the store does with a move is the store conformance suite's `rescheduleTask`).

const T0 = 1_700_000_000_000;

function keeper(holds: () => boolean = () => true) {
  const clock = new ManualClock(T0);
  const moves: { taskId: string; change: RescheduleChange }[] = [];
  const errors: unknown[] = [];
  const store = {
    rescheduleTask: (ref: TaskRef, change: RescheduleChange): Promise<TransitionResult> => {
      moves.push({ taskId: ref.taskId, change });
      return Promise.resolve({ kind: 'not_found' });
    },
  };
  return { clock, moves, errors, places: new KeptPlaces(store, clock, holds, (e) => errors.push(e)) };
}

const ref = (taskId: string): TaskRef => ({ tenantId: 'default', taskId });

describe('KeptPlaces', () => {
  it('moves a retry to its place at its own due time, guarded by its version, and only while the target is held', async () => {
    let held = true;
    const k = keeper(() => held);
    k.places.keep(ref('a'), 7, 1, T0 + 500, T0 - 1);
    k.places.keep(ref('b'), 3, 1, T0 + 900, T0 - 1);
    await k.clock.advance(499);
    expect(k.moves).toEqual([]);
    await k.clock.advance(1);
    expect(k.moves).toEqual([{ taskId: 'a', change: { expectedVersion: 7, nextAttemptAt: T0 - 1, updatedAt: T0 + 500 } }]);
    held = false;
    await k.clock.advance(400);
    expect(k.moves).toHaveLength(1);
    expect(k.errors).toEqual([]);
  });

  it(`keeps at most ${MAX_KEPT_PLACES}, those of the tasks furthest along, and none once closed`, async () => {
    const k = keeper();
    for (let i = 0; i < MAX_KEPT_PLACES; i++) k.places.keep(ref(`first-${i}`), 1, 1, T0 + 100, T0 - 1);
    k.places.keep(ref('later'), 1, 3, T0 + 100, T0 - 1);
    k.places.keep(ref('dropped'), 1, 1, T0 + 100, T0 - 1);
    await k.clock.advance(100);
    const moved = k.moves.map((m) => m.taskId);
    expect(moved).toHaveLength(MAX_KEPT_PLACES);
    expect(moved).toContain('later');
    expect(moved).not.toContain('dropped');
    k.places.keep(ref('waiting'), 1, 1, T0 + 300, T0 - 1);
    k.places.close();
    k.places.keep(ref('after'), 1, 1, T0 + 300, T0 - 1);
    await k.clock.advance(500);
    expect(k.moves).toHaveLength(MAX_KEPT_PLACES);
  });
});
