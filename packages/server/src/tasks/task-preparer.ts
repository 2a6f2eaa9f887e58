import type { Clock, RetryPolicy } from '@retryd/core';
import type { BlobStore } from '../blobs/blob-store.js';
import { RetrydError } from '../domain/errors.js';
import type { RetryTask } from '../domain/task.js';
import type { TaskCallback } from '../domain/task-callback.js';
import { targetKeyOf } from '../domain/target-key.js';
import { parseTraceparent } from '../domain/traceparent.js';
import type { TargetGuard, TargetVerdict } from '../security/target-guard.js';
import type { TaskSecrets } from '../secrets/task-secrets.js';
import type { Store } from '../store/store.js';
import { parseEnqueueInput, type FirstAttempt, type ParsedEnqueue } from './enqueue-input.js';
import { InlinePolicyMemo } from './inline-policy-memo.js';
import { ceilingViolations, withinCeilings, type CeilingBook, type ResolvedCeilings } from '../policies/policy-ceilings.js';
import type { PolicyRegistry } from '../policies/policy-registry.js';
import { callStore, storeFailure } from './store-failure.js';
import { isGrpcUrl } from '../domain/grpc-target.js';
import { namedPolicyErrors } from './grpc-enqueue-rules.js';

/** What the enqueue request carried besides its body. */
export interface EnqueueContext {
  /** W3C `traceparent` of the request, carried to every attempt. */
  traceparent?: string | undefined;
}

/** What {@link TaskPreparer} checks entries against and builds their tasks with. */
export interface TaskPreparerDeps {
  /** Named in the errors of a failing read (`the postgres store failed to enqueue`). */
  store: Pick<Store, 'kind'>;
  blobs: BlobStore;
  guard: TargetGuard;
  policies: Pick<PolicyRegistry, 'isKnown' | 'exists' | 'callbackOf' | 'callbackFor' | 'definitionOf' | 'definitionFor'>;
  clock: Pick<Clock, 'now'>;
  newId: () => string;
  inlineBodyLimit: number;
  /** Seals credential headers and sensitive bodies before they are stored; checks secret references. */
  secrets: TaskSecrets;
  /** The most a tenant's inline policy may ask for (a registered one is checked when it is registered). */
  ceilings: CeilingBook;
}

/** One entry, prepared: its new task (and the blob retryd wrote for its body, if any), or the error it gets. */
export type PreparedEntry = { task: RetryTask; blobRef: string | null } | { error: RetrydError };

/** The entries of one request, prepared at `now`. */
export interface PreparedBatch {
  now: number;
  entries: PreparedEntry[];
}

/**
 * The checks of an enqueue, shared by the API (through `Enqueuer`) and the transactional enqueue
 * (`@retryd/server/pg`): validate each entry, check its policy (within the tenant's ceilings) and its target, seal its
 * secrets, put a large body in the blob store, and build the task to insert. Nothing is inserted here.
 */
export class TaskPreparer {
  constructor(private readonly deps: TaskPreparerDeps) {}

