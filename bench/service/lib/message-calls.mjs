// Calls to an object in another thread or process, over its messages: `{ id, op, args }` out, `{ id, result }` or
// `{ id, error }` back. Used by the bare loops' store thread (bare-store.mjs) and the references' own processes
// (in-child.mjs).

import { stackOf } from './report.mjs';

/**
 * The calling side: `send(message)` posts a message to the other side; feed every message that comes back to
 * `receive`. `call(op, ...args)` resolves with the other side's result, or rejects with its error; `failAll(error)`
 * rejects every call still waiting (the other side is gone).
 */
export function messageCalls(send) {
  const waiting = new Map();
  let next = 0;
  return {
    call: (op, ...args) =>
      new Promise((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve, reject });
        send({ id, op, args });
      }),
    receive({ id, result, error }) {
      const waiter = waiting.get(id);
      waiting.delete(id);
      if (error !== undefined) waiter?.reject(new Error(error));
      else waiter?.resolve(result);
    },
    failAll(error) {
      for (const waiter of waiting.values()) waiter.reject(error);
      waiting.clear();
    },
  };
}

/** The answering side: runs `ops[op](...args)` for each message given to the returned function and sends the outcome. */
export function answerCalls(ops, send) {
  return async ({ id, op, args }) => {
    try {
      send({ id, result: await ops[op](...args) });
    } catch (error) {
      send({ id, error: stackOf(error) });
    }
  };
}

/**
 * The way back to the parent of a script the benchmarks `fork` (a downstream, a library process, a reference): its
 * IPC channel's `send`. Throws when the script was started without one (by hand), where it has no one to answer.
 *
 * @returns {(message: object) => boolean}
 */
export function parentSend() {
  const send = process.send;
  if (send === undefined) throw new Error(`${process.argv[1]} runs as a child of a benchmark (fork, with an IPC channel)`);
  return send.bind(process);
}
