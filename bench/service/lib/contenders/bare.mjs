// The ceiling of W1 on this machine: the same requests with no scheduler, no queue and no store at all.

import { Agent, request } from 'undici';
import { ownCpuMs } from './call-downstream.mjs';

/**
 * A reference, not a peer: 200 loops in the bench process, each taking the next task and POSTing it again at once
 * until it gets its 200 (undici `request`, keep-alive, one pool of 200 connections). What W1 costs the machine
 * before any scheduling, durability or bookkeeping: a contender's attempts/s ÷ this one is the share of the
 * machine's ceiling it reaches.
 */
export function bareContender() {
  let tasks = [];
  let agent;
  let loops;
  let finishedAt = 0;
  return {
    id: 'bare',
    name: 'reference: bare undici loop (no scheduler)',
    durability: 'none: nothing is stored (the ceiling of this machine, not a peer)',
    cpuMs: async () => ownCpuMs(),
    async setup() {
      agent = new Agent({ connections: 200 });
    },
    async enqueue(list) {
      tasks = list;
      return { ms: 0, note: 'nothing to enqueue' };
    },
    async startWorkers(downstreamUrl) {
      const target = `${downstreamUrl}/w1`;
      let next = 0;
      const loop = async () => {
        while (next < tasks.length) {
          const task = tasks[next++];
          for (;;) {
            const headers = { 'content-type': 'application/json', 'idempotency-key': task.key };
            const res = await request(target, { method: 'POST', dispatcher: agent, headers, body: task.body });
            await res.body.text();
            if (res.statusCode >= 200 && res.statusCode < 300) break;
          }
        }
      };
      loops = Promise.all(Array.from({ length: 200 }, loop)).then(() => {
        finishedAt = Date.now();
      });
    },
    async waitRecorded(n) {
      await loops;
      return { at: finishedAt, recorded: n, ok: true, detail: 'nothing to record' };
    },
    async teardown() {
      await agent?.close();
      return {};
    },
  };
}
