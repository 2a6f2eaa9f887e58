// A reference contender (the bare loops) run in a process of its own, as retryd's service runs in its own: the
// figures then owe nothing to what the bench process holds from the runs before (the peers' clients, their garbage),
// and the CPU counted is the reference's alone. (In the bench process, a report run's bare loop made 18,192 attempts/s
// in its first round and 10,364 and 11,796 in the next two; in processes of their own, a later run's made 11,326,
// 14,993 and 9,574: the machine's own drift is as large, and this removes one cause, not the noise.)

import { fork } from 'node:child_process';
import { messageCalls } from '../message-calls.mjs';

/**
 * `make(options)` is the contender as it would run in this process (for its id, name and durability); its calls go to
 * a child process (reference-child.mjs) that makes its own with the reference `id` and the same `options` (plain data:
 * they cross to the child as a message), started at each `setup` and ended at each `teardown`: a fresh process every
 * round. `cpuMs` is the child's.
 */
export function inChild(make, options = {}) {
  const local = make(options);
  let child;
  let calls;
  const call = (op, ...args) => (calls === undefined ? Promise.reject(new Error(`${local.id}: ${op} before setup`)) : calls.call(op, ...args));
  let durability = local.durability;
  return {
    id: local.id,
    name: local.name,
    get durability() {
      return durability;
    },
    cpuMs: () => call('cpuMs'),
    // A store server's CPU is read from /proc, the same from here as from the child.
    storeCpuMs: local.storeCpuMs,
    async setup() {
      child = fork(new URL('./reference-child.mjs', import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      const own = messageCalls((message) => child.send(message));
      calls = own;
      child.on('message', own.receive);
      child.on('exit', (code) => {
        own.failAll(new Error(`${local.id}: its process exited (${code})`));
        child = undefined;
        calls = undefined;
      });
      await call('create', local.id, options);
      await call('setup');
      durability = (await call('durability')) ?? durability;
    },
    enqueue: (tasks, downstreamUrl) => call('enqueue', tasks, downstreamUrl),
    startWorkers: (downstreamUrl) => call('startWorkers', downstreamUrl),
    // `settled` (a function) stays here: the references check nothing after they are done, so it is called after.
    async waitRecorded(n, settled) {
      const recorded = await call('waitRecorded', n);
      await settled?.();
      return recorded;
    },
    async teardown() {
      if (child === undefined) return {};
      const done = new Promise((resolve) => child.once('exit', resolve));
      const result = await call('teardown').catch((error) => ({ error: error.message }));
      // Disconnected, the child ends once its handles are closed; one that keeps some open is ended after 5 s.
      const stuck = setTimeout(() => child?.kill(), 5_000);
      child?.disconnect();
      await done;
      clearTimeout(stuck);
      return result;
    },
  };
}
