/** The part of an OpenAPI document {@link withCommonProblems} reads and changes. */
export interface OpenApiDocument {
  paths?: Record<string, Record<string, { security?: unknown[]; responses?: Record<string, unknown> }>>;
  [key: string]: unknown;
}

const problem = (description: string, headers?: object) => ({
  description,
  ...(headers === undefined ? {} : { headers }),
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

/** What any route may answer before or besides its own work: the framework's checks of the request, and a bug. */
const FRAMEWORK_PROBLEMS: Record<string, object> = {
  400: problem('A malformed request: a path or query parameter that breaks its rule, a bad percent-encoding'),
  414: problem('A path segment longer than the router matches'),
  500: problem('An unexpected error: logged by the service, its message never shown (INTERNAL)'),
};

/** The answers access control gives before a route runs (see `installAccessControl`). */
const ACCESS_PROBLEMS: Record<string, object> = {
  401: problem('No API key, or one that is unknown or revoked (once the service has a key)'),
  403: problem("The key's scope does not cover this route"),
  421: problem('The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED)'),
  429: problem("Over the tenant's request rate or pending-task limit", {
    'Retry-After': { description: 'Seconds to wait before sending again.', schema: { type: 'string' } },
  }),
};

/**
 * The document with the answers no route's own schema lists, because hooks and the framework give them before or
 * around every route: malformed requests (400, 414), a bug (500), and on every operation that takes an API key the
 * answers of access control (401, 403, 421, 429). A route's own entry for a status wins. Public operations
 * (`security: []`, the health probes) get no access answers. Changes the document only, never how a response is
 * serialised.
 */
export function withCommonProblems(document: OpenApiDocument): OpenApiDocument {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      const isPublic = Array.isArray(operation.security) && operation.security.length === 0;
      operation.responses = { ...FRAMEWORK_PROBLEMS, ...(isPublic ? {} : ACCESS_PROBLEMS), ...operation.responses };
    }
  }
  return document;
}
