// The thread of bare-store.mjs's threaded form: holds the store and answers its calls.

import { parentPort, workerData } from 'node:worker_threads';
import { openBuiltStore } from '../built-store.mjs';
import { answerCalls } from '../message-calls.mjs';

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
// Started by bare-store.mjs as a worker thread: the port to it is always there.
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
port.on('message', answerCalls(ops, (message) => port.postMessage(message)));
