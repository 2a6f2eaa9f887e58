import type { FastifyInstance } from 'fastify';
import { POLICY_ID_SCHEMA } from '../../policies/policy-id.js';
import type { StoredPolicy } from '../../domain/task.js';
import type { PageRequest } from '../../store/store.js';
import { documentBody, pageQuery, problemResponses } from '../schemas.js';
import { toPolicyView } from '../views.js';
import { DEFAULT_MAX_PAGE_BYTES, sendBoundedPage } from '../bounded-page.js';
import { json, LOCATION_HEADER, pageOf, type RouteDeps } from './task-routes.js';

interface PolicyParams {
  policyId: string;
}

const policyParams = {
  type: 'object',
  required: ['policyId'],
  properties: { policyId: POLICY_ID_SCHEMA },
} as const;

/** Named retry policies: register (idempotent by id), replace, list, read. */
export function registerPolicyRoutes(app: FastifyInstance, { taskService, tenantOf, maxPageBytes = DEFAULT_MAX_PAGE_BYTES }: RouteDeps): void {
  app.post(
    '/retry-policies',
    {
      schema: {
        operationId: 'createPolicy',
        summary: 'Register a named policy',
        description: 'Idempotent by policyId: the same definition again answers 200; a different one, 409.',
        tags: ['policies'],
        response: {
          201: json('Registered', 'NamedPolicy', LOCATION_HEADER),
          200: json('The same definition was already registered', 'NamedPolicy'),
          ...problemResponses(400, 409, 413, 415, 503),
        },
      },
      config: documentBody('PolicyRequest'),
    },
    async (request, reply) => {
      const result = await taskService.createPolicy(tenantOf(request), request.body);
      if (result.kind === 'created') reply.code(201).header('location', `/retry-policies/${result.policy.policyId}`);
      return toPolicyView(result.policy);
    },
  );

  app.put<{ Params: PolicyParams }>(
    '/retry-policies/:policyId',
    {
      schema: {
        operationId: 'replacePolicy',
        summary: 'Change a registered policy for future scheduling decisions',
        description: 'Only an existing policy (404 otherwise; register one with POST). The body may leave policyId out.',
        tags: ['policies'],
        params: policyParams,
        response: { 200: json('Replaced', 'NamedPolicy'), ...problemResponses(400, 404, 413, 415, 503) },
      },
      config: documentBody('PolicyReplaceRequest'),
    },
    async (request) => toPolicyView(await taskService.replacePolicy(tenantOf(request), request.params.policyId, request.body)),
  );

  app.get<{ Querystring: { cursor?: string; limit: number } }>(
    '/retry-policies',
    {
      schema: {
        operationId: 'listPolicies',
        summary: 'List registered policies',
        tags: ['policies'],
        querystring: { type: 'object', additionalProperties: false, properties: pageQuery },
        response: { 200: json('A page of policies', 'PolicyPage'), ...problemResponses(400, 503) },
      },
    },
    async (request, reply) => {
      const tenantId = tenantOf(request);
      const listing = { read: (page: PageRequest) => taskService.listPolicies(tenantId, page), serialize: (policy: StoredPolicy) => JSON.stringify(toPolicyView(policy)) };
      return sendBoundedPage(reply, listing, pageOf(request.query), maxPageBytes);
    },
  );

  app.get<{ Params: PolicyParams }>(
    '/retry-policies/:policyId',
    {
      schema: {
        operationId: 'getPolicy',
        summary: 'Read a registered policy',
        tags: ['policies'],
        params: policyParams,
        response: { 200: json('The policy', 'NamedPolicy'), ...problemResponses(404, 503) },
      },
    },
    async (request) => toPolicyView(await taskService.getPolicy(tenantOf(request), request.params.policyId)),
  );
}
