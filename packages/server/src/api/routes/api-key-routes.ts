import type { FastifyInstance, FastifyRequest } from 'fastify';
import { API_KEY_SCOPES, API_KEY_SCOPES_MEANING, MAX_KEY_NAME_LENGTH, parseNewApiKey, type ApiKeys } from '../../access/api-keys.js';
import type { Authenticator } from '../../access/authenticator.js';
import type { ApiKeyRecord, PageRequest } from '../../store/store.js';
import { documentBody, NEXT_CURSOR, pageQuery, problemResponses } from '../schemas.js';
import { json, LOCATION_HEADER, pageOf } from './task-routes.js';
import { DEFAULT_MAX_PAGE_BYTES, sendBoundedPage } from '../bounded-page.js';

/** What the API key routes need. */
export interface ApiKeyRouteDeps {
  apiKeys: ApiKeys;
  authenticator: Authenticator;
  tenantOf: (request: FastifyRequest) => string;
  /** Most bytes of one page of the listing. Default `DEFAULT_MAX_PAGE_BYTES` (4 MiB). */
  maxPageBytes?: number | undefined;
}

/** The API view of a key: never its secret part, nor the hash of it. */
export interface ApiKeyView {
  keyId: string;
  tenantId: string;
  scope: string;
  name: string;
  createdAt: number;
  revokedAt: number | null;
}

export function toApiKeyView(record: ApiKeyRecord): ApiKeyView {
  const { keyId, tenantId, scope, name, createdAt, revokedAt } = record;
  return { keyId, tenantId, scope, name, createdAt, revokedAt };
}

const keyProperties = {
  keyId: { type: 'string', description: 'The public part of the key (rtd_<keyId>_…): its id in lists and logs.' },
  tenantId: { type: 'string' },
  scope: { type: 'string', enum: [...API_KEY_SCOPES] },
  name: { type: 'string' },
  createdAt: { type: 'integer' },
  revokedAt: { type: ['integer', 'null'], description: 'When it was revoked; null while it is active.' },
};

const KEY_FIELDS = Object.keys(keyProperties);

/** Shared schemas of the key routes. */
export const API_KEY_SCHEMAS = [
  {
    $id: 'ApiKeyRequest',
    type: 'object',
    additionalProperties: false,
    required: ['name', 'scope'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: MAX_KEY_NAME_LENGTH, description: 'What the key is for.' },
      scope: { type: 'string', enum: [...API_KEY_SCOPES], description: `${API_KEY_SCOPES_MEANING}.` },
    },
  },
  { $id: 'ApiKey', type: 'object', required: KEY_FIELDS, properties: keyProperties },
  {
    $id: 'CreatedApiKey',
    type: 'object',
    required: [...KEY_FIELDS, 'key'],
    properties: { ...keyProperties, key: { type: 'string', description: 'The key itself (rtd_…): shown in this answer only, never again.' } },
  },
  {
    $id: 'ApiKeyPage',
    type: 'object',
    required: ['items'],
    properties: { items: { type: 'array', items: { $ref: 'ApiKey#' } }, nextCursor: NEXT_CURSOR },
  },
];

/**
 * `/api-keys`, for a tenant's admins: create a key for the same tenant (the answer is the only time the key is
 * shown), list them, revoke one (at once on this instance, within seconds on the others). Keys for other tenants
 * are made with `retryd keys create`.
 */
export function registerApiKeyRoutes(app: FastifyInstance, { apiKeys, authenticator, tenantOf, maxPageBytes = DEFAULT_MAX_PAGE_BYTES }: ApiKeyRouteDeps): void {
  app.post(
    '/api-keys',
    {
      schema: {
        operationId: 'createApiKey',
        summary: 'Create an API key for this tenant',
        description: 'The answer holds the key itself (`key`); it is stored only as a hash and can never be shown again.',
        tags: ['api keys'],
        response: { 201: json('Created: the key is in `key`, shown this once', 'CreatedApiKey', LOCATION_HEADER), ...problemResponses(400, 401, 403, 413, 415, 503) },
      },
      config: { ...documentBody('ApiKeyRequest'), scope: 'admin' },
    },
    async (request, reply) => {
      const created = await apiKeys.create(parseNewApiKey(request.body, tenantOf(request)));
      reply.code(201).header('location', `/api-keys/${created.record.keyId}`).header('cache-control', 'no-store');
      return { ...toApiKeyView(created.record), key: created.token };
    },
  );

  app.get<{ Querystring: { cursor?: string; limit: number } }>(
    '/api-keys',
    {
      schema: {
        operationId: 'listApiKeys',
        summary: "List this tenant's API keys, revoked ones included",
        tags: ['api keys'],
        querystring: { type: 'object', additionalProperties: false, properties: pageQuery },
        response: { 200: json('A page of keys, in keyId order', 'ApiKeyPage'), ...problemResponses(400, 401, 403, 503) },
      },
      config: { scope: 'admin' },
    },
    async (request, reply) => {
      const tenantId = tenantOf(request);
      const listing = { read: (page: PageRequest) => apiKeys.list(tenantId, page), serialize: (key: ApiKeyRecord) => JSON.stringify(toApiKeyView(key)) };
      return sendBoundedPage(reply, listing, pageOf(request.query), maxPageBytes);
    },
  );

  app.delete<{ Params: { keyId: string } }>(
    '/api-keys/:keyId',
    {
      schema: {
        operationId: 'revokeApiKey',
        summary: 'Revoke an API key',
        description: 'For good: at once on this instance, within 5 s on the others. Revoking a revoked key answers it as it is.',
        tags: ['api keys'],
        params: { type: 'object', required: ['keyId'], properties: { keyId: { type: 'string', minLength: 1, maxLength: 64 } } },
        response: { 200: json('The key, revoked', 'ApiKey'), ...problemResponses(400, 401, 403, 404, 503) },
      },
      config: { scope: 'admin' },
    },
    async (request) => {
      const revoked = await apiKeys.revoke(request.params.keyId, tenantOf(request));
      authenticator.forget(revoked.keyId);
      return toApiKeyView(revoked);
    },
  );
}
