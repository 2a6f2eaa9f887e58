import type { QueuedCall, QueuePersistence } from '../src/index.js';

/** A persistence in a Map, standing in for IndexedDB (which the browser test uses); `calls` is what it holds. */
export function memoryPersistence(): QueuePersistence & { calls: Map<string, QueuedCall> } {
  const calls = new Map<string, QueuedCall>();
  return {
    calls,
    load: async () => [...calls.values()].map((c) => structuredClone(c)),
    save: async (call) => void calls.set(call.id, structuredClone(call)),
    remove: async (id) => void calls.delete(id),
  };
}
