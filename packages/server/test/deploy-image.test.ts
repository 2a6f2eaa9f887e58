import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it, type TestContext } from 'vitest';
import { generateApiKey } from '../src/access/api-key-token.js';
import { IdempotentDownstream } from './service-harness.js';
import { waitFor } from './wait-for.js';
import { POSTGRES_STORE, REDIS_STORE, type SharedStore } from './shared-stores.js';

// The container image of deploy/Dockerfile, built as an operator builds it (deploy/build-image.sh) and run as one runs
// it: the first key from the environment, a loopback downstream on the host's network, `docker stop` at the end.
// Without a Docker daemon the test is skipped and says why (.ci/run installs and starts one).

const run = promisify(execFile);
const REPO = join(import.meta.dirname, '..', '..', '..');
const TAG = 'retryd:test';

/** Why Docker cannot be used here, or undefined when `docker info` answers. */
async function dockerUnavailable(): Promise<string | undefined> {
  try {
    await run('docker', ['info', '--format', '{{.ServerVersion}}'], { timeout: 20_000 });
    return undefined;
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stderr?: string };
    if (failure.code === 'ENOENT') return 'the docker command is not installed';
    return `docker info failed: ${(failure.stderr ?? failure.message).trim().split('\n')[0]}`;
  }
}
const unavailable = await dockerUnavailable();

/** A port free on the host now; retryd's --port 0 would not do, as the health check asks RETRYD_PORT. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no address');
  return address.port;
}

const inspect = async (container: string, format: string) => (await run('docker', ['inspect', '-f', format, container])).stdout.trim();

/** Skips the test, saying why, when Docker cannot be used here. */
function skipWithoutDocker(ctx: TestContext): void {
  if (unavailable === undefined) return;
  const reason = `Docker is not available (${unavailable}); .ci/run installs and starts it`;
  console.warn(`skipped: ${reason}`);
  ctx.skip(reason);
}

let building: Promise<void> | undefined;
/** Builds the image once per run: the base images (when no registry answers), the dependencies and the build. */
function buildImage(): Promise<void> {
  building ??= run(join(REPO, 'deploy', 'build-image.sh'), [TAG], { cwd: REPO, timeout: 40 * 60_000, maxBuffer: 64 << 20 }).then((build) => {
    console.log(build.stdout.trim().split('\n').filter((line) => /^(build|base)-image:/.test(line)).join('\n'));
  });
  return building;
}

describe('the container image (deploy/Dockerfile)', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });
  afterAll(async () => {
    await POSTGRES_STORE.drop();
    await REDIS_STORE.drop();
  });

  /**
   * Runs the image on the host's network with a first key from the environment (and `store`, else its SQLite volume),
   * waits for its health check to pass, has it retry a task to a loopback downstream until it succeeds, then stops it
   * with `docker stop` and expects exit code 0; `beforeStop` checks more on the running service's URL.
   */
  async function exercise(store: string | undefined, beforeStop: (url: string) => Promise<void> = async () => {}): Promise<void> {
    await buildImage();
    const downstream = new IdempotentDownstream(1);
    const target = await downstream.start();
    cleanup.push(() => downstream.close());

    const key = generateApiKey();
    const port = await freePort();
    const name = `retryd-test-${randomBytes(4).toString('hex')}`;
    await run('docker', [
      'run', '--detach', '--name', name, '--network', 'host',
      // The image checks /healthz every 15 s; each second here, so that `healthy` comes soon after the start.
      '--health-interval', '1s',
      '--env', `RETRYD_PORT=${port}`,
      '--env', `RETRYD_BOOTSTRAP_ADMIN_KEY=${key.token}`,
      ...(store === undefined ? [] : ['--env', `RETRYD_STORE=${store}`]),
      TAG, '--allow-targets', '127.0.0.1/32',
    ]);
    cleanup.push(() => run('docker', ['rm', '--force', '--volumes', name]));
    const logs = async () => (await run('docker', ['logs', name])).stdout;

    // HEALTHCHECK passes only once /healthz answers 200 in the container.
    await waitFor('the container to be healthy', async () => {
      const health = await inspect(name, '{{.State.Status}} {{.State.Health.Status}}');
      if (health.startsWith('exited')) throw new Error(`the container stopped: ${await logs()}`);
      return health === 'running healthy';
    }, 180_000);
    const url = `http://127.0.0.1:${port}`;
    expect(await logs()).toContain(`"event":"bootstrap_admin_key","outcome":"created","keyId":"${key.keyId}"`);

    // The first key closes the keyless service; with it, a task to the loopback downstream is taken and retried.
    expect((await fetch(`${url}/retry-tasks`)).status).toBe(401);
    const authorization = `Bearer ${key.token}`;
    const created = await fetch(`${url}/retry-tasks`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ targetUrl: `${target}/charge`, method: 'POST', body: '{"amount":1}', idempotencyKey: 'deploy-image-1' }),
    });
    expect(created.status).toBe(201);
    const { taskId } = (await created.json()) as { taskId: string };
    let task: { status?: string; attemptNumber?: number } = {};
    await waitFor('the task to end', async () => {
      task = (await (await fetch(`${url}/retry-tasks/${taskId}?waitMs=5000`, { headers: { authorization } })).json()) as typeof task;
      return task.status !== 'PENDING' && task.status !== 'IN_FLIGHT';
    }, 60_000);
    expect(task).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 2 });
    expect(downstream.requests.get('deploy-image-1')).toBe(2);
    await beforeStop(url);

    // docker stop sends SIGTERM and kills after 60 s: exit code 0 (not 137) says retryd stopped on its own.
    await run('docker', ['stop', '--time', '60', name], { timeout: 90_000 });
    expect(await inspect(name, '{{.State.ExitCode}} {{.State.OOMKilled}}')).toBe('0 false');
    expect(await logs()).toContain('"event":"stop"');
  }

  it('builds; on its SQLite volume, serves the console and a task to a loopback downstream, and exits 0 at SIGTERM', async (ctx) => {
    skipWithoutDocker(ctx);
    await buildImage();
    const config = JSON.parse((await run('docker', ['image', 'inspect', '-f', '{{json .Config}}', TAG])).stdout) as {
      User: string;
      Entrypoint: string[];
      ExposedPorts: Record<string, unknown>;
      Volumes: Record<string, unknown>;
      Healthcheck: { Test: string[] };
    };
    expect(config).toMatchObject({ User: '10001:10001', Entrypoint: ['retryd', 'serve'], ExposedPorts: { '8080/tcp': {} }, Volumes: { '/var/lib/retryd': {} } });
    expect(config.Healthcheck.Test.join(' ')).toContain('/healthz');
    await exercise(undefined, async (url) => {
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('/console/assets/');
    });
  }, 45 * 60_000);

  // The stores of deploy/compose.yaml, here the shared test servers on the host's network.
  it.for([POSTGRES_STORE, REDIS_STORE])('runs a task on $name and exits 0 at SIGTERM', { timeout: 45 * 60_000 }, async (shared: SharedStore, ctx) => {
    skipWithoutDocker(ctx);
    await exercise(shared.freshUrl());
  });
});