  /**
   * Each input's task or error, in order; `pathOf(i)` prefixes field names (`tasks[3].`). Decided in place, without
   * a promise, when no entry needs to wait (see `#prepare`).
   */
  prepare(tenantId: string, inputs: readonly unknown[], pathOf: (index: number) => string, context: EnqueueContext = {}): PreparedBatch | Promise<PreparedBatch> {
    const now = this.deps.clock.now();
    const traceContext =
      parseTraceparent(context.traceparent) === undefined ? null : (context.traceparent as string);
    // Every entry is parsed in this one synchronous pass, so the memo of a shared inline policy cannot outlive it.
    const memo = new InlinePolicyMemo();
    const targets = new BatchTargets(this.deps.guard);
    const entries = inputs.map((input, i) => this.#prepare(tenantId, input, pathOf(i), now, traceContext, memo, targets));
    // Awaited only when some entry needed to wait: `Promise.all` would make a promise of every decided entry too.
    if (entries.some((entry) => entry instanceof Promise)) return Promise.all(entries).then((all) => ({ now, entries: all }));
    return { now, entries: entries as PreparedEntry[] };
  }

  /**
   * One entry: its task, or the error it gets. Decided in place, without a promise, in the common case: a policy
   * already known, a target given by address, nothing to seal, no body for the blob store. Anything else is
   * decided by {@link #prepareLater}, which asks the store, the resolver or the blob store; both decide alike.
   */
  #prepare(
    tenantId: string,
    input: unknown,
    path: string,
    now: number,
    traceContext: string | null,
    memo: InlinePolicyMemo,
    targets: BatchTargets,
  ): PreparedEntry | Promise<PreparedEntry> {
    try {
      const parsed = parseEnqueueInput(input, path, memo);
      if (!parsed.ok) return { error: RetrydError.validation(parsed.errors) };
      let request = parsed.value;
      const { policies, secrets, inlineBodyLimit } = this.deps;
      const target = targets.of(request.targetUrl);
      const verdict = target.verdict;
      let ceilings: ResolvedCeilings | undefined;
      if (request.policy !== null) {
        ceilings = this.deps.ceilings.cached(tenantId);
        if (ceilings === undefined) return this.#prepareLater(tenantId, request, path, now, traceContext);
        const ceiled = withinTenantCeilings(request, ceilings, path);
        if ('error' in ceiled) return ceiled;
        request = ceiled.request;
      }
      // The callback its policy gives a task that names none, when known without a read (undefined: not known).
      const inherited = request.policyId === null || request.callback !== null ? null : policies.callbackOf(tenantId, request.policyId);
      // Read with the callback, within the same time: a registered policy must fit the kind of target (HTTP or gRPC).
      const definition = request.policyId === null ? null : policies.definitionOf(tenantId, request.policyId);
      const preparableAtOnce =
        verdict !== undefined &&
        (request.policyId === null || policies.isKnown(tenantId, request.policyId)) &&
        definition !== undefined &&
        inherited !== undefined &&
        request.bodyRef === null &&
        request.callback === null &&
        !secrets.needsProtection(request) &&
        (request.body === null || Buffer.byteLength(request.body) <= inlineBodyLimit);
      if (!preparableAtOnce) return this.#prepareLater(tenantId, request, path, now, traceContext);
      if (!verdict.ok) return { error: targetRefused(verdict, `${path}targetUrl`) };
      if (definition !== null) {
        const misfit = namedPolicyErrors(definition, request.policyId as string, isGrpcUrl(request.targetUrl), `${path}policyId`);
        if (misfit.length > 0) return { error: RetrydError.validation(misfit) };
      }
      const task = this.#taskOf(tenantId, this.deps.newId(), request, target.key, request.headers, request.body, null, now, traceContext, inherited);
      return { task, blobRef: null };
    } catch (error) {
      return { error: storeFailure(error, this.deps.store.kind, 'enqueue') };
    }
  }

