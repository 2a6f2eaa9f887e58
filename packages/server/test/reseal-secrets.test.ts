import { describe, expect, it } from 'vitest';
import type { RetryTask } from '../src/domain/task.js';
import { parseKeyring } from '../src/secrets/encryption-keys.js';
import { resealTaskSecrets, resealValue } from '../src/secrets/reseal-secrets.js';
import { openSecret, sealedKeyId, sealSecret } from '../src/secrets/secret-cipher.js';
import { makeTask } from './fixtures/tasks.js';

// The pure part of a key rotation: which values a task keeps sealed, which are re-sealed under the primary key, and
// what is left alone. No store: the stores' part is in the conformance suite, the whole in keys-rotate-encryption.

const keyA = Buffer.alloc(32, 1).toString('base64');
const keyB = Buffer.alloc(32, 2).toString('base64');
const keyC = Buffer.alloc(32, 3).toString('base64');
const onlyA = parseKeyring(`a:${keyA}`);
const bThenA = parseKeyring(`b:${keyB},a:${keyA}`);
const onlyC = parseKeyring(`c:${keyC}`);

const taskId = '0190a1b2-0000-7000-8000-000000000001';
const at = (purpose: string) => ({ tenantId: 'default', taskId, purpose });

/** A task as the enqueuer stores it under `ring`: two credential headers, a reference, a plain header, a sensitive body. */
function storedTask(ring = onlyA, overrides: Partial<RetryTask> = {}): RetryTask {
  return makeTask({
    taskId,
    headers: {
      'content-type': 'application/json',
      Authorization: { enc: sealSecret(ring, 'Bearer s3cret', at('header:authorization')) },
      'X-Ref': { ref: '{{secret:API}}' },
      'X-Api-Key': { enc: sealSecret(ring, 'k3y', at('header:x-api-key')) },
    },
    body: sealSecret(ring, '{"card":"4111"}', at('body')),
    sensitiveBody: true,
    ...overrides,
  });
}

describe('resealValue', () => {
  it('re-seals a value under the primary key, bound to the same tenant, task and purpose', () => {
    const sealed = sealSecret(onlyA, 'Bearer s3cret', at('header:authorization'));
    const outcome = resealValue(bThenA, sealed, at('header:authorization'));
    if (outcome.kind !== 'resealed') throw new Error(`expected a re-seal, got ${outcome.kind}`);
    expect(sealedKeyId(outcome.sealed)).toBe('b');
    expect(openSecret(parseKeyring(`b:${keyB}`), outcome.sealed, at('header:authorization'))).toBe('Bearer s3cret');
    expect(() => openSecret(bThenA, outcome.sealed, at('header:cookie'))).toThrow();
  });

  it('leaves a value sealed under the primary key as it is', () => {
    const sealed = sealSecret(bThenA, 'x', at('body'));
    expect(resealValue(bThenA, sealed, at('body'))).toEqual({ kind: 'current' });
  });

  it('fails a value it cannot open, naming the key id and never the value', () => {
    const sealed = sealSecret(onlyC, 'Bearer s3cret', at('header:authorization'));
    expect(resealValue(bThenA, sealed, at('header:authorization'))).toEqual({
      kind: 'failed',
      reason: 'the header:authorization secret is sealed with key c, which RETRYD_ENCRYPTION_KEY does not list',
    });
    // Copied from another task: its key is listed, but it is bound elsewhere.
    const elsewhere = sealSecret(onlyA, 'Bearer s3cret', { ...at('header:authorization'), taskId: 'another' });
    expect(resealValue(bThenA, elsewhere, at('header:authorization'))).toEqual({
      kind: 'failed',
      reason: 'the header:authorization secret does not decrypt with key a for this task',
    });
    expect(resealValue(bThenA, 'not sealed', at('body'))).toEqual({ kind: 'failed', reason: 'the body secret is not a v1 sealed value' });
  });
});

describe('resealTaskSecrets', () => {
  it('re-seals every sealed header and a sensitive inline body, and leaves references and plain values alone', () => {
    const task = storedTask();
    const { next, changed, values } = resealTaskSecrets(bThenA, task);
    expect(changed).toBe(true);
    expect(values.map((v) => [v.field, v.outcome.kind])).toEqual([
      ['headers.Authorization', 'resealed'],
      ['headers.X-Api-Key', 'resealed'],
      ['body', 'resealed'],
    ]);
    // Names keep their order and their case; what is not sealed is the same value.
    expect(Object.keys(next.headers)).toEqual(Object.keys(task.headers));
    expect(next.headers['content-type']).toBe('application/json');
    expect(next.headers['X-Ref']).toBe(task.headers['X-Ref']);
    const onlyB = parseKeyring(`b:${keyB}`);
    expect(openSecret(onlyB, (next.headers['Authorization'] as { enc: string }).enc, at('header:authorization'))).toBe('Bearer s3cret');
    expect(openSecret(onlyB, (next.headers['X-Api-Key'] as { enc: string }).enc, at('header:x-api-key'))).toBe('k3y');
    expect(openSecret(onlyB, next.body as string, at('body'))).toBe('{"card":"4111"}');
    // The stored headers are not changed in place (a store may share them, frozen, between tasks).
    expect(sealedKeyId((task.headers['Authorization'] as { enc: string }).enc)).toBe('a');
  });

  it('changes nothing for a task already under the primary key, and gives back the same objects', () => {
    const task = storedTask(bThenA);
    const reseal = resealTaskSecrets(bThenA, task);
    expect(reseal.changed).toBe(false);
    expect(reseal.next.headers).toBe(task.headers);
    expect(reseal.next.body).toBe(task.body);
    expect(reseal.values.map((v) => v.outcome.kind)).toEqual(['current', 'current', 'current']);
  });

  it('re-seals what it can and reports the rest, which stays as it was', () => {
    const task = storedTask(onlyA, {
      headers: { Authorization: { enc: sealSecret(onlyC, 'lost', at('header:authorization')) }, Cookie: { enc: sealSecret(onlyA, 'c=1', at('header:cookie')) } },
    });
    const { next, changed, values } = resealTaskSecrets(bThenA, task);
    expect(changed).toBe(true);
    expect(values.map((v) => [v.field, v.outcome.kind])).toEqual([
      ['headers.Authorization', 'failed'],
      ['headers.Cookie', 'resealed'],
      ['body', 'resealed'],
    ]);
    expect(next.headers['Authorization']).toBe(task.headers['Authorization']);
    expect(JSON.stringify(values)).not.toContain('lost');
  });

  it('finds nothing to re-seal in a task without sealed values, nor in a body that is not marked sensitive', () => {
    const plain = makeTask({ headers: { 'content-type': 'text/plain', Authorization: { ref: 'Bearer {{secret:API}}' } }, body: 'v1:a:not-a-secret' });
    expect(resealTaskSecrets(bThenA, plain)).toEqual({ next: { headers: plain.headers, body: plain.body }, changed: false, values: [] });
    // A sensitive body kept in the blob store is not in the row: the caller loads it and uses resealValue.
    const inBlob = storedTask(onlyA, { headers: {}, body: null, bodyRef: 'default/x' });
    expect(resealTaskSecrets(bThenA, inBlob).values).toEqual([]);
  });
});
