import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { RetrydClient, type Attempt, type Task } from '@retryd/client';
import { attemptTimeline } from '../demo/attempt-timeline.js';
import { startFlakyDownstream, type FlakyDownstream } from '../demo/flaky-downstream.js';
import { createLogger } from '../service/logger.js';
import { DEFAULT_CONFIG, parseIntegerOption } from '../service/retryd-config.js';
import type { RunningRetryd } from '../service/start-retryd.js';
import { reportError } from './api-command.js';

/** How the demo task retries: short, growing delays, so the three attempts take about a second. */
const DEMO_POLICY = { maxAttempts: 5, backoffType: 'EXPONENTIAL', initialDelayMs: 300, multiplier: 2, maxDelayMs: 5_000, jitterType: 'EQUAL' } as const;

/** Longest the demo waits for its task to end before it gives up. */
const DEMO_TIMEOUT_MS = 30_000;

interface DemoFlags {
  url?: string;
  apiKey?: string;
  port: number;
  exit?: boolean;
}

/** What the demo runs against: a service of its own (stopped and its store deleted at the end), or one given. */
interface DemoService {
  url: string;
  own: boolean;
  close(): Promise<void>;
}

/**
 * `retryd demo`: a retry to watch, offline. Starts retryd on a throwaway SQLite store (or uses the one `--url` names)
 * and a target on 127.0.0.1 that answers 503 twice per Idempotency-Key and then 200, enqueues one task, follows it to
 * its end and prints its attempts with their times, then the task's page in the console.
 */
export function demoCommand(): Command {
  return new Command('demo')
    .description(
      'See a retry, offline: starts retryd on a throwaway SQLite store and a target on 127.0.0.1 that answers 503 twice per ' +
        'Idempotency-Key then 200, enqueues one task, prints its attempts and the console URL of the task; serves until Ctrl-C',
    )
    .addOption(new Option('--port <port>', 'port of the demo service (0 picks a free one)').default(0).argParser((v) => parseIntegerOption('--port', v, 0, 65535)))
    .addOption(
      new Option('--url <url>', 'use this running service instead of starting one; it must allow targets on this machine (retryd serve --allow-targets 127.0.0.1/32)').conflicts('port'),
    )
    .addOption(new Option('--api-key <key>', 'with --url: an API key (rtd_…) of write scope or wider, once the service has keys').env('RETRYD_API_KEY'))
    .option('--exit', 'stop once the task has ended instead of serving until Ctrl-C')
    .action(async (flags: DemoFlags) => {
      const downstream = await startFlakyDownstream(2);
      let service: DemoService | undefined;
      try {
        service = flags.url === undefined ? await startDemoService(flags.port) : { url: flags.url.replace(/\/+$/, ''), own: false, close: async () => {} };
        const apiKey = flags.url === undefined || flags.apiKey === undefined || flags.apiKey === '' ? undefined : flags.apiKey;
        await runDemo(new RetrydClient({ url: service.url, apiKey }), service, downstream);
      } catch (error) {
        process.exitCode = reportError(error);
      }
      if (service?.own === true && flags.exit !== true && process.exitCode === undefined) {
        console.log('\nretryd keeps serving (the console, the API at /docs); Ctrl-C stops it and deletes its store.');
        await new Promise<void>((resolve) => {
          process.once('SIGINT', resolve);
          process.once('SIGTERM', resolve);
        });
      }
      await service?.close();
      await downstream.close();
    });
}

/** A service of the demo's own: loopback only, targets on this machine allowed, its store in a temporary directory. */
async function startDemoService(port: number): Promise<DemoService> {
  const dir = await mkdtemp(join(tmpdir(), 'retryd-demo-'));
  let running: RunningRetryd;
  try {
    // Loaded when the demo runs, not for `retryd demo --help`.
    const { startRetryd } = await import('../service/start-retryd.js');
    running = await startRetryd(
      { ...DEFAULT_CONFIG, port, host: '127.0.0.1', store: `sqlite:${join(dir, 'retryd.db')}`, allowTargets: ['127.0.0.1/32'], logLevel: 'warn' },
      // Warnings and errors only, on stderr: stdout is the demo's story.
      createLogger('warn', process.stderr),
    );
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  console.log(`retryd      ${running.url}  (a throwaway SQLite store in ${dir})`);
  return {
    url: running.url,
    own: true,
    close: async () => {
      await running.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function runDemo(client: RetrydClient, service: DemoService, downstream: FlakyDownstream): Promise<void> {
  const targetUrl = `${downstream.url}/charges`;
  console.log(`target      ${targetUrl}  (answers 503 twice per Idempotency-Key, then 200)`);
  const idempotencyKey = `demo-${Date.now().toString(36)}`;
  const enqueuedAt = Date.now();
  const { task } = await client.enqueueTask({ targetUrl, method: 'POST', body: { orderId: 1042, amountCents: 1999 }, idempotencyKey, policy: DEMO_POLICY });
  console.log(`enqueued    task ${task.taskId}, Idempotency-Key ${idempotencyKey}\n`);
  const ended: Task = await client.waitForTask(task.taskId, { timeoutMs: DEMO_TIMEOUT_MS });
  const attempts: Attempt[] = (await client.listAttempts(task.taskId, { limit: 100 })).items;
  console.log(attemptTimeline(attempts, enqueuedAt));
  const keys = new Set(downstream.calls.map((c) => c.idempotencyKey));
  const sameKey = keys.size === 1 && keys.has(idempotencyKey);
  console.log(
    `\ntask ${ended.status} after ${attempts.length} attempts in ${((Date.now() - enqueuedAt) / 1_000).toFixed(2)} s; ` +
      (sameKey ? `the target saw Idempotency-Key ${idempotencyKey} on every one.` : `the target saw the keys ${[...keys].join(', ')}.`),
  );
  console.log(`console     ${service.url}/#/tasks/${encodeURIComponent(task.taskId)}`);
  if (ended.status !== 'SUCCEEDED') process.exitCode = 1;
}
