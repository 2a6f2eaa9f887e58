import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { PaymentStatus } from '../payment/payment-status.js';
import { paymentRequestSchema, type PaymentRequest } from '../payment/payment-request.js';
import type { PaymentStore } from './payment-store.js';

/**
 * The payments app's HTTP API:
 * - `POST /payments` journals a payment (its idempotency key generated and committed here) and answers 202; the same
 *   request again answers 200 with where it stands (a client may retry its submit freely), another amount or card
 *   under the same `paymentId` 409;
 * - `GET /payments/{paymentId}`; `GET /payments?status=DEAD` (the app's dead letters, with their reasons);
 * - `GET /payments-summary`: how many payments are in each status.
 *
 * `onAccepted` is told of each new payment (the worker queues its first send). retryd's callbacks have a route of their
 * own (settlement-callbacks.ts).
 */
export function buildPaymentsApp(store: PaymentStore, onAccepted: (paymentId: string) => void): FastifyInstance {
  const app = Fastify({ logger: false, forceCloseConnections: true });

  app.post<{ Body: PaymentRequest }>('/payments', { schema: { body: paymentRequestSchema } }, async (request, reply) => {
    const result = await store.accept(request.body, `pay_${randomUUID()}`, Date.now());
    if (result.kind === 'conflict') return reply.code(409).send({ code: 'payment_conflict', detail: 'paymentId is taken by another amount or card' });
    if (result.kind === 'created') onAccepted(result.payment.paymentId);
    return reply.code(result.kind === 'created' ? 202 : 200).send(result.payment);
  });

  app.get<{ Params: { paymentId: string } }>('/payments/:paymentId', async (request, reply) => {
    const payment = await store.get(request.params.paymentId);
    return payment === undefined ? reply.code(404).send({ code: 'not_found' }) : payment;
  });

  app.get<{ Querystring: { status: PaymentStatus } }>(
    '/payments',
    { schema: { querystring: { type: 'object', required: ['status'], properties: { status: { enum: Object.values(PaymentStatus) } } } } },
    async (request) => ({ payments: await store.withStatus([request.query.status]) }),
  );

  app.get('/payments-summary', async () => store.counts());
  return app;
}
