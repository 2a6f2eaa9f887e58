import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RetrydError } from '../domain/errors.js';
import { DEFAULT_TENANT } from '../domain/task.js';
import type { ApiKeyScope } from '../store/store.js';
import { scopeAllows } from './api-keys.js';
import type { Authenticator, Principal } from './authenticator.js';
import type { TenantLimiter } from './tenant-limiter.js';
import { hostNameOf, normaliseAllowedHost, openHostAllowed } from './open-hosts.js';

/**
 * What a route needs: a key of this scope (`metrics`: a metrics or admin key of the `default` tenant, for the
 * Prometheus scrape); `operator`, an admin key of the `default` tenant (service-wide data that spans tenants, such as
 * the console's numbers); or none (`public`: health probes and the API's documentation).
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
  /**
   * Host names (`--allowed-hosts`) an open service (no API key yet) answers for besides `localhost` and the loopback
   * addresses; see {@link installAccessControl}. Default none.
   */
  openHosts?: readonly string[] | undefined;
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

/** The problem of a request to an open service for a host name it does not answer for. */
function hostNotAllowed(host: string | undefined): RetrydError {
  const name = host === undefined ? undefined : hostNameOf(host);
  const shown = name === undefined ? 'a missing or malformed Host' : `Host ${JSON.stringify(name.slice(0, 100))}`;
  const rule = 'localhost, a loopback address or a name given to --allowed-hosts, while the service has no API key';
  return new RetrydError(
    'HOST_NOT_ALLOWED',
    `this service has no API key yet, so it answers only requests for localhost, 127.0.0.1 or [::1] (any port) and ` +
      `the names given to --allowed-hosts, not ${shown}: a web page on another name could reach it through DNS rebinding. ` +
      'Call it as localhost, add the name with --allowed-hosts, or create an API key',
    [{ field: 'headers.Host', rule, message: `headers.Host must be ${rule}` }],
  );
}

/**
 * Installs authentication, scopes and the per-tenant request rate as one `onRequest` hook, run before the body is
 * read: a request without a valid key answers 401 (with `WWW-Authenticate: Bearer`), one whose key's scope is too
 * narrow 403, one over its tenant's rate 429 with `Retry-After`.
 *
 * While the service is open (no API key yet), a request that is not public answers `421 HOST_NOT_ALLOWED` unless its
 * `Host` is `localhost`, a loopback address or one of `openHosts` (any port): a browser sends the page's own name,
 * so a page whose name an attacker rebinds to 127.0.0.1 cannot use the open service.
 */
export function installAccessControl(app: FastifyInstance, { authenticator, limiter, openHosts = [] }: AccessControl): void {
  const allowedHosts = new Set(openHosts.map((host) => normaliseAllowedHost(host) ?? host.toLowerCase()));
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    const needed = scopeOfRequest(request);
    if (needed === 'public') return;
    const authorization = request.headers.authorization;
    const principal = await authenticator.authenticate(typeof authorization === 'string' ? authorization : undefined);
    if (principal.keyId === null && !openHostAllowed(request.headers.host, allowedHosts)) throw hostNotAllowed(request.headers.host);
    if (needed === 'operator' || needed === 'metrics') {
      // Both span every tenant: only the default tenant's keys reach them, its admin keys and, for metrics, its metrics keys.
      if (principal.tenantId !== DEFAULT_TENANT || (principal.scope !== 'admin' && principal.scope !== needed)) {
        const keys = needed === 'metrics' ? 'an admin or metrics key' : 'an admin key';
        throw new RetrydError('FORBIDDEN', `${request.method} ${request.routeOptions.url ?? request.url} spans every tenant: it needs ${keys} of the ${DEFAULT_TENANT} tenant`);
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
