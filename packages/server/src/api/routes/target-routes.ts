import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RetrydError } from '../../domain/errors.js';
import { targetKeyOf } from '../../domain/target-key.js';
import type { BreakerAction, TargetControl, TargetStatus } from '../../protection/target-control.js';
import type { PageRequest, TargetRef } from '../../store/store.js';
import { documentBody, pageQuery, problemResponses } from '../schemas.js';
import { TARGET_KEY_MAX_LENGTH } from '../target-schemas.js';
import { toTargetView } from '../views.js';
import { DEFAULT_MAX_PAGE_BYTES, sendBoundedPage } from '../bounded-page.js';
import { json, pageOf } from './task-routes.js';
import { callStore } from '../../tasks/store-failure.js';

/** What the target routes need. */
export interface TargetRouteDeps {
  targetControl: TargetControl;
  /** The tenant a request acts for. */
  tenantOf: (request: FastifyRequest) => string;
  /** Most bytes of one page of the listing. Default `DEFAULT_MAX_PAGE_BYTES` (4 MiB). */
  maxPageBytes?: number | undefined;
  /** The store's kind (`sqlite`, `postgres`, `redis`), named in the 503 of a listing the store could not read. */
  storeKind: string;
}

interface TargetParams {
  targetKey: string;
}

const targetParams = {
  type: 'object',
  required: ['targetKey'],
  properties: {
    targetKey: {
      type: 'string',
      minLength: 1,
      maxLength: TARGET_KEY_MAX_LENGTH,
      description: 'The target: an origin, URL-encoded as one path segment (https%3A%2F%2Fapi.example.com%3A8443).',
    },
  },
} as const;

const TARGET_KEY_RULE =
  'an http or https origin (scheme://host[:port], host in lower case, no default port, no path, query or trailing slash), ' +
  'or a grpc or grpcs one (scheme://host:port), ' +
  'URL-encoded as one path segment';

/**
 * The target a path names, for the tenant of the request: the `targetKey` must be exactly an origin, as tasks record
 * it (`targetKeyOf(x) === x`), or the request is refused naming `targetKey` and the rule. A near miss says what its
 * origin is: `https://API.example.com/` is not a key, `https://api.example.com` is.
 */
export function targetRefOf(tenantId: string, targetKey: string): TargetRef {
  let origin: string | undefined;
  try {
    origin = targetKeyOf(targetKey);
  } catch {
    // Not an absolute URL at all: no origin to suggest.
  }
  const isHttp = origin !== undefined && /^(?:https?|grpcs?):\/\//.test(origin);
  if (origin !== targetKey || !isHttp) {
    const hint = isHttp && origin !== undefined ? ` (its origin is ${origin})` : '';
    throw RetrydError.validation([{ field: 'targetKey', rule: TARGET_KEY_RULE, message: `targetKey must be ${TARGET_KEY_RULE}${hint}` }]);
  }
  return { tenantId, targetKey };
}

/**
 * Per-target protection, for operators: list the tenant's targets with their breaker, limits, allowed rate, calls in
 * flight and held tasks; read one; change its settings (a partial object, validated by `TargetControl.putSettings`:
 * one validator, the same rules as the CLI's); open, close or reset its breaker by hand; end its holds.
 */
