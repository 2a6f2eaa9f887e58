import type { FastifyInstance } from 'fastify';
import { problemOf } from '../../domain/errors.js';
import type { Store } from '../../store/store.js';
import { sendProblem } from '../problem-handler.js';
import { problemResponses } from '../schemas.js';

/** Options of {@link registerHealthRoutes}. */
export interface HealthDeps {
  store: Pick<Store, 'kind' | 'ping'>;
  /** A ping slower than this counts as a failure. */
  readyTimeoutMs: number;
}

const statusBody = (description: string) => ({
  description,
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string' }, store: { type: 'string', description: 'The store kind (on /readyz).' } },
});

/** Pings the store, failing after `timeoutMs` (a hung connection must not hang the probe). */
async function pingWithin(store: HealthDeps['store'], timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([store.ping(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** `/healthz` (the process answers) and `/readyz` (the store answers too). */
export function registerHealthRoutes(app: FastifyInstance, { store, readyTimeoutMs }: HealthDeps): void {
  app.get(
    '/healthz',
    { schema: { operationId: 'getHealth', security: [], summary: 'Liveness: the process answers', tags: ['health'], response: { 200: statusBody('Alive'), ...problemResponses(400) } }, config: { scope: 'public' } },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'getReadiness',
        security: [],
        summary: 'Readiness: the store answers a ping',
        tags: ['health'],
        response: { 200: statusBody('Ready'), ...problemResponses(400, 503) },
      },
      config: { scope: 'public' },
    },
    async (request, reply) => {
      try {
        await pingWithin(store, readyTimeoutMs);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        request.log.warn({ err: error }, 'readiness check failed');
        return sendProblem(
          reply,
          problemOf('STORE_UNAVAILABLE', `the ${store.kind} store did not answer a ping: ${message}`, undefined, request.url),
        );
      }
      return { status: 'ready', store: store.kind };
    },
  );
}
