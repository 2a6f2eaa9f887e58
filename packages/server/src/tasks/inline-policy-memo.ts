import { canonicalJson, validatePolicy, type PolicyValidation, type RetryPolicy } from '@retryd/core';

/**
 * The inline policy of one call's entries, checked and written out once when they give the very same object: an
 * application enqueuing a batch in its own transaction (`@retryd/server/pg`) passes one policy constant to every task,
 * and checking it, copying it and writing its canonical text for each task cost more than the rest of the task's
 * request hash. One slot: entries with objects of their own (each entry of a parsed HTTP body) miss at the cost of a
 * comparison.
 *
 * Made for one synchronous pass over a call's entries (`TaskPreparer.prepare`), and dropped after it. An object that
 * changes between two entries (a getter, or a body's `toJSON` changing it) keeps for the later entry what the first
 * one read: each task still stores the checked copy its hash is taken of, so a replay and a conflict are told apart
 * as without the memo.
 *
 * @example
 * ```ts
 * const memo = new InlinePolicyMemo();
 * const a = memo.validate(POLICY, 'tasks[0].policy'); // checked
 * const b = memo.validate(POLICY, 'tasks[1].policy'); // the same result, not checked again
 * ```
 */
export class InlinePolicyMemo {
  #input: object | undefined;
  #checked: (PolicyValidation & { ok: true }) | undefined;
  #text: string | undefined;

  /** `validatePolicy(input, path)`; for the object the last valid one was, that result again (its field names unused). */
  validate(input: unknown, path: string): PolicyValidation {
    if (input === this.#input && this.#checked !== undefined) return this.#checked;
    const checked = validatePolicy(input, path);
    // Only a valid policy is kept: each entry with an invalid one reports its own errors, named by its own path.
    if (checked.ok && typeof input === 'object' && input !== null) {
      this.#input = input;
      this.#checked = checked;
      this.#text = undefined;
    }
    return checked;
  }

  /** `canonicalJson(policy)`, written once for the policy {@link validate} last returned. */
  canonical(policy: RetryPolicy): string {
    if (policy !== this.#checked?.policy) return canonicalJson(policy);
    this.#text ??= canonicalJson(policy);
    return this.#text;
  }
}