export function registerTargetRoutes(app: FastifyInstance, { targetControl, tenantOf, maxPageBytes = DEFAULT_MAX_PAGE_BYTES, storeKind }: TargetRouteDeps): void {
  app.get<{ Querystring: { cursor?: string; limit: number } }>(
    '/targets',
    {
      schema: {
        operationId: 'listTargets',
        summary: 'List targets with their breaker, limits, allowed rate, calls in flight and waiting tasks',
        description: 'Every target the tenant\'s tasks named, held or configured, in targetKey order (byte order).',
        tags: ['targets'],
        querystring: { type: 'object', additionalProperties: false, properties: pageQuery },
        response: { 200: json('A page of targets', 'TargetPage'), ...problemResponses(400, 503) },
      },
    },
    async (request, reply) => {
      const tenantId = tenantOf(request);
      const listing = {
        // A cursor the listing did not make is the caller's 400 (naming `cursor`), an unreachable store a 503.
        read: (page: PageRequest) => callStore(storeKind, 'list targets', () => targetControl.listTargets(tenantId, page)),
        serialize: (target: TargetStatus) => JSON.stringify(toTargetView(target)),
      };
      return sendBoundedPage(reply, listing, pageOf(request.query), maxPageBytes);
    },
  );

  app.get<{ Params: TargetParams }>(
    '/targets/:targetKey',
    {
      schema: {
        operationId: 'getTarget',
        summary: 'Read a target',
        description: '404 for a target the tenant never named, held or configured.',
        tags: ['targets'],
        params: targetParams,
        response: { 200: json('The target', 'Target'), ...problemResponses(400, 404, 503) },
      },
    },
    async (request) => {
      const ref = targetRefOf(tenantOf(request), request.params.targetKey);
      const status = await targetControl.getTarget(ref);
      if (status === undefined) throw new RetrydError('NOT_FOUND', `no target ${ref.targetKey}`);
      return toTargetView(status);
    },
  );

  app.put<{ Params: TargetParams }>(
    '/targets/:targetKey',
    {
      schema: {
        operationId: 'putTargetSettings',
        summary: "Change a target's protection settings",
        description:
          'A partial settings object: the fields given replace the current ones (the service defaults until the target ' +
          'has its own), the rest keep their value. Limits reach the claims of every instance at once. A target not seen ' +
          'before gets its settings (200 as well).',
        tags: ['targets'],
        params: targetParams,
        response: { 200: json('The target with its new settings', 'Target'), ...problemResponses(400, 413, 415, 503) },
      },
      config: { ...documentBody('TargetSettingsPatch'), scope: 'admin' },
    },
    async (request) => {
      const ref = targetRefOf(tenantOf(request), request.params.targetKey);
      return toTargetView(await targetControl.putSettings(ref, request.body));
    },
  );

  app.post<{ Params: TargetParams; Body: { action: BreakerAction; durationMs?: number } }>(
    '/targets/:targetKey/breaker',
    {
      schema: {
        operationId: 'setTargetBreaker',
        summary: "Open, close or reset a target's circuit breaker by hand",
        description:
          'open: holds the target for durationMs (by default its maxOpenDurationMs; at most 7 days), then probes, as ' +
          'after any opening; close: closed at once, every hold of the target ended (a Retry-After hold too), ' +
          'its held tasks due again; reset: as close, and its failure counts and re-open backoff cleared.',
        tags: ['targets'],
        params: targetParams,
        body: { $ref: 'BreakerRequest#' },
        response: { 200: json('The target with its breaker changed', 'Target'), ...problemResponses(400, 413, 415, 503) },
      },
      config: { scope: 'admin' },
    },
    async (request) => {
      const ref = targetRefOf(tenantOf(request), request.params.targetKey);
      return toTargetView(await targetControl.breaker(ref, request.body.action, request.body.durationMs));
    },
  );

  app.post<{ Params: TargetParams }>(
    '/targets/:targetKey/release',
    {
      schema: {
        operationId: 'releaseTarget',
        summary: "End a target's holds now",
        description:
          "Ends the target's holds at once, on every instance's claims: a Retry-After hold (whichever instance made it) " +
          "and any other, except an open breaker's, which holds it until its open period ends (its breaker's close ends " +
          'that too). Its held tasks are due again. A target not held is left as it is.',
        tags: ['targets'],
        params: targetParams,
        response: { 200: json('The target with its holds ended', 'Target'), ...problemResponses(400, 503) },
      },
      config: { scope: 'admin' },
    },
    async (request) => {
      const ref = targetRefOf(tenantOf(request), request.params.targetKey);
      return toTargetView(await targetControl.release(ref));
    },
  );
}
