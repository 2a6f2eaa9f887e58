// The process a reference contender runs in (see in-child.mjs): makes the contender named by the first call and
// answers each call with its result.

import { answerCalls, parentSend } from '../message-calls.mjs';
import { STORE_NAMES, bareStoreId } from '../report.mjs';
import { bareContender } from './bare.mjs';
import { bareStoreContender } from './bare-store.mjs';

/** The references that can run here, by contender id, each made with the options in-child.mjs was given. */
const REFERENCES = {
  bare: () => bareContender(),
  ...Object.fromEntries(Object.keys(STORE_NAMES).map((storeKind) => [bareStoreId(storeKind), () => bareStoreContender({ storeKind })])),
  [bareStoreId('sqlite', true)]: () => bareStoreContender({ threaded: true }),
  // On W1's own Redis with AOF (--redis-aof): its url and appendfsync.
  [`${bareStoreId('redis')}-aof`]: ({ url, aof }) => bareStoreContender({ storeKind: 'redis', url, aof }),
};

let contender;
const ops = {
  create: (id, options) => {
    contender = REFERENCES[id](options);
  },
  // Read after setup: a store server's durability is known once the store is reached.
  durability: () => contender.durability,
};
for (const op of ['setup', 'enqueue', 'startWorkers', 'waitRecorded', 'cpuMs', 'teardown']) ops[op] = (...args) => contender[op](...args);
process.on('message', answerCalls(ops, parentSend()));