  async #prepareLater(tenantId: string, request: ParsedEnqueue, path: string, now: number, traceContext: string | null): Promise<PreparedEntry> {
    try {
      return await this.#build(tenantId, request, path, now, traceContext);
    } catch (error) {
      return { error: storeFailure(error, this.deps.store.kind, 'enqueue') };
    }
  }

  async #build(tenantId: string, given: ParsedEnqueue, path: string, now: number, traceContext: string | null): Promise<PreparedEntry> {
    let request = given;
    if (request.policy !== null) {
      const ceiled = withinTenantCeilings(request, await this.deps.ceilings.resolve(tenantId), path);
      if ('error' in ceiled) return ceiled;
      request = ceiled.request;
    }
    if (request.policyId !== null && !(await this.deps.policies.exists(tenantId, request.policyId))) {
      return { error: unregisteredPolicy(`${path}policyId`, request.policyId) };
    }
    const grpc = isGrpcUrl(request.targetUrl);
    if (request.policyId !== null) {
      // A named policy is checked against the task's target here, at enqueue; a later PUT of the policy is read by the
      // engine with each kind's defaults for a list of the other kind (see `retryableGrpcCodesOf`).
      const definition = await this.deps.policies.definitionFor(tenantId, request.policyId);
      const misfit = definition === undefined ? [] : namedPolicyErrors(definition, request.policyId, grpc, `${path}policyId`);
      if (misfit.length > 0) return { error: RetrydError.validation(misfit) };
    }
    const verdict = await this.deps.guard.check(request.targetUrl);
    if (!verdict.ok) return { error: targetRefused(verdict, `${path}targetUrl`) };
    if (request.callback !== null) {
      const refused = await this.#checkCallback(tenantId, request.callback, `${path}callback.`);
      if (refused !== undefined) return { error: refused };
    }
    // Checked when its policy was registered, and at each attempt of the callback.
    const inherited = request.policyId === null || request.callback !== null ? null : await this.deps.policies.callbackFor(tenantId, request.policyId);
    const taskId = this.deps.newId();
    // Before anything is written: a credential that cannot be kept out of plain text is refused, never stored.
    const secured = await this.deps.secrets.protect(tenantId, taskId, request, path);
    if (!secured.ok) return { error: RetrydError.validation(secured.errors) };
    const adopted = request.bodyRef === null ? null : await this.#adopt(tenantId, request.bodyRef, `${path}bodyRef`);
    if (adopted !== null && 'error' in adopted) return adopted;
    let body = secured.value.body;
    // Only a blob retryd wrote itself; a caller's object (bodyRef) is never dropped.
    let blobRef: string | null = null;
    // A sensitive body is already sealed here, so the blob store too only ever holds its ciphertext.
    if (body !== null && Buffer.byteLength(body) > this.deps.inlineBodyLimit) {
      // The blob is durable before the task that refers to it is committed (see BlobStore).
      // A gRPC body is base64 text in the task, bytes in a blob (as a caller's own bodyRef holds them); a sealed one
      // stays the text it was sealed as, opened back into the task's body before it is sent.
      const data = grpc && !request.sensitiveBody ? Buffer.from(body, 'base64') : body;
      blobRef = await callStore('blob', 'store the body', () => this.deps.blobs.put(tenantId, taskId, data));
      body = null;
    }
    const task = this.#taskOf(tenantId, taskId, request, targetKeyOf(request.targetUrl), secured.value.headers, body, adopted?.ref ?? blobRef, now, traceContext, inherited);
    return { task, blobRef };
  }

  /** The new task of a checked request: its headers and body as they are stored, its body's ref if it has one. */
  #taskOf(
    tenantId: string,
    taskId: string,
    request: ParsedEnqueue,
    targetKey: string,
    headers: RetryTask['headers'],
    body: string | null,
    bodyRef: string | null,
    now: number,
    traceContext: string | null,
    inherited: TaskCallback | null,
  ): RetryTask {
    return {
      tenantId,
      taskId,
      idempotencyKey: request.idempotencyKey ?? this.deps.newId(),
      requestHash: request.requestHash,
      targetUrl: request.targetUrl.href,
      targetKey,
      method: request.method,
      headers,
      body,
      bodyRef,
      policyId: request.policyId,
      policy: request.policy,
      status: 'PENDING',
      attemptNumber: 0,
      runAttemptOffset: 0,
      // The budget counts from now, not from the first attempt: a delayed or queued task spends it waiting too.
      runStartedAt: now,
      lastDelayMs: 0,
      nextAttemptAt: dueAt(request.firstAttempt, now),
      createdAt: now,
      updatedAt: now,
      leaseOwner: null,
      leaseExpiresAt: null,
      fencingToken: 0,
      version: 1,
      cancelRequested: false,
      lastError: null,
      lastResponseStatus: null,
      deadLetterReason: null,
      traceContext,
      sensitiveBody: request.sensitiveBody,
      // Live: it is given one when it ends.
      expiresAt: null,
      attemptTimeoutMs: request.attemptTimeoutMs,
      connectTimeoutMs: request.connectTimeoutMs,
      // Its own, else its policy's (copied: a change of the policy reaches the tasks enqueued after it).
      callback: request.callback === null ? inherited : { url: request.callback.url.href, on: request.callback.on, policyId: request.callback.policyId },
    };
  }

  /**
   * A callback's policy must be registered and its URL allowed, as a task's (the callback is a task of its own, checked
   * again when it is made and at each of its attempts): the error naming the field (`callback.url`), or undefined.
   */
  async #checkCallback(tenantId: string, callback: NonNullable<ParsedEnqueue['callback']>, path: string): Promise<RetrydError | undefined> {
    if (callback.policyId !== null && !(await this.deps.policies.exists(tenantId, callback.policyId))) {
      return unregisteredPolicy(`${path}policyId`, callback.policyId);
    }
    const verdict = await this.deps.guard.check(callback.url);
    return verdict.ok ? undefined : targetRefused(verdict, `${path}url`);
  }

  /**
   * Checks a caller's `bodyRef` with the blob store (`BlobStore.adopt`): a 400 naming `field` and the rule it
   * breaks, 503 when the blob store cannot answer, else the ref the task keeps.
   */
  async #adopt(tenantId: string, url: string, field: string): Promise<{ ref: string } | { error: RetrydError }> {
    const adopt = this.deps.blobs.adopt?.bind(this.deps.blobs);
    if (adopt === undefined) {
      const rule = 'absent: this retryd keeps bodies in its own store; a body given by reference needs --blobs s3://…';
      return { error: RetrydError.validation([{ field, rule, message: `${field} must be ${rule}` }]) };
    }
    const adopted = await callStore('S3 blob', 'check bodyRef', () => adopt(tenantId, url));
    if (adopted.ok) return { ref: adopted.ref };
    const got = adopted.got === undefined ? '' : `, got ${adopted.got}`;
    return { error: RetrydError.validation([{ field, rule: adopted.rule, message: `${field} must be ${adopted.rule}${got}` }]) };
  }
}

