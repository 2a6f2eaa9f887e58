import { setTimeout as sleep } from 'node:timers/promises';
import { PaymentStatus } from '../payment/payment-status.js';
import type { PaymentProcessor } from './payment-processor.js';
import type { PaymentStore } from './payment-store.js';

/**
 * Polls retryd for the tasks of BACKOFF payments and settles those that ended, `concurrency` at a time, every
 * `intervalMs`, until `signal` aborts; each round also hands to retryd the payments a failed step left SENDING for
 * `strandedAfterMs` (default 10 s). retryd has no completion callback: polling the task is its documented way.
 */
export async function pollSettlements(
  store: PaymentStore,
  processor: PaymentProcessor,
  options: { signal: AbortSignal; intervalMs?: number; concurrency?: number; strandedAfterMs?: number; onError: (error: unknown) => void },
): Promise<void> {
  const { signal, onError } = options;
  const concurrency = options.concurrency ?? 16;
  while (!signal.aborted) {
    const ids = store.withStatus([PaymentStatus.BACKOFF]).map((p) => p.paymentId);
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < ids.length && !signal.aborted) {
        const id = ids[next++] as string;
        await processor.settle(id).catch(onError);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, lane));
    await processor.sweepStranded(options.strandedAfterMs ?? 10_000).catch(onError);
    await sleep(options.intervalMs ?? 100, undefined, { signal }).catch(() => undefined);
  }
}
