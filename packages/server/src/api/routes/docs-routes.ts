import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { DOCS_SECURITY_HEADERS } from '../page-headers.js';

/**
 * The readable API docs at `/docs` (Swagger UI, reading the document `@fastify/swagger` builds), with the console's
 * security headers on every answer, its page and its files alike (the policy allowing the one inline style of
 * Swagger UI's logo: `DOCS_CONTENT_SECURITY_POLICY`). Registered in a scope of their own so that the headers reach
 * only the docs' answers.
 */
export async function registerDocsRoutes(app: FastifyInstance): Promise<void> {
  await app.register(async (docs) => {
    docs.addHook('onSend', async (_request, reply) => {
      reply.headers(DOCS_SECURITY_HEADERS);
    });
    await docs.register(fastifySwaggerUi, { routePrefix: '/docs' });
  });
}
