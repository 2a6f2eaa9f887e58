import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyInstance } from 'fastify';
import { paymentRequestSchema, type PaymentRequest } from '../payment/payment-request.js';
import { chargeBehaviour, DEFAULT_FLAKINESS, type Flakiness } from './flakiness.js';
import type { GatewayLedger, LedgerEntry } from './gateway-ledger.js';

/** Options of {@link buildGatewayServer}. */
export interface GatewayServerOptions {
  ledger: GatewayLedger;
  /** Uniform numbers in [0, 1): one roll per charge request. */
  random: () => number;
  /** Default {@link DEFAULT_FLAKINESS}. */
  flakiness?: Flakiness;
  /** How long a `timeout` request is held before its 504; longer than any client waits. Default 5,000 ms. */
  holdMs?: number;
}

const keyHeaders = {
  type: 'object',
  required: ['idempotency-key'],
  properties: { 'idempotency-key': { type: 'string', minLength: 1, maxLength: 255 } },
} as const;

function answerOf(entry: LedgerEntry): { status: number; body: Record<string, unknown> } {
  if (entry.outcome === 'charged') return { status: 200, body: { chargeId: entry.chargeId, paymentId: entry.paymentId, amountCents: entry.amountCents } };
  return { status: 402, body: { code: entry.declineCode } };
}

/**
 * The mock payment gateway: `POST /charges` (header `Idempotency-Key`) charges at most once per key and answers a
 * duplicate with the original result (`Idempotent-Replayed: true`); `POST /charges/{key}/close` settles a key for
 * good. It is flaky on purpose ({@link chargeBehaviour}): timeouts, 503s, answers lost after the charge, declined
 * cards and an issuer that is down. Invalid input is a 400 naming the field (fastify's schema validation).
 */
export function buildGatewayServer(options: GatewayServerOptions): FastifyInstance {
  const { ledger, random } = options;
  const flakiness = options.flakiness ?? DEFAULT_FLAKINESS;
  const holdMs = options.holdMs ?? 5_000;
  const app = Fastify({ logger: false, forceCloseConnections: true });

  app.post<{ Body: PaymentRequest; Headers: { 'idempotency-key': string } }>(
    '/charges',
    { schema: { body: paymentRequestSchema, headers: keyHeaders } },
    async (request, reply) => {
      const key = request.headers['idempotency-key'];
      const behaviour = chargeBehaviour(request.body.card, random(), flakiness);
      if (behaviour === 'timeout') {
        await sleep(holdMs);
        return reply.code(504).send({ code: 'gateway_timeout' });
      }
      if (behaviour === 'unavailable') return reply.code(503).send({ code: 'unavailable' });
      if (behaviour === 'issuer_down') return reply.code(503).send({ code: 'issuer_unavailable' });
      const result = await ledger.charge(key, request.body, () =>
        behaviour === 'decline' ? { outcome: 'declined', declineCode: 'card_declined' } : { outcome: 'charged', chargeId: `ch_${randomUUID()}` },
      );
      if (result.kind === 'closed') return reply.code(409).send({ code: 'key_closed' });
      if (result.kind === 'mismatch') return reply.code(422).send({ code: 'key_reused', detail: 'the key was used for another payment or amount' });
      if (behaviour === 'lose_response') {
        // The charge is on disk; the caller never hears of it. Only the key tells a retry apart from a new charge.
        reply.hijack();
        request.raw.socket.destroy();
        return reply;
      }
      const answer = answerOf(result.entry);
      if (result.kind === 'replayed') void reply.header('idempotent-replayed', 'true');
      return reply.code(answer.status).send(answer.body);
    },
  );

  app.post<{ Params: { key: string }; Body: { paymentId: string } }>(
    '/charges/:key/close',
    {
      schema: {
        body: { type: 'object', required: ['paymentId'], properties: { paymentId: { type: 'string', minLength: 1, maxLength: 128 } } },
      },
    },
    async (request) => ledger.closeKey(request.params.key, request.body.paymentId),
  );

  return app;
}
