/** Name-resolver schemes whose target is not a `host:port` to look up: their target is kept as it is. */
const ADDRESS_SCHEMES = new Set(['ipv4', 'ipv6', 'unix', 'unix-abstract', 'vsock', 'xds']);

/** The port grpc-js dials when a `dns` target names none. */
const DEFAULT_PORT = '443';

/**
 * The origin of a channel target, as a client's breaker and its derived idempotency keys know it: `host:port` for a
 * name to resolve (`localhost:50051`, `dns:localhost:50051` and `dns:///localhost:50051` are one origin; the host in
 * lower case, port 443 when none is named, as grpc-js dials), and the target as given for the other schemes
 * (`unix:/run/orders.sock`, `ipv4:10.0.0.1:50051,10.0.0.2:50051`, `xds:///orders`).
 *
 * @throws TypeError when `target` is not a non-empty string
 * @example
 * ```ts
 * grpcOrigin('dns:///Orders.internal'); // 'orders.internal:443'
 * ```
 */
export function grpcOrigin(target: string): string {
  if (typeof target !== 'string' || target.trim() === '') {
    throw new TypeError(`Expected \`target\` to be the channel's target (such as 'localhost:50051'), got ${JSON.stringify(target)}.`);
  }
  // grpc-js's own reading of a target: `scheme:[//authority/]path`, where a scheme it has no resolver for (`localhost`
  // in `localhost:50051`) means the whole target is a dns name.
  const parsed = /^(?:([A-Za-z0-9+.-]+):)?(?:\/\/[^/]*\/)?(.+)$/.exec(target);
  const scheme = parsed?.[1]?.toLowerCase();
  if (scheme !== undefined && ADDRESS_SCHEMES.has(scheme)) return target;
  const name = scheme === 'dns' ? (parsed?.[2] ?? target) : target;
  const bracketed = /^(\[[^\]]+\])(?::(\d+))?$/.exec(name);
  if (bracketed !== null) return `${bracketed[1]!.toLowerCase()}:${bracketed[2] ?? DEFAULT_PORT}`;
  const colon = name.lastIndexOf(':');
  if (colon === -1) return `${name.toLowerCase()}:${DEFAULT_PORT}`;
  // A bare IPv6 address (more than one colon, no brackets) names no port.
  if (name.indexOf(':') !== colon) return `[${name.toLowerCase()}]:${DEFAULT_PORT}`;
  return `${name.slice(0, colon).toLowerCase()}:${name.slice(colon + 1) || DEFAULT_PORT}`;
}
