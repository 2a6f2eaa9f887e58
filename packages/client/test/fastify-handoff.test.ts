import Fastify from 'fastify';
import { describe } from 'vitest';
import { retrydFastify } from '../src/fastify/index.js';
import { CHECKOUT_HEADERS, handoffScenario } from './handoff-scenario.js';

describe('@retryd/client/fastify with Fastify 5', () => {
  handoffScenario(async (options, downstream) => {
    const app = Fastify();
    retrydFastify(app, options);
    app.post<{ Querystring: { path: string } }>('/checkout', async (request, reply) => {
      const answer = await request.retryd.fetch(`${downstream}${request.query.path}`, {
        method: 'POST',
        headers: CHECKOUT_HEADERS,
        body: JSON.stringify(request.body),
      });
      return reply.code(answer.status).send(await answer.json());
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, close: () => app.close() };
  });
});
