import { Command, Option } from 'commander';
import { TENANT_ID_PATTERN } from '../access/api-keys.js';
import { RetrydError } from '../domain/errors.js';
import { parseIntegerOption } from '../service/retryd-config.js';
import type { TenantLimits } from '../store/store.js';
import { storeOption, withStore } from './with-store.js';

/** A limit as the command line gives it: a positive integer, or `none` (the service-wide default applies). */
function limitOf(flag: string): (value: string) => number | null {
  return (value) => (value === 'none' ? null : parseIntegerOption(flag, value, 1));
}

const shown = (value: number | null) => (value === null ? 'none (the service-wide default, if any)' : String(value));

/** `retryd tenants limits <tenant>`: shows or sets a tenant's own limits on the API. */
function limitsCommand(): Command {
  return new Command('limits')
    .description("Show a tenant's own API limits, or set them (each instance reads them within 5 s); a limit it has no own value for is the service-wide default of retryd serve")
    .argument('<tenant>', 'the tenant id')
    .addOption(new Option('--requests-per-second <n>', 'most API requests per second, per instance; none: the default').argParser(limitOf('--requests-per-second')))
    .addOption(new Option('--max-pending-tasks <n>', 'most tasks pending or in flight; none: the default').argParser(limitOf('--max-pending-tasks')))
    .option('--clear', 'remove every limit of its own')
    .addOption(storeOption())
    .action(
      async (tenantId: string, flags: { requestsPerSecond?: number | null; maxPendingTasks?: number | null; clear?: boolean; store: string }) => {
        await withStore(flags.store, async (store) => {
          if (!TENANT_ID_PATTERN.test(tenantId)) throw new RetrydError('VALIDATION_FAILED', `tenant must match ${TENANT_ID_PATTERN.source}, got ${JSON.stringify(tenantId)}`);
          const current = await store.access.getTenantLimits(tenantId);
          let limits: TenantLimits | null = current ?? null;
          if (flags.clear === true) limits = null;
          else if (flags.requestsPerSecond !== undefined || flags.maxPendingTasks !== undefined) {
            limits = {
              requestsPerSecond: flags.requestsPerSecond === undefined ? (current?.requestsPerSecond ?? null) : flags.requestsPerSecond,
              maxPendingTasks: flags.maxPendingTasks === undefined ? (current?.maxPendingTasks ?? null) : flags.maxPendingTasks,
            };
          } else {
            console.log(`tenant ${tenantId}\n  requests per second: ${shown(current?.requestsPerSecond ?? null)}\n  max pending tasks: ${shown(current?.maxPendingTasks ?? null)}`);
            return;
          }
          const empty = limits === null || (limits.requestsPerSecond === null && limits.maxPendingTasks === null);
          await store.access.putTenantLimits(tenantId, empty ? null : limits, Date.now());
          console.log(`tenant ${tenantId}\n  requests per second: ${shown(limits?.requestsPerSecond ?? null)}\n  max pending tasks: ${shown(limits?.maxPendingTasks ?? null)}`);
        });
      },
    );
}

/** `retryd tenants`: per-tenant settings, run against the store by an operator. */
export function tenantsCommand(): Command {
  return new Command('tenants').description("Manage tenants' own settings directly in the store").addCommand(limitsCommand());
}
