// The process a reference contender runs in (see in-child.mjs): makes the contender named by the first message and
// answers each call with its result, in order.

import { bareContender } from './bare.mjs';
import { bareStoreContender } from './bare-store.mjs';

/** The references that can run here, by contender id. */
const REFERENCES = {
  bare: () => bareContender(),
  'bare-store': () => bareStoreContender(),
  'bare-store-thread': () => bareStoreContender({ threaded: true }),
};

let contender;
process.on('message', async ({ id, op, args }) => {
  try {
    if (op === 'create') contender = REFERENCES[args[0]]();
    const result = op === 'create' ? undefined : await contender[op](...args);
    process.send({ id, result });
  } catch (error) {
    process.send({ id, error: String(error?.stack ?? error) });
  }
});
