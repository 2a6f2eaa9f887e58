import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild, stopChild, type RunningChild } from '../src/demo/child-process.js';
import { startOwnPostgres, type OwnPostgres } from '../src/demo/own-postgres.js';
import { RETRYD_MAIN, retrydArgs } from '../src/demo/run-demo.js';
import { CALLBACK_SECRET_NAME, newSigningSecret } from '../src/payments-app/retryd-setup.js';

// What the example's integration tests run against: a PostgreSQL of their own (as the demo's) and the built retryd
// service on it, its schema `retryd` beside the app's, with the callbacks' signing secret in its secrets file.

/** A PostgreSQL and a retryd service on it. */
export interface World {
  postgres: OwnPostgres;
  service: RunningChild;
  /** The secret retryd signs the callbacks with (`whsec_…`). */
  callbackSecret: string;
  close(): Promise<void>;
}

/** Starts a {@link World}. */
export async function startWorld(): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), 'retryd-payments-test-'));
  const callbackSecret = newSigningSecret();
  const secretsFile = join(dir, 'secrets.json');
  writeFileSync(secretsFile, JSON.stringify({ [CALLBACK_SECRET_NAME]: callbackSecret }), { mode: 0o600 });
  const postgres = await startOwnPostgres();
  try {
    const service = await startChild(RETRYD_MAIN, retrydArgs(postgres.url, 0, secretsFile), {});
    return {
      postgres,
      service,
      callbackSecret,
      async close() {
        await stopChild(service, 'SIGTERM');
        await postgres.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await postgres.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** The headers retryd signs a request with (Standard Webhooks: HMAC-SHA256 of `id.timestamp.body`), for `body`. */
export function signedHeaders(secret: string, id: string, body: string): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${mac}` };
}

/** `GET` on the retryd service: its answer's status and JSON body. */
export async function retrydGet(service: RunningChild, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${service.url}${path}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
