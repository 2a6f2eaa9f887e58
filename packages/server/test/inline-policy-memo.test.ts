import { describe, expect, it } from 'vitest';
import { parseEnqueueInput } from '../src/tasks/enqueue-input.js';
import { InlinePolicyMemo } from '../src/tasks/inline-policy-memo.js';

// The transactional enqueue's callers give every task of a batch one policy object; the memo checks it and writes its
// canonical text once. Nothing a task gets may depend on whether the memo was there.

const POLICY = Object.freeze({ maxAttempts: 5, backoffType: 'EXPONENTIAL', initialDelayMs: 1, multiplier: 2, maxDelayMs: 10, jitterType: 'FULL' });

const request = (n: number, policy: unknown) => ({
  targetUrl: `https://api.example.com/hooks/${n}`,
  method: 'POST',
  headers: { 'x-request': `r${n}` },
  body: { order: n },
  idempotencyKey: `k-${n}`,
  policy,
});

function parsedWith(memo: InlinePolicyMemo | undefined, input: unknown, path: string) {
  const parsed = parseEnqueueInput(input, path, memo);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed.value;
}

describe('InlinePolicyMemo', () => {
  it('gives entries sharing one policy object the policy and request hash each would get alone', () => {
    const memo = new InlinePolicyMemo();
    const other = { ...POLICY, maxAttempts: 7 };
    // Shared, then another object, then the first again: the one slot is replaced and refilled.
    const inputs = [request(1, POLICY), request(2, POLICY), request(3, other), request(4, POLICY)];
    inputs.forEach((input, i) => {
      const alone = parsedWith(undefined, input, `tasks[${i}].`);
      const shared = parsedWith(memo, input, `tasks[${i}].`);
      expect(shared.requestHash).toBe(alone.requestHash);
      expect(shared.policy).toEqual(alone.policy);
    });
    expect(parsedWith(memo, inputs[0], '').policy).toBe(parsedWith(memo, inputs[1], '').policy);
    expect(parsedWith(memo, inputs[2], '').requestHash).not.toBe(parsedWith(memo, request(3, POLICY), '').requestHash);
  });

  it('names the broken rule of a shared invalid policy at every entry that gives it', () => {
    const memo = new InlinePolicyMemo();
    const broken = { ...POLICY, maxAttempts: 0 };
    const fields = [0, 1].map((i) => {
      const parsed = parseEnqueueInput(request(i, broken), `tasks[${i}].`, memo);
      return parsed.ok ? [] : parsed.errors.map((e) => e.field);
    });
    expect(fields).toEqual([['tasks[0].policy.maxAttempts'], ['tasks[1].policy.maxAttempts']]);
  });

  it('writes the canonical text of a policy it did not check itself as canonicalJson does', () => {
    const memo = new InlinePolicyMemo();
    const checked = memo.validate(POLICY, 'policy');
    if (!checked.ok) throw new Error('POLICY is valid');
    const stranger = { ...checked.policy, maxAttempts: 9 };
    expect(memo.canonical(stranger)).toContain('"maxAttempts":9');
    expect(memo.canonical(checked.policy)).toBe(memo.canonical(checked.policy));
    expect(memo.canonical(checked.policy)).toContain('"maxAttempts":5');
  });
});
