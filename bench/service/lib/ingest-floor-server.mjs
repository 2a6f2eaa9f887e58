// The least an HTTP enqueue of W6's requests does, as a process of its own (ingest-floor.mjs starts it): a bare
// `node:http` server that reads each `POST /retry-tasks/batch`, parses it, gives each task an id (the build's UUID v7)
// and a fingerprint (SHA-256 of its JSON), builds the task the store writes, and inserts the batch through the build's
// store with as many inserts in flight as the service keeps (`concurrentInserts`); it answers the ids. No routing,
// validation, normalisation, canonical form, idempotency look-up before the insert, target check, secrets, limits,
// metrics or logs: a floor no product meets, which every enqueue of the same requests into the same store stands on.
//
//   node bench/service/lib/ingest-floor-server.mjs <store url>      prints {"url":"http://127.0.0.1:<port>"}
//
// The store opens at the service's durability (SQLite synchronous=FULL). The build is packages/server/dist.

import { hash } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { CURRENT_DIST } from './report.mjs';
import { newTaskMaker } from './new-task.mjs';

const dist = (path) => import(join(CURRENT_DIST, path));
const { openStore } = await dist('index.js');
const { TASK_FIELDS } = await dist('domain/task-fields.js');
const { targetKeyOf } = await dist('domain/target-key.js');
const { uuidv7 } = await dist('tasks/uuid-v7.js');

const { store } = await openStore(process.argv[2] ?? '', { synchronous: 'FULL' });
const makeTask = newTaskMaker({ TASK_FIELDS, targetKeyOf, tenantId: 'default' });
const slots = store.concurrentInserts ?? 1;
let busy = 0;
const waiting = [];

/** Runs `insert` when fewer than `slots` inserts are in flight. */
async function inSlot(insert) {
  if (busy < slots) busy++;
  else await new Promise((resume) => waiting.push(resume));
  try {
    return await insert();
  } finally {
    const next = waiting.shift();
    if (next === undefined) busy--;
    else next();
  }
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const now = Date.now();
    const tasks = JSON.parse(Buffer.concat(chunks).toString()).tasks.map((entry) =>
      makeTask({
        taskId: uuidv7(now),
        targetUrl: entry.targetUrl,
        dueAt: entry.notBefore,
        now,
        idempotencyKey: entry.idempotencyKey,
        requestHash: hash('sha256', JSON.stringify(entry), 'hex'),
        method: entry.method,
        headers: entry.headers,
        body: JSON.stringify(entry.body),
        policyId: null,
        policy: entry.policy,
      }),
    );
    inSlot(() => store.insertTasks(tasks)).then(
      (results) => res.end(JSON.stringify(results.map((r) => r.task.taskId))),
      (error) => {
        res.statusCode = 500;
        res.end(String(error));
      },
    );
  });
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}` })));
process.once('SIGTERM', () => server.close(() => store.close().then(() => process.exit(0))));
