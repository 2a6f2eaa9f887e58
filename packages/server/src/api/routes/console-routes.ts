import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { RetrydError } from '../../domain/errors.js';
import type { ConsoleHistory } from '../../metrics/history/service-history.js';
import type { ConsoleStats } from '../../metrics/service-metrics.js';
import { PAGE_SECURITY_HEADERS } from '../page-headers.js';

/**
 * Where `npm run build` puts the web console (Vite's output of `packages/server/console/`): `dist/console/` of this
 * package, found the same way from `src/` (tests) and `dist/` (the built service), both three levels below it.
 */
export const CONSOLE_DIR = fileURLToPath(new URL('../../../dist/console/', import.meta.url));

/** Options of {@link registerConsoleRoutes}. */
export interface ConsoleDeps {
  /** The built console. Default {@link CONSOLE_DIR}. */
  dir?: string;
  /** Serves `GET /console/stats` (scope `operator`); absent, that route is not registered. */
  stats?: () => Promise<ConsoleStats>;
  /** Serves `GET /console/history` (scope `operator`); absent, that route is not registered. */
  history?: (targetKey?: string) => Promise<ConsoleHistory>;
}

const CONTENT_TYPES: Partial<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.html': 'text/html; charset=utf-8',
};

/** Reads a file of the built console, or 404 when it is not there (the console was not built, or no such asset). */
async function readConsoleFile(dir: string, name: string): Promise<Buffer> {
  try {
    return await readFile(join(dir, name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const hint = name === 'index.html' ? ': the web console is not built (npm run build builds it)' : '';
    throw new RetrydError('NOT_FOUND', `no console file ${name}${hint}`);
  }
}

const counts = { type: 'object', additionalProperties: { type: 'number' } } as const;
/** The `ConsoleStats` of `ServiceMetrics.stats`, as sent. */
const STATS_SCHEMA = {
  description: 'Totals since start, and tasks by status now',
  type: 'object',
  required: ['at', 'attempts', 'tasks', 'deadLetters', 'scheduleLag', 'inFlight'],
  properties: {
    at: { type: 'integer', description: 'When read (epoch ms)' },
    attempts: { ...counts, description: 'Attempts recorded by outcome, as retry_attempts_total' },
    tasks: { ...counts, description: 'Tasks in each status, as retry_tasks (empty when the store could not count)' },
    deadLetters: { type: 'number', description: 'Tasks that ended FAILED or EXHAUSTED, as retry_dead_letters_total' },
    scheduleLag: {
      type: 'object',
      required: ['count', 'sumSeconds'],
      properties: { count: { type: 'number' }, sumSeconds: { type: 'number' } },
      description: 'retry_schedule_lag_seconds: attempts observed and their summed lag',
    },
    inFlight: { type: 'number', description: "Attempts this instance has in flight, as retry_in_flight" },
  },
} as const;

const series = { type: 'array', items: { type: ['number', 'null'] } } as const;
/** The `ConsoleHistory` of `ServiceHistory.read`, as sent. */
const HISTORY_SCHEMA = {
  description: "This instance's last hour, sampled every intervalMs, oldest first; the last point is the moment of the read",
  type: 'object',
  required: ['intervalMs', 'at', 'attemptsPerSecond', 'targets'],
  properties: {
    intervalMs: { type: 'integer', description: 'Time between samples, in ms' },
    at: { type: 'array', items: { type: 'number' }, description: 'When each point was taken (epoch ms)' },
    attemptsPerSecond: {
      type: 'object',
      additionalProperties: series,
      description: 'Attempts recorded per second, by outcome, over the interval ending at each point',
    },
    targets: {
      type: 'array',
      description: 'The targets of the key asked for (targetKey), each tenant its own; empty without targetKey',
      items: {
        type: 'object',
        required: ['tenantId', 'targetKey', 'breaker', 'allowedRatePerSecond'],
        properties: {
          tenantId: { type: 'string' },
          targetKey: { type: 'string' },
          breaker: {
            type: 'array',
            items: { type: ['string', 'null'], enum: ['CLOSED', 'OPEN', 'HALF_OPEN', null] },
            description: 'Its breaker at each point; null where this instance did not know the target',
          },
          allowedRatePerSecond: { ...series, description: 'The rate it allowed at each point; null where it had no limit or was not known' },
        },
      },
    },
  },
} as const;

/**
 * The web console: its page at `/` and its files at `/console/assets/{file}`, both public (the page asks for an API
 * key and sends it with each API call it makes), read from disk on request so that the service loads nothing for
 * the console until someone opens it; and `GET /console/stats`, the numbers of its overview. Every other path keeps
 * answering the API's problem+json 404.
 */
export function registerConsoleRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const dir = deps.dir ?? CONSOLE_DIR;
  app.get('/', { schema: { hide: true }, config: { scope: 'public' } }, async (_request, reply) => {
    const page = await readConsoleFile(dir, 'index.html');
    return reply
      .type(CONTENT_TYPES['.html']!)
      .header('cache-control', 'no-cache')
      .headers(PAGE_SECURITY_HEADERS)
      .send(page);
  });
  app.get<{ Params: { file: string } }>(
    '/console/assets/:file',
    {
      schema: {
        hide: true,
        // Vite's hashed file names: one path segment, never `..` nor a dotfile.
        params: { type: 'object', properties: { file: { type: 'string', pattern: '^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}$' } } },
      },
      config: { scope: 'public' },
    },
    async (request, reply) => {
      const type = CONTENT_TYPES[extname(request.params.file)];
      if (type === undefined) throw new RetrydError('NOT_FOUND', `no console file ${request.params.file}`);
      const body = await readConsoleFile(join(dir, 'assets'), request.params.file);
      // The names carry a hash of their content: a new build is new names.
      return reply.type(type).header('cache-control', 'public, max-age=31536000, immutable').header('x-content-type-options', 'nosniff').send(body);
    },
  );
  const stats = deps.stats;
  if (stats !== undefined) {
    app.get(
      '/console/stats',
      {
        schema: {
          operationId: 'getConsoleStats',
          summary: "The web console's overview numbers: the /metrics counters as JSON",
          description:
            'Totals since the service started (attempts by outcome, dead letters, schedule lag count and sum) and the ' +
            'tasks in each status now, every tenant: it needs an admin key of the default tenant, as /metrics does.',
          tags: ['console'],
          response: { 200: STATS_SCHEMA },
        },
        config: { scope: 'operator' },
      },
      async () => stats(),
    );
  }
  const history = deps.history;
  if (history !== undefined) {
    app.get<{ Querystring: { targetKey?: string } }>(
      '/console/history',
      {
        schema: {
          operationId: 'getConsoleHistory',
          summary: "The web console's charts: this instance's last hour of attempts, breakers and allowed rates",
          description:
            'Kept in memory by each instance (another instance of the same deployment keeps its own; a restart starts ' +
            "it again): every 10 s the attempts per second by outcome and each known target's breaker and allowed " +
            'rate, for an hour. Every tenant: it needs an admin key of the default tenant, as /metrics does.',
          tags: ['console'],
          querystring: {
            type: 'object',
            properties: { targetKey: { type: 'string', minLength: 1, maxLength: 2048, description: "A target's key (its origin): its series are in `targets`" } },
            additionalProperties: false,
          },
          response: { 200: HISTORY_SCHEMA },
        },
        config: { scope: 'operator' },
      },
      async (request) => history(request.query.targetKey),
    );
  }
}
