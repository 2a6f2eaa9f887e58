import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RetrydError } from '../domain/errors.js';
import { DEFAULT_TENANT } from '../domain/task.js';
import type { ApiKeyScope } from '../store/store.js';
import { scopeAllows } from './api-keys.js';
import type { Authenticator, Principal } from './authenticator.js';
import type { TenantLimiter } from './tenant-limiter.js';

/**
 * What a route needs: a key of this scope; `operator`, an admin key of the `default` tenant (service-wide data that
 * spans tenants, such as metrics); or none (`public`: health probes and the API's documentation).
 */
export type RouteScope = ApiKeyScope | 'operator' | 'public';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What the route needs (see {@link RouteScope}). Unset: `read` for GET and HEAD, `write` for the other methods. */
    scope?: RouteScope;
  }
  interface FastifyRequest {
    /** Who the request acts as; set before any handler runs on a route that is not public. */
    principal: Principal | null;
  }
}

/** The parts access control is made of. */
export interface AccessControl {
  authenticator: Authenticator;
  limiter: TenantLimiter;
}

/** The scope a request's route needs; a request no route matches needs `read` (it answers 404 only to a caller with a key). */
export function scopeOfRequest(request: FastifyRequest): RouteScope {
  const url = request.routeOptions.url;
  if (url === undefined) return 'read';
  if (url === '/openapi.json' || url === '/docs' || url.startsWith('/docs/')) return 'public';
  const scope = request.routeOptions.config.scope;
  if (scope !== undefined) return scope;
  return request.method === 'GET' || request.method === 'HEAD' ? 'read' : 'write';
}

/**
 * Installs authentication, scopes and the per-tenant request rate as one `onRequest` hook, run before the body is
 * read: a request without a valid key answers 401 (with `WWW-Authenticate: Bearer`), one whose key's scope is too
 * narrow 403, one over its tenant's rate 429 with `Retry-After`.
 */
export function installAccessControl(app: FastifyInstance, { authenticator, limiter }: AccessControl): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    const needed = scopeOfRequest(request);
    if (needed === 'public') return;
    const authorization = request.headers.authorization;
    const principal = await authenticator.authenticate(typeof authorization === 'string' ? authorization : undefined);
    if (needed === 'operator') {
      if (principal.scope !== 'admin' || principal.tenantId !== DEFAULT_TENANT) {
        throw new RetrydError('FORBIDDEN', `${request.method} ${request.routeOptions.url ?? request.url} spans every tenant: it needs an admin key of the ${DEFAULT_TENANT} tenant`);
      }
    } else if (!scopeAllows(principal.scope, needed)) {
      throw new RetrydError(
        'FORBIDDEN',
        `API key ${principal.keyId ?? ''} has scope ${principal.scope}; ${request.method} ${request.routeOptions.url ?? request.url} needs ${needed}`,
      );
    }
    await limiter.admitRequest(principal.tenantId);
    request.principal = principal;
    // Who made each request, in the per-request lines `--log-level debug` writes (the key's id, never the key).
    if (principal.keyId !== null && (request.log.level === 'debug' || request.log.level === 'trace')) {
      request.log = request.log.child({ tenantId: principal.tenantId, keyId: principal.keyId });
    }
  });
}

/** The tenant of a request that passed {@link installAccessControl}. */
export function tenantOfRequest(request: FastifyRequest): string {
  if (request.principal === null) throw new Error(`no principal on ${request.method} ${request.url}: is access control installed?`);
  return request.principal.tenantId;
}
