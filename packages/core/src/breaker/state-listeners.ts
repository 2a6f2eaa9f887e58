import type { CircuitStateChange, CircuitStateListener } from './breaker-state.js';

/**
 * The listeners of one breaker. A listener that throws does not stop the others or the breaker: its error
 * is rethrown from a microtask, where it surfaces as an uncaught exception (as with `EventTarget`
 * listeners), because throwing it to whoever happened to cause the change (say, `onSuccess()` inside a
 * caller's request) would turn their success into a failure.
 */
export class StateListeners {
  // Entries, not the functions themselves, so that adding one function twice gives two subscriptions.
  private readonly entries = new Set<{ listener: CircuitStateListener }>();

  /** Subscribes `listener`; returns its unsubscribe function. */
  add(listener: CircuitStateListener): () => void {
    const entry = { listener };
    this.entries.add(entry);
    return () => {
      this.entries.delete(entry);
    };
  }

  /** Calls every listener subscribed now, in subscription order; (un)subscribing during the call affects the next one. */
  emit(change: CircuitStateChange): void {
    for (const { listener } of [...this.entries]) {
      try {
        listener(change);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}
