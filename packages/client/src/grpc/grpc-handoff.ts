import { Metadata, status as Status, type StatusObject } from '@grpc/grpc-js';
import { grpcStatusName } from '@retryd/core';
import { stripCredentials, type CredentialRules } from '../credentials/strip-credentials.js';
import type { EnqueueRequest, RetryPolicy, Task } from '../service/api-types.js';
import type { RetrydClient } from '../service/retryd-client.js';
import { PUSHBACK_METADATA } from './pushback.js';

/** The metadata that carries a call's idempotency key, on every attempt and in a task handed to retryd. */
export const IDEMPOTENCY_KEY_METADATA = 'idempotency-key';

/** The metadata of the status of a call handed to retryd: the task's id. */
export const RETRYD_TASK_ID_METADATA = 'retryd-task-id';

/** Where a unary call that still fails after its retries in process is handed, for the retryd service to retry. */
export interface GrpcHandoffOptions extends CredentialRules {
  /** The client of the service the calls are handed to. */
  client: RetrydClient;
  /**
   * The server as the retryd service dials it: `grpc://host:port` (plain text) or `grpcs://host:port` (TLS). The
   * task's URL is this with the method's path: `grpc://orders.internal:50051/shop.Orders/Place`.
   */
  target: string;
  /** The registered policy the service retries with. Default: the service's `default`. Not with `policy`. */
  policyId?: string;
  /** An inline policy instead; its `retryableStatusCodes`, if any, name gRPC codes. Not with `policyId`. */
  policy?: RetryPolicy;
}

/** One call to hand over: its method, the request as sent, its metadata and key. */
export interface HandoffCall {
  /** `/package.Service/Method`. */
  path: string;
  /** The serialized request message. */
  body: Uint8Array;
  metadata: Metadata;
  idempotencyKey: string;
}

/**
 * Checks `options` at set-up (the target's scheme, the credential rules) and answers the function that hands a call
 * over: it enqueues the task and answers it, or rejects with the service's error.
 *
 * @throws TypeError naming `handoff.target` or `handoff.client`; CredentialRuleError naming a secret
 */
export function grpcHandoff(options: GrpcHandoffOptions): (call: HandoffCall) => Promise<Task> {
  if (typeof options.client?.enqueueTask !== 'function') {
    throw new TypeError('Expected `handoff.client` to be a RetrydClient.');
  }
  const target = handoffTarget(options.target);
  stripCredentials({}, options);
  return async (call) => {
    const request: EnqueueRequest & { idempotencyKey: string } = {
      targetUrl: `${target}${call.path}`,
      // A gRPC call is an HTTP/2 POST to its method's path.
      method: 'POST',
      headers: stripCredentials(metadataHeaders(call.metadata), options).headers,
      body: Buffer.from(call.body.buffer, call.body.byteOffset, call.body.byteLength).toString('base64'),
      idempotencyKey: call.idempotencyKey,
      ...(options.policyId === undefined ? {} : { policyId: options.policyId }),
      ...(options.policy === undefined ? {} : { policy: options.policy }),
    };
    return (await options.client.enqueueTask(request)).task;
  };
}

/** `grpc://host:port` or `grpcs://host:port`, without a trailing slash. */
function handoffTarget(target: unknown): string {
  const rule = 'Expected `handoff.target` to be grpc://host:port or grpcs://host:port (a port, no path, query or fragment)';
  let url: URL;
  try {
    url = new URL(String(target));
  } catch {
    throw new TypeError(`${rule}, got ${JSON.stringify(target)}.`);
  }
  const bare = url.hostname !== '' && url.port !== '' && url.username === '' && url.password === '' && ['', '/'].includes(url.pathname) && url.search === '' && url.hash === '';
  if ((url.protocol !== 'grpc:' && url.protocol !== 'grpcs:') || !bare) {
    throw new TypeError(`${rule}, got ${JSON.stringify(target)}.`);
  }
  return `${url.protocol}//${url.host}`;
}

/**
 * A call's metadata as the headers of a task: each key once, its values joined by `, ` (binary `-bin` values in
 * base64, joined by `,` as gRPC sends them). Left out: the idempotency key, which the task carries in its own field,
 * and `grpc-*` and `content-type`, which the gRPC protocol sets on each attempt (the service refuses them).
 */
export function metadataHeaders(metadata: Metadata): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [key, values] of Object.entries(metadata.toJSON())) {
    if (key === IDEMPOTENCY_KEY_METADATA || key === 'content-type' || key.startsWith('grpc-') || values.length === 0) continue;
    headers[key] = key.endsWith('-bin')
      ? values.map((value) => (typeof value === 'string' ? Buffer.from(value) : value).toString('base64')).join(',')
      : values.map(String).join(', ');
  }
  return headers;
}

/**
 * The status a call handed to retryd fails with: `UNAVAILABLE` (the server could not be reached in time; retryd now
 * makes the next attempts), the task's id in `retryd-task-id`, and a pushback of -1, which tells any retrying layer
 * above (another retry interceptor, gRFC A6 retries) not to retry a call retryd has taken.
 */
export function handedOffStatus(task: Task, last: StatusObject): StatusObject {
  const metadata = new Metadata();
  metadata.set(RETRYD_TASK_ID_METADATA, task.taskId);
  metadata.set(PUSHBACK_METADATA, '-1');
  return { code: Status.UNAVAILABLE, details: `handed to retryd as task ${task.taskId} after ${grpcStatusName(last.code)}: ${last.details}`, metadata };
}

/**
 * The id of the retryd task a failed call was handed to, read from the error grpc-js gives the call's callback (or a
 * status): undefined when the call was not handed over.
 *
 * @example
 * ```ts
 * client.place(order, (error, reply) => {
 *   const taskId = retrydTaskIdOf(error);
 *   if (taskId !== undefined) return answer(202, { status: 'queued', taskId });
 * });
 * ```
 */
export function retrydTaskIdOf(error: unknown): string | undefined {
  // Read by shape, not `instanceof`: the error may come from another copy of grpc-js.
  const metadata = (error as { metadata?: Partial<Metadata> } | null | undefined)?.metadata;
  if (typeof metadata?.get !== 'function') return undefined;
  const [taskId] = metadata.get(RETRYD_TASK_ID_METADATA);
  return typeof taskId === 'string' ? taskId : undefined;
}
