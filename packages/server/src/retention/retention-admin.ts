import { RetrydError } from '../domain/errors.js';
import type { TargetStateStore } from '../store/store.js';
import {
  policyRetentionKey,
  readRetentionOverride,
  TENANT_RETENTION_KEY,
  writeRetentionOverride,
  type RetentionBook,
} from './retention-book.js';
import { checkRetentionOverride, RETENTION_FIELDS, type RetentionOverride, type RetentionPeriods } from './retention-periods.js';

/** Where a period in force comes from: the service's flags, the tenant's own, or the policy's own. */
export type RetentionSource = 'service' | 'tenant' | 'policy';

/** A retention as the API shows it: the periods in force, what this level sets itself, and where each period comes from. */
export interface RetentionView extends RetentionPeriods {
  /** The periods this level (the tenant, or the policy) sets itself; the others it inherits. */
  own: RetentionOverride;
  from: Record<keyof RetentionPeriods, RetentionSource>;
}

/** Lost races in a row after which a write gives up (each one means another writer just succeeded). */
const MAX_RACES = 8;

/** Options of {@link RetentionAdmin}. */
export interface RetentionAdminOptions {
  state: Pick<TargetStateStore, 'getTargetState' | 'putTargetState'>;
  /** The book the engine and the API decide with: told of every write, so that this instance uses it at once. */
  book: RetentionBook;
  /** Whether a registered policy exists (a policy's retention is refused for one that does not). */
  policyExists: (tenantId: string, policyId: string) => Promise<boolean>;
  now: () => number;
}

/**
 * Reads and sets retention overrides: a tenant's own (set by an operator, `retryd tenants retention`) and a registered
 * policy's own (`PUT /retry-policies/{policyId}/retention`). Every instance's {@link RetentionBook} sees a change within
 * its cache time; this instance's at once.
 */
export class RetentionAdmin {
  constructor(private readonly options: RetentionAdminOptions) {}

  /** The tenant's retention: its own periods over the service's. */
  async tenant(tenantId: string): Promise<RetentionView> {
    const { override } = await readRetentionOverride(this.options.state, tenantId, TENANT_RETENTION_KEY);
    return viewOf(this.options.book.defaults, override, undefined);
  }

  /** A registered policy's retention: its own periods over its tenant's, over the service's. 404 for no such policy. */
  async policy(tenantId: string, policyId: string): Promise<RetentionView> {
    await this.mustExist(tenantId, policyId);
    const [tenant, policy] = await Promise.all([
      readRetentionOverride(this.options.state, tenantId, TENANT_RETENTION_KEY),
      readRetentionOverride(this.options.state, tenantId, policyRetentionKey(policyId)),
    ]);
    return viewOf(this.options.book.defaults, tenant.override, policy.override ?? {});
  }

  /**
   * Replaces a registered policy's own periods with `input` (an object of any of `succeededMs`, `deadLettersMs`,
   * `cancelledMs`; `{}` removes them all). 400 naming the field for a period that breaks its rule; 404 for no policy.
   * Applies to tasks that end from then on: a task keeps the `expiresAt` it ended with.
   */
  async setPolicy(tenantId: string, policyId: string, input: unknown): Promise<RetentionView> {
    const check = checkRetentionOverride(input);
    if (!check.ok) throw RetrydError.validation(check.errors);
    await this.mustExist(tenantId, policyId);
    await this.write(tenantId, policyRetentionKey(policyId), check.override);
    return this.policy(tenantId, policyId);
  }

  /** Replaces a tenant's own periods (`{}` or null removes them); as {@link RetentionAdmin.setPolicy}, for a tenant. */
  async setTenant(tenantId: string, override: RetentionOverride | null): Promise<RetentionView> {
    if (override !== null) {
      const check = checkRetentionOverride(override, 'retention');
      if (!check.ok) throw RetrydError.validation(check.errors);
    }
    await this.write(tenantId, TENANT_RETENTION_KEY, override ?? {});
    return this.tenant(tenantId);
  }

  private async write(tenantId: string, key: string, override: RetentionOverride): Promise<void> {
    for (let race = 0; race < MAX_RACES; race++) {
      const { version } = await readRetentionOverride(this.options.state, tenantId, key);
      if (await writeRetentionOverride(this.options.state, tenantId, key, version, override, this.options.now())) {
        this.options.book.invalidate(tenantId, key);
        return;
      }
    }
    throw new RetrydError('INTERNAL', `the retention ${key} of tenant ${tenantId} changed ${MAX_RACES} times while being written; try again`);
  }

  private async mustExist(tenantId: string, policyId: string): Promise<void> {
    if (!(await this.options.policyExists(tenantId, policyId))) throw new RetrydError('NOT_FOUND', `no policy ${policyId} is registered`);
  }
}

/** The periods in force from the service's, the tenant's own and (for a policy's view) the policy's own. */
function viewOf(service: Readonly<RetentionPeriods>, tenant: RetentionOverride | undefined, policy: RetentionOverride | undefined): RetentionView {
  const view = { ...service, own: (policy ?? tenant ?? {}) as RetentionOverride, from: {} as Record<keyof RetentionPeriods, RetentionSource> };
  for (const field of RETENTION_FIELDS) {
    view.from[field] = 'service';
    const fromTenant = tenant?.[field];
    if (fromTenant !== undefined) {
      view[field] = fromTenant;
      view.from[field] = 'tenant';
    }
    const fromPolicy = policy?.[field];
    if (fromPolicy !== undefined) {
      view[field] = fromPolicy;
      view.from[field] = 'policy';
    }
  }
  return view;
}
