import type { Clock, RetryPolicy } from '@retryd/core';
import type { BlobStore } from '../blobs/blob-store.js';
import { RetrydError } from '../domain/errors.js';
import type { RetryTask } from '../domain/task.js';
import { targetKeyOf } from '../domain/target-key.js';
import { parseTraceparent } from '../domain/traceparent.js';
import type { TargetGuard, TargetVerdict } from '../security/target-guard.js';
import type { TaskSecrets } from '../secrets/task-secrets.js';
import type { Store } from '../store/store.js';
import type { EnqueueBatcher } from './enqueue-batcher.js';
import { parseEnqueueInput, type FirstAttempt, type ParsedEnqueue } from './enqueue-input.js';
import { leasedTo, type HandOff } from './hand-off.js';
import { ceilingViolations, withinCeilings, type CeilingBook, type ResolvedCeilings } from '../policies/policy-ceilings.js';
import type { PolicyRegistry } from '../policies/policy-registry.js';
import { callStore, storeFailure } from './store-failure.js';

/** A new task (201), or the task an earlier identical request created (200, `Idempotent-Replayed: true`). */
export type EnqueueResult = { kind: 'created' | 'replayed'; task: RetryTask };

/** One entry of a batch: as a single enqueue would answer, or the error it would get. */
export type BatchEntryResult = EnqueueResult | { kind: 'error'; error: RetrydError };

/** What the enqueue request carried besides its body. */
export interface EnqueueContext {
  /** W3C `traceparent` of the request, carried to every attempt. */
  traceparent?: string | undefined;
}

export interface EnqueuerDeps {
  store: Store;
  blobs: BlobStore;
  guard: TargetGuard;
  policies: PolicyRegistry;
  batcher: EnqueueBatcher;
  clock: Pick<Clock, 'now'>;
  newId: () => string;
  inlineBodyLimit: number;
  wake: () => void;
  /** The local engine, which takes tasks due at once straight from the enqueue. Absent: every task waits for a claim. */
  handOff?: HandOff | undefined;
  /** Seals credential headers and sensitive bodies before they are stored; checks secret references. */
  secrets: TaskSecrets;
  /** The most a tenant's inline policy may ask for (a registered one is checked when it is registered). */
  ceilings: CeilingBook;
}

type Prepared = { task: RetryTask; blobRef: string | null } | { error: RetrydError };

/**
 * The enqueue pipeline shared by single and batch requests: validate each entry, check its policy and its
 * target, put a large body in the blob store, then hand every valid task of the request to the batcher in
 * one submission (one transaction) and tell created, replayed and conflicting keys apart.
 */
export class Enqueuer {
  constructor(private readonly deps: EnqueuerDeps) {}

