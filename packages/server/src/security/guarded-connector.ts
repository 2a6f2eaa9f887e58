import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { buildConnector, errors } from 'undici';
import type { TargetGuard, TargetVerdict } from './target-guard.js';

/**
 * A connection refused because its address is in a blocked range (or its host resolves to one). Permanent: the engine
 * ends the task FAILED with dead-letter reason `target_blocked` and does not retry it.
 */
export class TargetBlockedError extends Error {
  override readonly name = 'TargetBlockedError';
  readonly code = 'TARGET_BLOCKED';
  /** @param detail the guard's sentence, e.g. `127.0.0.1 (a.example resolves to it) is loopback: blocked unless …` */
  constructor(readonly detail: string) {
    super(detail);
  }
}

/** Whether `error`, or an error in its `cause` chain, is a {@link TargetBlockedError} (by its code). */
export function isTargetBlocked(error: unknown): boolean {
  for (let link = error, depth = 0; typeof link === 'object' && link !== null && depth < 8; depth++) {
    if ((link as { code?: unknown }).code === 'TARGET_BLOCKED') return true;
    link = (link as { cause?: unknown }).cause;
  }
  return false;
}

/** The error a connection (or a gRPC call) fails with when the guard refuses its host. */
export function refusalError(verdict: Exclude<TargetVerdict, { ok: true }>): Error {
  if (verdict.kind === 'blocked') return new TargetBlockedError(verdict.detail);
  // As `dns.lookup` fails, with its code: ENOTFOUND stays permanent and EAI_AGAIN retryable, as without the guard.
  return Object.assign(new Error(verdict.detail), { code: verdict.code });
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `net.connect` lookup that resolves through the guard and hands back only the addresses it checked: the socket
 * connects to what was judged, never to a second answer of the resolver.
 */
function guardedLookup(guard: TargetGuard): LookupFunction {
  return (hostname: string, options: LookupOptions, callback: LookupCallback) => {
    void guard.checkHost(hostname).then((verdict) => {
      if (!verdict.ok) {
        callback(refusalError(verdict), '');
        return;
      }
      const found: LookupAddress[] = [];
      for (const address of verdict.addresses) {
        const family = isIP(address);
        if (options.family === undefined || options.family === 0 || options.family === family || options.family === `IPv${family}`) {
          found.push({ address, family });
        }
      }
      const first = found[0];
      if (first === undefined) {
        callback(Object.assign(new Error(`the host ${hostname} has no IPv${String(options.family)} address`), { code: 'ENOTFOUND' }), '');
      } else if (options.all === true) {
        callback(null, found);
      } else {
        callback(null, first.address, first.family);
      }
    }, (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), ''));
  };
}

/** Options of {@link guardedConnector}. */
export interface GuardedConnectorOptions {
  /** Most time to open a TCP (and TLS) connection, in ms, name resolution (and the guard's check) included. */
  timeoutMs: number;
}

/** undici's connector as it runs: it returns the socket it opens (its typings say void). */
type OpeningConnector = (options: buildConnector.Options, callback: buildConnector.Callback) => Socket | undefined;

/**
 * An undici connector (the `connect` option of an `Agent`, `Pool` or `Client`) that checks every connection it opens
 * with `guard`, and connects to the checked address: an IP-literal host is judged as it is, without DNS; a name is
 * resolved once through the guard and the socket connects only to the addresses it passed (Node's `lookup` option), so
 * a resolver that answers differently between the check and the connect (DNS rebinding) is never asked twice. A refused
 * connection fails with {@link TargetBlockedError}, and with it every request queued for that connection.
 *
 * Runs per connection, not per request: keep-alive connections are reused without a new check.
 *
 * The connect timeout is timed here, from the call (the guard's check included), to the millisecond: undici's own
 * connect timer ticks about every half second (its "fast timers"), so a timeout of 200 ms would fire at about 1 s. A
 * connection still opening when it fires is destroyed with undici's `ConnectTimeoutError` (`UND_ERR_CONNECT_TIMEOUT`),
 * and one still being checked is never opened. undici's timer stays set as a backstop.
 *
 * @example
 * ```ts
 * const agent = new Agent({ connect: guardedConnector(new TargetGuard({ allow }), { timeoutMs: 5_000 }) });
 * ```
 */
export function guardedConnector(guard: TargetGuard, options: GuardedConnectorOptions): buildConnector.connector {
  const { timeoutMs } = options;
  const connect = buildConnector({ timeout: timeoutMs, lookup: guardedLookup(guard) }) as unknown as OpeningConnector;
  return (connectOptions, callback) => {
    let settled = false;
    let socket: Socket | undefined;
    const finish = (error: Error | null, opened: Socket | null) => {
      if (settled) {
        // Timed out meanwhile: a socket that opened after all is not handed out.
        opened?.destroy();
        return;
      }
      settled = true;
      clearTimeout(timer);
      if (error === null && opened !== null) callback(null, opened);
      else callback(error ?? new Error('the connection opened no socket'), null);
    };
    const timer = setTimeout(() => {
      const { hostname, port } = connectOptions;
      const error = new errors.ConnectTimeoutError(`Connect Timeout Error (attempted address: ${hostname}:${port}, timeout: ${timeoutMs}ms)`);
      // Destroyed, its 'error' ends the connect through undici's callback; not opened yet, it never will be.
      if (socket !== undefined && !socket.destroyed) socket.destroy(error);
      else finish(error, null);
    }, timeoutMs);
    timer.unref();
    const open = () => {
      if (!settled) socket = connect(connectOptions, finish as buildConnector.Callback) ?? undefined;
    };
    // Node's net.connect skips the lookup for an IP address, so those are judged here.
    if (isIP(connectOptions.hostname) === 0) {
      open();
      return;
    }
    void guard.checkHost(connectOptions.hostname).then(
      (verdict) => {
        if (verdict.ok) open();
        else finish(refusalError(verdict), null);
      },
      (error: unknown) => finish(error instanceof Error ? error : new Error(String(error)), null),
    );
  };
}
