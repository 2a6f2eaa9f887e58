import { Command, Option } from 'commander';
import { TENANT_ID_PATTERN } from '../access/api-keys.js';
import { RetrydError } from '../domain/errors.js';
import { RetentionAdmin } from '../retention/retention-admin.js';
import { RetentionBook } from '../retention/retention-book.js';
import { DEFAULT_RETENTION, durationText, type RetentionOverride } from '../retention/retention-periods.js';
import { MAX_POLICY_MS } from '@retryd/core';
import { parseCeilings, TENANT_CEILINGS_KEY, type PolicyCeilings } from '../policies/policy-ceilings.js';
import { parseIntegerOption, parsePeriodOption, parseRetentionOption } from '../service/retryd-config.js';
import type { TenantLimits } from '../store/store.js';
import { storeOption, withStore } from './with-store.js';

/**
 * A limit as the command line gives it: a positive integer, or `none` (the service-wide default applies), kept as the
 * word: commander turns a parser's null into an empty string (which the store then refused).
 */
function limitOf(flag: string): (value: string) => number | 'none' {
  return (value) => (value === 'none' ? 'none' : parseIntegerOption(flag, value, 1));
}

/** A limit flag's value for the store: unchanged (undefined), none (null) or the number. */
const limitValue = (flag: number | 'none' | undefined, current: number | null) => (flag === undefined ? current : flag === 'none' ? null : flag);

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
      async (tenantId: string, flags: { requestsPerSecond?: number | 'none'; maxPendingTasks?: number | 'none'; clear?: boolean; store: string }) => {
        await withStore(flags.store, async (store) => {
          if (!TENANT_ID_PATTERN.test(tenantId)) throw new RetrydError('VALIDATION_FAILED', `tenant must match ${TENANT_ID_PATTERN.source}, got ${JSON.stringify(tenantId)}`);
          const current = await store.access.getTenantLimits(tenantId);
          let limits: TenantLimits | null = current ?? null;
          if (flags.clear === true) limits = null;
          else if (flags.requestsPerSecond !== undefined || flags.maxPendingTasks !== undefined) {
            limits = {
              requestsPerSecond: limitValue(flags.requestsPerSecond, current?.requestsPerSecond ?? null),
              maxPendingTasks: limitValue(flags.maxPendingTasks, current?.maxPendingTasks ?? null),
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

/**
 * A retention period as the command line gives it (`7d`, `12h`, `90m`, `60s`, ms), or `none` (inherit the service's),
 * kept as the word: commander turns a parser's null into an empty string.
 */
function periodOf(flag: string): (value: string) => number | 'none' {
  return (value) => (value === 'none' ? 'none' : parseRetentionOption(flag, value));
}

const RETENTION_FLAGS = [
  ['succeededMs', '--succeeded', 'SUCCEEDED tasks'],
  ['deadLettersMs', '--dead-letters', 'dead letters (FAILED, EXHAUSTED)'],
  ['cancelledMs', '--cancelled', 'CANCELLED tasks'],
] as const;

/** `retryd tenants retention <tenant>`: shows or sets how long a tenant's finished tasks are kept. */
function retentionCommand(): Command {
  const command = new Command('retention')
    .description(
      "Show how long a tenant's finished tasks are kept, or set its own periods (each instance reads them within 5 s; tasks that end from then on are kept that long). A period it has no own value for is retryd serve's --retention-*; a registered policy's own (PUT /retry-policies/{id}/retention) wins over both",
    )
    .argument('<tenant>', 'the tenant id');
  for (const [, flag, what] of RETENTION_FLAGS) {
    command.addOption(new Option(`${flag} <period>`, `how long ${what} are kept: 7d, 12h, 90m, 60s or ms (1m to 3650d); none: the service's`).argParser(periodOf(flag)));
  }
  return command
    .option('--clear', 'remove every period of its own')
    .addOption(storeOption())
    .action(async (tenantId: string, flags: { succeeded?: number | 'none'; deadLetters?: number | 'none'; cancelled?: number | 'none'; clear?: boolean; store: string }) => {
      await withStore(flags.store, async (store) => {
        if (!TENANT_ID_PATTERN.test(tenantId)) throw new RetrydError('VALIDATION_FAILED', `tenant must match ${TENANT_ID_PATTERN.source}, got ${JSON.stringify(tenantId)}`);
        const book = new RetentionBook({ state: store.targetState, defaults: DEFAULT_RETENTION, now: Date.now });
        const admin = new RetentionAdmin({ state: store.targetState, book, policyExists: async () => true, now: Date.now });
        const given = { succeededMs: flags.succeeded, deadLettersMs: flags.deadLetters, cancelledMs: flags.cancelled };
        let view = await admin.tenant(tenantId);
        if (flags.clear === true) {
          view = await admin.setTenant(tenantId, null);
        } else if (Object.values(given).some((v) => v !== undefined)) {
          const own: RetentionOverride = { ...view.own };
          for (const [field] of RETENTION_FLAGS) {
            const value = given[field];
            if (value === 'none') delete own[field];
            else if (value !== undefined) own[field] = value;
          }
          view = await admin.setTenant(tenantId, own);
        }
        console.log(`tenant ${tenantId}`);
        for (const [field, , what] of RETENTION_FLAGS) {
          const own = view.own[field];
          console.log(`  ${what}: ${own === undefined ? "the service's (retryd serve --retention-*; 7d, 30d, 7d unless it says otherwise)" : durationText(own)}`);
        }
      });
    });
}

const CEILING_FLAGS = [
  ['maxAttempts', '--max-attempts', 'attempts', (flag: string, v: string) => parseIntegerOption(flag, v, 1, 10_000)],
  ['totalBudgetMs', '--max-budget', 'total budget (and the budget of a policy that sets none)', (flag: string, v: string) => parsePeriodOption(flag, v, 1, MAX_POLICY_MS)],
  ['maxDelayMs', '--max-delay', 'delay', (flag: string, v: string) => parsePeriodOption(flag, v, 1, MAX_POLICY_MS)],
] as const;

/** `retryd tenants ceilings <tenant>`: shows or sets the most a tenant's policies may ask for. */
function ceilingsCommand(): Command {
  const command = new Command('ceilings')
    .description(
      "Show the most a tenant's policies (registered or inline) may ask for, or set its own ceilings (each instance reads them within 5 s); a ceiling it has none of its own for is retryd serve's --max-policy-*. A policy over one is refused from then on, naming the field and the ceiling; one registered before keeps its values",
    )
    .argument('<tenant>', 'the tenant id');
  for (const [, flag, what, parse] of CEILING_FLAGS) {
    // `none` is kept as the word: commander turns a parser's null into an empty string.
    command.addOption(new Option(`${flag} <value>`, `the most ${what}; none: the service's`).argParser((v: string) => (v === 'none' ? 'none' : parse(flag, v))));
  }
  return command
    .option('--clear', 'remove every ceiling of its own')
    .addOption(storeOption())
    .action(async (tenantId: string, flags: { maxAttempts?: number | 'none'; maxBudget?: number | 'none'; maxDelay?: number | 'none'; clear?: boolean; store: string }) => {
      await withStore(flags.store, async (store) => {
        if (!TENANT_ID_PATTERN.test(tenantId)) throw new RetrydError('VALIDATION_FAILED', `tenant must match ${TENANT_ID_PATTERN.source}, got ${JSON.stringify(tenantId)}`);
        const given = { maxAttempts: flags.maxAttempts, totalBudgetMs: flags.maxBudget, maxDelayMs: flags.maxDelay };
        let own: Partial<PolicyCeilings> = {};
        for (let race = 0; race < 8; race++) {
          const stored = await store.targetState.getTargetState(tenantId, TENANT_CEILINGS_KEY);
          own = (stored === undefined ? undefined : parseCeilings(stored.value)) ?? {};
          if (flags.clear !== true && Object.values(given).every((v) => v === undefined)) break;
          if (flags.clear === true) own = {};
          for (const [field] of CEILING_FLAGS) {
            const value = given[field];
            if (value === 'none') delete own[field];
            else if (value !== undefined) own[field] = value;
          }
          if (await store.targetState.putTargetState(tenantId, TENANT_CEILINGS_KEY, stored?.version ?? 0, JSON.stringify(own), Date.now())) break;
        }
        console.log(`tenant ${tenantId}`);
        for (const [field, , what] of CEILING_FLAGS) {
          const value = own[field];
          const shown =
            value === undefined || value === null ? "the service's (retryd serve --max-policy-*; none unless it says)" : field === 'maxAttempts' ? String(value) : durationText(value);
          console.log(`  most ${what}: ${shown}`);
        }
      });
    });
}

/** `retryd tenants`: per-tenant settings, run against the store by an operator. */
export function tenantsCommand(): Command {
  return new Command('tenants').description("Manage tenants' own settings directly in the store").addCommand(limitsCommand()).addCommand(retentionCommand()).addCommand(ceilingsCommand());
}
