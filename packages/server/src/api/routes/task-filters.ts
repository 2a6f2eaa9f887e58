import type { TaskStatus } from '@retryd/core';
import { TARGET_KEY_MAX_LENGTH } from '../target-schemas.js';
import { POLICY_ID_SCHEMA } from '../../policies/policy-id.js';
import { targetRefOf } from './target-routes.js';

/** The `targetKey` filter of a listing or a bulk action. */
export const TARGET_KEY_FILTER = {
  type: 'string',
  minLength: 1,
  maxLength: TARGET_KEY_MAX_LENGTH,
  description: "Only the tasks of this target: an origin exactly as tasks record it, e.g. https://api.example.com. Pages may be shorter than limit, even empty, with a nextCursor (no index leads by target: a page examines a bounded number of tasks).",
} as const;

/** The `policyId` filter of a listing or a bulk action. */
export const POLICY_ID_FILTER = {
  ...POLICY_ID_SCHEMA,
  description: 'Only the tasks of this named policy. On a Redis store pages may be shorter than limit, even empty, with a nextCursor (no index leads by policy there: a page examines a bounded number of tasks).',
} as const;

/** The store's filter of a query or bulk action (dead letters, live tasks): the target key checked as the target routes check it. */
export function taskFilterOf<S extends TaskStatus>(tenantId: string, query: { status?: S; policyId?: string; targetKey?: string }): { status?: S; policyId?: string; targetKey?: string } {
  const { status, policyId, targetKey } = query;
  return {
    ...(status === undefined ? {} : { status }),
    ...(policyId === undefined ? {} : { policyId }),
    ...(targetKey === undefined ? {} : { targetKey: targetRefOf(tenantId, targetKey).targetKey }),
  };
}
