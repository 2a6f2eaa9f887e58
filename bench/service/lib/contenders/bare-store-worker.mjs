// The thread of bare-store.mjs's threaded form: holds the store and answers its calls, one at a time, in order.

import { parentPort, workerData } from 'node:worker_threads';
import { openBuiltStore } from '../built-store.mjs';

let store;
const ops = {
  open: async () => {
    store = await openBuiltStore(workerData.dist, workerData.place);
  },
  insertTasks: (tasks) => store.insertTasks(tasks),
  claimDue: (now, options) => store.claimDue(now, options),
  completeAndClaim: (completions, now, options) => store.completeAndClaim(completions, now, options),
  close: () => store.close(),
};
parentPort.on('message', async ({ id, op, args }) => {
  try {
    parentPort.postMessage({ id, result: await ops[op](...args) });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error?.stack ?? error) });
  }
});
