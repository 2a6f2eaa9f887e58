import type { RedisClient } from './connection.js';
import type { Page, StoredPolicy } from '../../domain/task.js';
import type { PageRequest, PutPolicyResult, TargetState } from '../../store/store.js';
import { decodeCursor, encodeCursor } from '../../store/cursor.js';
import { execAll } from './fan-out.js';
import type { PartitionKeys } from './keys.js';
import { runScript } from './scripts.js';
import { decodePolicy } from './task-codec.js';

// Named policies (`policy:<id>` hashes indexed by the `policies` set) and per-target state (`target:<key>`
// hashes) of one partition.

/** `create` inserts only a free id; `replace` changes a stored one, keeping `createdAt`, raising `version`. */
export async function putPolicy(
  client: RedisClient,
  keys: PartitionKeys,
  policy: StoredPolicy,
  mode: 'create' | 'replace',
): Promise<PutPolicyResult> {
  const callback = policy.callback === null ? '' : JSON.stringify(policy.callback);
  const args = [mode, policy.policyId, JSON.stringify(policy.policy), String(policy.createdAt), String(policy.updatedAt), policy.version, callback];
  const reply = (await runScript(client, 'putPolicy', [keys.policy(policy.policyId), keys.policies], args)) as [string, string[]?];
  const stored = () => decodePolicy(policy.tenantId, policy.policyId, reply[1] ?? []);
  if (reply[0] === 'created') return { kind: 'created', policy };
  if (reply[0] === 'exists') return { kind: 'exists', policy: stored() };
  if (reply[0] === 'replaced') return { kind: 'replaced', policy: stored() };
  return { kind: 'not_found' };
}

export async function getPolicy(client: RedisClient, keys: PartitionKeys, tenantId: string, policyId: string): Promise<StoredPolicy | undefined> {
  const flat = (await client.call('HGETALL', keys.policy(policyId))) as string[];
  return flat.length === 0 ? undefined : decodePolicy(tenantId, policyId, flat);
}

/** A page in policy id order: the ids from the `policies` set (BYLEX), then their hashes in one pipeline. */
export async function listPolicies(client: RedisClient, keys: PartitionKeys, tenantId: string, page: PageRequest): Promise<Page<StoredPolicy>> {
  const start = page.cursor === undefined ? '-' : `(${decodeCursor('policies', page.cursor, 's')[0] as string}`;
  const ids = await client.zrange(keys.policies, start, '+', 'BYLEX', 'LIMIT', 0, page.limit + 1);
  const shown = ids.slice(0, page.limit);
  const pipeline = client.pipeline();
  for (const id of shown) pipeline.call('HGETALL', keys.policy(id));
  const hashes = (await execAll(pipeline)) as string[][];
  const items = shown.map((id, i) => decodePolicy(tenantId, id, hashes[i] ?? []));
  const last = shown[shown.length - 1];
  return ids.length > page.limit && last !== undefined ? { items, nextCursor: encodeCursor('policies', [last]) } : { items };
}

export async function getTargetState(client: RedisClient, keys: PartitionKeys, key: string): Promise<TargetState | undefined> {
  const [value, version, updated] = await client.hmget(keys.target(key), 'value', 'version', 'updated');
  if (value === null || value === undefined) return undefined;
  return { value, version: Number(version), updatedAt: Number(updated) };
}

/** Writes over `expectedVersion` (0 = absent) only; false on a lost race. */
export async function putTargetState(
  client: RedisClient,
  keys: PartitionKeys,
  key: string,
  expectedVersion: number,
  value: string,
  now: number,
): Promise<boolean> {
  return (await runScript(client, 'putTargetState', [keys.target(key)], [expectedVersion, value, String(now)])) === 1;
}