  /**
   * Enqueues each input; `pathOf(i)` prefixes field names (`tasks[3].`). Entries are independent except
   * for the write: if the store fails, the whole call rejects with 503 and nothing was acknowledged.
   */
  async enqueue(
    tenantId: string,
    inputs: readonly unknown[],
    pathOf: (index: number) => string,
    context: EnqueueContext = {},
  ): Promise<BatchEntryResult[]> {
    const now = this.deps.clock.now();
    const traceContext =
      parseTraceparent(context.traceparent) === undefined ? null : (context.traceparent as string);
    const entries = inputs.map((input, i) => this.#prepare(tenantId, input, pathOf(i), now, traceContext));
    // Awaited only when some entry needed to wait: `Promise.all` would make a promise of every decided entry too.
    const prepared = entries.some((entry) => entry instanceof Promise) ? await Promise.all(entries) : (entries as Prepared[]);
    const valid = prepared.filter((p): p is Extract<Prepared, { task: RetryTask }> => 'task' in p);
    // A store outage is no entry's fault: the whole request answers 503 rather than 200 with failed entries.
    const outage = prepared.find((p) => 'error' in p && p.error.code === 'STORE_UNAVAILABLE');
    if (outage !== undefined && 'error' in outage) {
      await this.#dropBlobs(valid.map((p) => p.blobRef));
      throw outage.error;
    }
    // A target met for the first time gets its gate set before its tasks can be claimed (its slow start).
    const preparing = this.deps.handOff?.prepare?.(valid.map((p) => p.task));
    if (preparing !== undefined) await preparing;
    // Tasks due at once go in already leased to the local engine, as many as it has room for.
    const grant = this.#lease(valid, now);
    let inserted;
    try {
      inserted = await this.deps.batcher.submit(valid.map((p) => p.task));
    } catch (error) {
      this.deps.handOff?.giveBack(grant);
      await this.#dropBlobs(valid.map((p) => p.blobRef));
      throw storeFailure(error, this.deps.store.kind, 'enqueue');
    }
    const adopted = valid.flatMap((p, i) => (p.task.status === 'IN_FLIGHT' && inserted[i]?.kind === 'inserted' ? [p.task] : []));
    if (grant > 0) {
      this.deps.handOff?.adopt(adopted);
      this.deps.handOff?.giveBack(grant - adopted.length);
    }
    const results: BatchEntryResult[] = [];
    let v = 0;
    let waiting = false;
    const orphans: (string | null)[] = [];
    for (const p of prepared) {
      if ('error' in p) {
        results.push({ kind: 'error', error: p.error });
        continue;
      }
      const outcome = inserted[v++];
      if (outcome === undefined) throw new Error('the batcher returned fewer results than tasks');
      if (outcome.kind === 'inserted') {
        waiting ||= outcome.task.status === 'PENDING';
        results.push({ kind: 'created', task: outcome.task });
        continue;
      }
      orphans.push(p.blobRef);
      results.push(
        outcome.task.requestHash === p.task.requestHash
          ? { kind: 'replayed', task: outcome.task }
          : { kind: 'error', error: keyReused(p.task.idempotencyKey, outcome.task.taskId) },
      );
    }
    // A handed-off task needs no claim; a task left waiting does, now or at its due time.
    if (waiting) this.deps.wake();
    await this.#dropBlobs(orphans);
    return results;
  }

  /** Leases the due-now tasks among `valid` to the local engine, as many as it grants; returns how many it granted. */
  #lease(valid: { task: RetryTask }[], now: number): number {
    const handOff = this.deps.handOff;
    if (handOff === undefined) return 0;
    const due = valid.filter((p) => p.task.nextAttemptAt !== null && p.task.nextAttemptAt <= now);
    if (due.length === 0) return 0;
    const grant = handOff.reserve(due.map((p) => p.task));
    for (const i of grant.indices) {
      const p = due[i] as { task: RetryTask };
      p.task = leasedTo(p.task, grant, now);
    }
    return grant.indices.length;
  }

