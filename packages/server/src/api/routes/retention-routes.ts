import type { FastifyInstance } from 'fastify';
import { POLICY_ID_SCHEMA } from '../../policies/policy-id.js';
import { MAX_RETENTION_MS, MIN_RETENTION_MS, RETENTION_FIELDS } from '../../retention/retention-periods.js';
import { documentBody, problemResponses } from '../schemas.js';
import { json, type RouteDeps } from './task-routes.js';

const period = (what: string) => ({
  type: 'integer',
  minimum: MIN_RETENTION_MS,
  maximum: MAX_RETENTION_MS,
  description: `How long a ${what} task is kept once it ended, in ms (a minute to ten years).`,
});
const periods = {
  succeededMs: period('SUCCEEDED'),
  deadLettersMs: period('FAILED or EXHAUSTED (a dead letter, replayable until then)'),
  cancelledMs: period('CANCELLED'),
};

/** The JSON schemas of the retention routes, named as components of `/openapi.json`. */
export const RETENTION_SCHEMAS = [
  {
    $id: 'Retention',
    description:
      'How long finished tasks are kept: then each is deleted with its attempts and its idempotency key (the same key ' +
      'enqueued later makes a new task). The periods in force, what this level sets itself (own), and where each ' +
      'period comes from: the service (retryd serve --retention-*), the tenant (retryd tenants retention) or the policy. ' +
      'A change applies to tasks that end from then on.',
    type: 'object',
    required: [...RETENTION_FIELDS, 'own', 'from'],
    properties: {
      ...periods,
      own: { type: 'object', additionalProperties: false, properties: periods },
      from: {
        type: 'object',
        required: [...RETENTION_FIELDS],
        properties: Object.fromEntries(RETENTION_FIELDS.map((f) => [f, { type: 'string', enum: ['service', 'tenant', 'policy'] }])),
      },
    },
  },
  {
    $id: 'RetentionRequest',
    description: "A policy's own periods: each one given replaces the tenant's (or the service's) for its tasks; {} removes them all.",
    type: 'object',
    additionalProperties: false,
    properties: periods,
  },
] as const;

interface PolicyParams {
  policyId: string;
}
const policyParams = { type: 'object', required: ['policyId'], properties: { policyId: POLICY_ID_SCHEMA } } as const;

/** Retention: the tenant's, and a registered policy's (read, and set for a policy). */
export function registerRetentionRoutes(app: FastifyInstance, { taskService, tenantOf }: RouteDeps): void {
  app.get(
    '/retention',
    {
      schema: {
        operationId: 'getRetention',
        summary: "How long the tenant's finished tasks are kept",
        tags: ['retention'],
        response: { 200: json("The tenant's retention", 'Retention'), ...problemResponses(503) },
      },
    },
    async (request) => taskService.retention.tenant(tenantOf(request)),
  );

  app.get<{ Params: PolicyParams }>(
    '/retry-policies/:policyId/retention',
    {
      schema: {
        operationId: 'getPolicyRetention',
        summary: "How long a registered policy's finished tasks are kept",
        tags: ['retention', 'policies'],
        params: policyParams,
        response: { 200: json("The policy's retention", 'Retention'), ...problemResponses(404, 503) },
      },
    },
    async (request) => taskService.retention.policy(tenantOf(request), request.params.policyId),
  );

  app.put<{ Params: PolicyParams }>(
    '/retry-policies/:policyId/retention',
    {
      schema: {
        operationId: 'setPolicyRetention',
        summary: "Set a registered policy's own retention",
        description:
          "Replaces the policy's own periods (each one left out is inherited from the tenant, or the service). Tasks that " +
          'end from then on are kept that long; a task already ended keeps its expiresAt.',
        tags: ['retention', 'policies'],
        params: policyParams,
        response: { 200: json("The policy's retention", 'Retention'), ...problemResponses(400, 404, 413, 415, 503) },
      },
      config: documentBody('RetentionRequest'),
    },
    async (request) => taskService.retention.setPolicy(tenantOf(request), request.params.policyId, request.body),
  );
}
