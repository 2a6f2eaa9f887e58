// W5's tenants variant runs through the library, not the HTTP API (tenants cannot be chosen over HTTP until API keys
// arrive): this process wires a store, a TaskService and an Engine from one build's dist/ exactly as
// packages/server/src/service/start-retryd.ts does (hand-off and wake-ups included), and the bench drives it over IPC.
// It runs in its own process so that the two builds compared never share an event loop or a module graph with each
// other or with the bench; the enqueue and the engine do share this one, as they do in an application that embeds
// the library (and as the API and the engine do in `retryd serve`).
//
//   fork('w5-library-process.mjs', [distDir])
//   → { id, cmd: 'open', storeUrl, sync, concurrency }                       ← { id, result: { storeKind } }
//   → { id, cmd: 'enqueueMany', tenantId, count, template, keyPrefix }       ← { id, result: { created, ms } }
//   → { id, cmd: 'enqueueTimed', tenantId, inputs }                          ← { id, result: { startedAt, endedAt, taskIds } }
//   → { id, cmd: 'recorded', tenantId }: epoch ms at which each of the tenant's tasks was recorded SUCCEEDED
//   → { id, cmd: 'close' }                                                   ← { id, result: true }, then exit
// Times are epoch ms (`performance.timeOrigin + performance.now()`), the base of the downstream's arrivals.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parentSend } from './message-calls.mjs';
import { stackOf } from './report.mjs';

const dist = process.argv[2];
if (dist === undefined) throw new Error('usage: w5-library-process.mjs <dist dir of a retryd build>');
const epochNow = () => performance.timeOrigin + performance.now();

/** A module of the build, at the first of `paths` that exists (folders moved between builds). */
async function load(...paths) {
  for (const p of paths) {
    const file = join(dist, p);
    if (existsSync(file)) return import(pathToFileURL(file).href);
  }
  throw new Error(`none of ${paths.join(', ')} in ${dist}`);
}

let store;
let blobs;
let engine;
let taskService;
let stopListening;
/** tenantId → (taskId → epoch ms recorded SUCCEEDED), from the engine's onAttempt hook (called once durable). */
const succeededAt = new Map();
const errors = [];

const commands = {
  async open({ storeUrl, sync, concurrency }) {
    // `service/open-store.js` since the folders were sorted by what they hold; `store/open-store.js` before.
    const { openStore } = await load('service/open-store.js', 'store/open-store.js');
    const { TaskService } = await load('tasks/task-service.js');
    const { Engine } = await load('engine/engine.js');
    const { TargetGuard, parseAllowList } = await load('security/target-guard.js');
    ({ store, blobs } = await openStore(storeUrl, {
      synchronous: sync === 'normal' ? 'NORMAL' : 'FULL',
      onError: (error) => errors.push(`store: ${error?.message ?? error}`),
    }));
    // The downstream listens on 127.0.0.1: allowed at creation and, since the check at dispatch, on every connection.
    const targetGuard = new TargetGuard({ allow: parseAllowList(['127.0.0.1/32']) });
    engine = new Engine({
      store,
      loadBody: (ref) => blobs.get(ref),
      concurrency,
      targetGuard,
      onAttempt: (task) => {
        if (task.status !== 'SUCCEEDED') return;
        let m = succeededAt.get(task.tenantId);
        if (m === undefined) succeededAt.set(task.tenantId, (m = new Map()));
        if (!m.has(task.taskId)) m.set(task.taskId, epochNow());
      },
      onError: (error, context) => {
        if (errors.length < 20) errors.push(`engine (${context?.operation}): ${error?.message ?? error}`);
      },
    });
    taskService = new TaskService({
      store,
      blobs,
      targetGuard,
      wake: () => engine.wake(),
      onPolicyChanged: (tenantId, policyId) => engine.invalidatePolicy(tenantId, policyId),
      handOff: engine,
    });
    await engine.start();
    stopListening = store.onDue?.(() => engine.wake());
    return { storeKind: store.kind };
  },
  /**
   * `count` tasks like `template`, with idempotency keys `<keyPrefix><i>` and a small body naming i, through
   * `enqueueBatch` 1,000 at a time, 4 calls in flight (as the HTTP variant sends its batches). Made here, not sent over
   * IPC, so the enqueue rate is the library's.
   */
  async enqueueMany({ tenantId, count, template, keyPrefix }) {
    const started = performance.now();
    let next = 0;
    const lane = async () => {
      while (next < count) {
        const from = next;
        const to = Math.min(count, from + 1000);
        next = to;
        const inputs = [];
        for (let i = from; i < to; i++) inputs.push({ ...template, idempotencyKey: `${keyPrefix}${i}`, body: JSON.stringify({ n: i, note: 'w5' }) });
        const results = await taskService.enqueueBatch(tenantId, inputs);
        const bad = results.filter((r) => r.kind === 'error');
        if (bad.length > 0) throw new Error(`enqueueBatch(${tenantId}): ${bad.length} refused, first: ${bad[0].error?.message}`);
      }
    };
    await Promise.all([lane(), lane(), lane(), lane()]);
    return { created: count, ms: performance.now() - started };
  },
  async enqueueTimed({ tenantId, inputs }) {
    const startedAt = epochNow();
    const results = await taskService.enqueueBatch(tenantId, inputs);
    const endedAt = epochNow();
    const bad = results.filter((r) => r.kind === 'error');
    if (bad.length > 0) throw new Error(`enqueueBatch(${tenantId}): ${bad.length} refused, first: ${bad[0].error?.message}`);
    return { startedAt, endedAt, taskIds: results.map((r) => r.task.taskId) };
  },
  recorded({ tenantId }) {
    return [...(succeededAt.get(tenantId) ?? new Map())];
  },
  errors: () => errors,
  async close() {
    stopListening?.();
    await engine?.stop({ graceMs: 5_000 });
    await taskService?.close();
    await store?.close();
    setImmediate(() => process.exit(0));
    return true;
  },
};

const send = parentSend();
process.on('message', async (/** @type {any} */ { id, cmd, ...args }) => {
  try {
    const handler = commands[cmd];
    if (handler === undefined) throw new Error(`unknown command ${cmd}`);
    send({ id, result: await handler(args) });
  } catch (error) {
    send({ id, error: stackOf(error) });
  }
});
process.on('disconnect', () => process.exit(0));
send({ event: 'ready' });