  /**
   * One entry: its task, or the error it gets. Decided in place, without a promise, in the common case: a policy
   * already known, a target given by address, nothing to seal, no body for the blob store. Anything else is
   * decided by {@link #prepareLater}, which asks the store, the resolver or the blob store; both decide alike.
   */
  #prepare(tenantId: string, input: unknown, path: string, now: number, traceContext: string | null): Prepared | Promise<Prepared> {
    try {
      const parsed = parseEnqueueInput(input, path);
      if (!parsed.ok) return { error: RetrydError.validation(parsed.errors) };
      let request = parsed.value;
      const { policies, guard, secrets, inlineBodyLimit } = this.deps;
      const verdict = guard.checkNow(request.targetUrl);
      let ceilings: ResolvedCeilings | undefined;
      if (request.policy !== null) {
        ceilings = this.deps.ceilings.cached(tenantId);
        if (ceilings === undefined) return this.#prepareLater(tenantId, request, path, now, traceContext);
        const ceiled = withinTenantCeilings(request, ceilings, path);
        if ('error' in ceiled) return ceiled;
        request = ceiled.request;
      }
      const quick =
        verdict !== undefined &&
        (request.policyId === null || policies.isKnown(tenantId, request.policyId)) &&
        request.bodyRef === null &&
        !secrets.needsProtection(request) &&
        (request.body === null || Buffer.byteLength(request.body) <= inlineBodyLimit);
      if (!quick) return this.#prepareLater(tenantId, request, path, now, traceContext);
      if (!verdict.ok) return { error: targetRefused(verdict, `${path}targetUrl`) };
      const task = this.#taskOf(tenantId, this.deps.newId(), request, request.headers, request.body, null, now, traceContext);
      return { task, blobRef: null };
    } catch (error) {
      return { error: storeFailure(error, this.deps.store.kind, 'enqueue') };
    }
  }

  async #prepareLater(tenantId: string, request: ParsedEnqueue, path: string, now: number, traceContext: string | null): Promise<Prepared> {
    try {
      return await this.#build(tenantId, request, path, now, traceContext);
    } catch (error) {
      return { error: storeFailure(error, this.deps.store.kind, 'enqueue') };
    }
  }

  async #build(tenantId: string, given: ParsedEnqueue, path: string, now: number, traceContext: string | null): Promise<Prepared> {
    let request = given;
    if (request.policy !== null) {
      const ceiled = withinTenantCeilings(request, await this.deps.ceilings.resolve(tenantId), path);
      if ('error' in ceiled) return ceiled;
      request = ceiled.request;
    }
    if (request.policyId !== null && !(await this.deps.policies.exists(tenantId, request.policyId))) {
      const field = `${path}policyId`;
      const rule = 'the id of a registered policy (see GET /retry-policies)';
      return { error: RetrydError.validation([{ field, rule, message: `${field} must be ${rule}; ${request.policyId} is not registered` }]) };
    }
    const verdict = await this.deps.guard.check(request.targetUrl);
    if (!verdict.ok) return { error: targetRefused(verdict, `${path}targetUrl`) };
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
      const data = body;
      blobRef = await callStore('blob', 'store the body', () => this.deps.blobs.put(tenantId, taskId, data));
      body = null;
    }
    const task = this.#taskOf(tenantId, taskId, request, secured.value.headers, body, adopted?.ref ?? blobRef, now, traceContext);
    return { task, blobRef };
  }

  /** The new task of a checked request: its headers and body as they are stored, its body's ref if it has one. */
  #taskOf(
    tenantId: string,
    taskId: string,
    request: ParsedEnqueue,
    headers: RetryTask['headers'],
    body: string | null,
    bodyRef: string | null,
    now: number,
    traceContext: string | null,
  ): RetryTask {
    return {
      tenantId,
      taskId,
      idempotencyKey: request.idempotencyKey ?? this.deps.newId(),
      requestHash: request.requestHash,
      targetUrl: request.targetUrl.href,
      targetKey: targetKeyOf(request.targetUrl),
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
    };
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

  /** Removes blobs no task refers to (their task was a duplicate, or the write failed). Best effort. */
  async #dropBlobs(refs: readonly (string | null)[]): Promise<void> {
    await Promise.all(refs.map((ref) => (ref === null ? undefined : this.deps.blobs.delete(ref).catch(() => undefined))));
  }
}

/** When the first attempt is due. An absolute time in the past means now, so it does not jump the queue. */
function dueAt(first: FirstAttempt, now: number): number {
  if ('delayMs' in first) return now + first.delayMs;
  if ('notBefore' in first) return Math.max(now, first.notBefore);
  return now;
}

/** The error of a refused target, naming `field`: 503 when the lookup failed for now, else 400 with the rule. */
function targetRefused(verdict: Exclude<TargetVerdict, { ok: true }>, field: string): RetrydError {
  if (verdict.kind === 'lookup_failed') return new RetrydError('TARGET_LOOKUP_FAILED', `${field}: ${verdict.detail}`);
  const rule = 'a public address, or one covered by --allow-targets';
  return new RetrydError('TARGET_NOT_ALLOWED', `${field} is not allowed: ${verdict.detail}`, [
    { field, rule, message: `${field} must be ${rule}: ${verdict.detail}` },
  ]);
}

function keyReused(key: string, taskId: string): RetrydError {
  return new RetrydError(
    'IDEMPOTENCY_KEY_REUSED',
    `idempotency key ${JSON.stringify(key)} already belongs to task ${taskId}, created by a different request; ` +
      'send the same request to get that task back, or use a new key for a new task',
  );
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
