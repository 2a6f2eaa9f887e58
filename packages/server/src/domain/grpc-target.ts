/**
 * gRPC targets: `grpc://host:port/package.Service/Method` (plaintext HTTP/2) and `grpcs://host:port/…` (TLS). The URL
 * names one unary method; its origin (`grpc://host:port`) is the target key, as an HTTP URL's origin is.
 *
 * Node parses these schemes as "non-special": the host is kept as written and `URL.origin` is `"null"`. Every reader
 * goes through {@link grpcTargetOf} instead, which gives the host as an `http:` URL would spell it (lower case, IPv4
 * and IDNA normalised), so one service has one key however a task spells it.
 */

/** The schemes of gRPC targets, as `URL.protocol` gives them. */
export const GRPC_PROTOCOLS: ReadonlySet<string> = new Set(['grpc:', 'grpcs:']);

/** Whether a URL (or its text) names a gRPC target. */
export function isGrpcUrl(url: URL | string): boolean {
  if (typeof url === 'string') return url.startsWith('grpc://') || url.startsWith('grpcs://') || /^grpcs?:/i.test(url);
  return GRPC_PROTOCOLS.has(url.protocol);
}

/**
 * The path of a gRPC method: `/<service>/<method>`, the service fully qualified by its package (`/pkg.v1.Payments/Charge`),
 * each name made of letters, digits and `_` (and `.` between a package's parts).
 */
const METHOD_PATH = /^\/([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)\/([A-Za-z_]\w*)$/;

/** What the rule of a gRPC `targetUrl` says, for the field errors that refuse one. */
export const GRPC_URL_RULE =
  'grpc://host:port/package.Service/Method or grpcs://… (an explicit port 1 to 65535, a method path, no user:password, query or fragment)';

/** A gRPC target, read from its URL. */
export interface GrpcTarget {
  /** `grpcs:` uses TLS; `grpc:` plaintext HTTP/2. */
  tls: boolean;
  /** The host as an `http:` URL spells it (lower case; an IPv6 address in brackets). */
  hostname: string;
  port: number;
  /** The call's path, `/package.Service/Method`. */
  path: string;
  /** `package.Service` (OpenTelemetry's `rpc.service`). */
  service: string;
  /** `Method` (OpenTelemetry's `rpc.method`). */
  method: string;
  /** The target key: `grpc://host:port` or `grpcs://host:port`. */
  key: string;
  /** The URL as stored: `<key><path>`. */
  href: string;
}

/**
 * Reads a gRPC target URL, or says which rule it breaks (a phrase to follow "must be"). The host is normalised as an
 * `http:` URL's is; the port must be given (gRPC has no default one a caller could rely on).
 *
 * @example
 * ```ts
 * grpcTargetOf(new URL('grpc://API.example.com:50051/pay.v1.Payments/Charge')).key; // 'grpc://api.example.com:50051'
 * ```
 */
export function grpcTargetOf(url: URL): GrpcTarget | { rule: string } {
  if (!GRPC_PROTOCOLS.has(url.protocol)) return { rule: GRPC_URL_RULE };
  if (url.username !== '' || url.password !== '') return { rule: `${GRPC_URL_RULE}: credentials go in headers (metadata), never in the URL` };
  if (url.search !== '' || url.hash !== '') return { rule: `${GRPC_URL_RULE}: a gRPC method takes no query or fragment` };
  if (url.port === '' || url.port === '0') return { rule: `${GRPC_URL_RULE}: the port is required` };
  const parsed = METHOD_PATH.exec(url.pathname);
  if (parsed === null) return { rule: `${GRPC_URL_RULE}: the path must be /package.Service/Method` };
  const asHttp = URL.parse(`http://${url.hostname}`);
  if (asHttp === null || asHttp.hostname === '') return { rule: `${GRPC_URL_RULE}: the host is not a valid host name or address` };
  const key = `${url.protocol}//${asHttp.hostname}:${url.port}`;
  return {
    tls: url.protocol === 'grpcs:',
    hostname: asHttp.hostname,
    port: Number(url.port),
    path: url.pathname,
    service: parsed[1] as string,
    method: parsed[2] as string,
    key,
    href: key + url.pathname,
  };
}