/**
 * What one pass over a call's entries knows of each target (by its key, `targetKeyOf`): the key as one string, which
 * every task to that target then holds, and `guard.checkNow`'s verdict, which depends on nothing but the scheme and the
 * host, both in the key. The tasks of a batch mostly go to a few targets: the thousand verdicts and key strings a batch,
 * each task's kept until the insert, were judged and made once a target. A name's `undefined` (to be resolved) is kept
 * too; its entries are then checked by `check`, each.
 */
class BatchTargets {
  readonly #known = new Map<string, { key: string; verdict: TargetVerdict | undefined }>();

  constructor(private readonly guard: TargetGuard) {}

  of(url: URL): { key: string; verdict: TargetVerdict | undefined } {
    const key = targetKeyOf(url);
    let known = this.#known.get(key);
    if (known === undefined) {
      known = { key, verdict: this.guard.checkNow(url) };
      this.#known.set(key, known);
    }
    return known;
  }
}

/** When the first attempt is due. An absolute time in the past means now, so it does not jump the queue. */
function dueAt(first: FirstAttempt, now: number): number {
  if ('delayMs' in first) return now + first.delayMs;
  if ('notBefore' in first) return Math.max(now, first.notBefore);
  return now;
}

/** The 400 of a `policyId` (the task's, or its callback's, named by `field`) that names no registered policy. */
function unregisteredPolicy(field: string, policyId: string): RetrydError {
  const rule = 'the id of a registered policy (see GET /retry-policies)';
  return RetrydError.validation([{ field, rule, message: `${field} must be ${rule}; ${policyId} is not registered` }]);
}

/** The error of a refused target, naming `field`: 503 when the lookup failed for now, else 400 with the rule. */
export function targetRefused(verdict: Exclude<TargetVerdict, { ok: true }>, field: string): RetrydError {
  if (verdict.kind === 'lookup_failed') return new RetrydError('TARGET_LOOKUP_FAILED', `${field}: ${verdict.detail}`);
  const rule = 'a public address, or one covered by --allow-targets';
  return new RetrydError('TARGET_NOT_ALLOWED', `${field} is not allowed: ${verdict.detail}`, [
    { field, rule, message: `${field} must be ${rule}: ${verdict.detail}` },
  ]);
}

/**
 * An inline policy within its tenant's ceilings: the request with the budget ceiling filled in when its policy sets no
 * budget, or the 400 naming each field that goes over (`policy.maxAttempts must be at most 20 (the tenant's ceiling on
 * policies), got 50`). Applying it twice changes nothing.
 */
function withinTenantCeilings(request: ParsedEnqueue, ceilings: ResolvedCeilings, path: string): { request: ParsedEnqueue } | { error: RetrydError } {
  // No ceiling at all (the default): nothing to check or fill, and nothing allocated on the enqueue's hot path.
  if (ceilings.maxAttempts === null && ceilings.totalBudgetMs === null && ceilings.maxDelayMs === null) return { request };
  const policy = request.policy as RetryPolicy;
  const errors = ceilingViolations(policy, ceilings, `${path}policy.`);
  if (errors.length > 0) return { error: RetrydError.validation(errors) };
  const filled = withinCeilings(policy, ceilings);
  return { request: filled === policy ? request : { ...request, policy: filled } };
}
