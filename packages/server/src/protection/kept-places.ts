import type { Clock } from '@retryd/core';
import type { Store, TaskRef } from '../store/store.js';

/**
 * The most retries of one target waiting to take back their place in line at once. The breaker sends one probe an open
 * period (a few while it counts good ones), so a handful of places covers every probe until the next hold is decided;
 * the cap keeps a wave of failures (every attempt in flight when the target went down) from costing a write each.
 */
export const MAX_KEPT_PLACES = 16;

/** A retry waiting for its own due time to take back its place in line. */
interface KeptPlace {
  ref: TaskRef;
  /** The task's version once its completion was written: the move is refused if anything changed it since. */
  version: number;
  /** Its attempt number in its run: the places of the tasks furthest along are kept first. */
  attempt: number;
  placeAt: number;
  timer: AbortController;
}

/**
 * Gives a held target's retries back their place in line once their own policy lets them go. A task whose attempt
 * failed while the breaker held its target is due again at the time its policy says, never sooner; but then it queues
 * behind every fresh task of its target, and a target that fails each key's first calls ("not ready yet") fails every
 * probe made of a fresh task. So when its own due time comes and the breaker still holds the target, the task is made
 * due at its old place (`placeAt`, a ms before it was last due) through `rescheduleTask`: it is due either way, the move
 * only puts it first among the tasks already due, the probes of the next open period. Guarded by the version the
 * completion left: a task claimed, cancelled or moved meanwhile is not touched. In memory and best effort: a place lost
 * with its instance costs a probe the order, never a task its retry.
 */
export class KeptPlaces {
  private readonly places = new Set<KeptPlace>();
  private closed = false;

  constructor(
    private readonly store: Pick<Store, 'rescheduleTask'>,
    private readonly clock: Clock,
    /** Whether the target is still held (its breaker not closed) at `now`. */
    private readonly holds: (now: number) => boolean,
    private readonly report: (error: unknown) => void,
  ) {}

  /**
   * Moves the task `ref`, written at `version`, to `placeAt` at `dueAt` (its own due time) if its target is held then.
   * At the cap, it takes the place of the task with the lowest attempt number, if its own is higher; else it is dropped.
   */
  keep(ref: TaskRef, version: number, attempt: number, dueAt: number, placeAt: number): void {
    if (this.closed) return;
    if (this.places.size >= MAX_KEPT_PLACES) {
      let lowest: KeptPlace | undefined;
      for (const place of this.places) if (lowest === undefined || place.attempt < lowest.attempt) lowest = place;
      if (lowest === undefined || lowest.attempt >= attempt) return;
      this.drop(lowest);
    }
    const place: KeptPlace = { ref, version, attempt, placeAt, timer: new AbortController() };
    this.places.add(place);
    this.clock.sleep(Math.max(0, dueAt - this.clock.now()), place.timer.signal).then(
      () => this.move(place),
      () => undefined,
    );
  }

  /** Drops every place still waiting (the target is forgotten, or the service stops). */
  close(): void {
    this.closed = true;
    for (const place of this.places) this.drop(place);
  }

  private drop(place: KeptPlace): void {
    this.places.delete(place);
    place.timer.abort();
  }

  private move(place: KeptPlace): void {
    this.places.delete(place);
    const now = this.clock.now();
    if (this.closed || !this.holds(now)) return;
    // Refused (claimed, cancelled or moved since) or gone: nothing to do, the task is where it should be.
    this.store.rescheduleTask(place.ref, { expectedVersion: place.version, nextAttemptAt: place.placeAt, updatedAt: now }).catch(this.report);
  }
}
