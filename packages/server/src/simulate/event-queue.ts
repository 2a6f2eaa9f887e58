/**
 * The future events of a discrete-event simulation: a binary min-heap of `(time, event)` pairs, where an event is
 * a small integer the model decodes. Events at the same time come out in the order they were pushed (or in an order
 * the model gives), so a run depends on nothing but its seed. Typed arrays, no objects per event: the contention
 * model pushes tens of millions of them.
 *
 * @example
 * ```ts
 * const queue = new EventQueue();
 * queue.push(12.5, 3);
 * queue.pop(); // 3, with queue.time === 12.5
 * ```
 */
export class EventQueue {
  private times = new Float64Array(64);
  private orders = new Float64Array(64);
  private events = new Int32Array(64);
  private count = 0;
  private pushed = 0;
  /** The time of the event last popped: the simulation's clock. */
  time = 0;

  /** Events waiting. */
  get size(): number {
    return this.count;
  }

  /**
   * Whether the earliest event waiting comes before `other`'s (by time, then order): which of two queues to take from
   * next. Both must not be empty.
   */
  headBefore(other: EventQueue): boolean {
    return this.before(this.times[0] as number, this.orders[0] as number, 0, other.times[0] as number, other.orders[0] as number);
  }

  /**
   * Schedules `event` (an integer) at `time`. Events at the same time come out by `order`, by default the order of
   * their pushes; a model that needs another tie-break (a store's `ORDER BY due, id`) passes its own.
   */
  push(time: number, event: number, order: number = this.pushed): void {
    if (this.count === this.times.length) this.grow();
    let i = this.count++;
    this.pushed++;
    // Sift up: move parents down until the new event's place is found.
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(time, order, parent)) break;
      this.move(parent, i);
      i = parent;
    }
    this.set(i, time, order, event);
  }

  /** Takes the earliest event, sets {@link EventQueue.time} to its time, and returns it. The queue must not be empty. */
  pop(): number {
    if (this.count === 0) throw new RangeError('pop() on an empty EventQueue');
    const event = this.events[0] as number;
    this.time = this.times[0] as number;
    const last = --this.count;
    if (last > 0) {
      const time = this.times[last] as number;
      const order = this.orders[last] as number;
      const moved = this.events[last] as number;
      let i = 0;
      // Sift down the former last event from the root.
      for (;;) {
        const left = 2 * i + 1;
        if (left >= last) break;
        const right = left + 1;
        const child = right < last && this.earlier(right, left) ? right : left;
        if (!this.before(this.times[child] as number, this.orders[child] as number, i, time, order)) break;
        this.move(child, i);
        i = child;
      }
      this.set(i, time, order, moved);
    }
    return event;
  }

  /** Forgets every event and sets the clock back to 0, keeping the memory. */
  clear(): void {
    this.count = 0;
    this.pushed = 0;
    this.time = 0;
  }

  /** Whether `(time, order)` comes before slot `j` (or before `(jTime, jOrder)` when given). */
  private before(time: number, order: number, j: number, jTime = this.times[j] as number, jOrder = this.orders[j] as number): boolean {
    return time < jTime || (time === jTime && order < jOrder);
  }

  private earlier(i: number, j: number): boolean {
    return this.before(this.times[i] as number, this.orders[i] as number, j);
  }

  private move(from: number, to: number): void {
    this.set(to, this.times[from] as number, this.orders[from] as number, this.events[from] as number);
  }

  private set(i: number, time: number, order: number, event: number): void {
    this.times[i] = time;
    this.orders[i] = order;
    this.events[i] = event;
  }

  private grow(): void {
    const size = this.times.length * 2;
    const times = new Float64Array(size);
    const orders = new Float64Array(size);
    const events = new Int32Array(size);
    times.set(this.times);
    orders.set(this.orders);
    events.set(this.events);
    this.times = times;
    this.orders = orders;
    this.events = events;
  }
}
