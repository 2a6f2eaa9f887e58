import { Command, Option } from 'commander';
import type { NamedPolicy as PolicyView, PolicyReplaceRequest } from '@retryd/client';
import { textTable } from '../terminal/text-table.js';
import { apiCommand, duration, iso, listCommand, listed, printListing, printOne, readJsonObject, timeTextOf, UsageError, withClient, type ApiFlags, type ListFlags, type TimeText } from './api-command.js';

function schedule(p: PolicyView): string {
  const growth = p.backoffType === 'EXPONENTIAL' ? ` ×${p.multiplier}` : '';
  return `${p.backoffType} ${duration(p.initialDelayMs)}${growth} ≤${duration(p.maxDelayMs)}, ${p.jitterType} jitter`;
}

function policyTable(policies: readonly PolicyView[], time: TimeText): string {
  const rows = policies.map((p) => [p.policyId, schedule(p), time(p.updatedAt), String(p.maxAttempts), p.totalBudgetMs === undefined ? '-' : duration(p.totalBudgetMs)]);
  return textTable(['policy', 'backoff', 'updated', 'attempts', 'budget'], rows, 3);
}

function policyText(p: PolicyView): string {
  const { policyId, createdAt, updatedAt, ...fields } = p;
  return [`policy:   ${policyId}`, `backoff:  ${schedule(p)}`, `created:  ${iso(createdAt)}`, `updated:  ${iso(updatedAt)}`, '', JSON.stringify(fields, null, 2)].join('\n');
}

function list(): Command {
  return listCommand('list', "List the tenant's named retry policies").action(async (flags: ListFlags) => {
    await withClient(flags, async (client) => {
      printListing(flags, await listed(client, flags, (page) => client.listPolicies(page)), 'policies', (policies) => policyTable(policies, timeTextOf(flags)));
    });
  });
}

function get(): Command {
  return apiCommand('get', 'Show a named retry policy')
    .argument('<policyId>')
    .action(async (policyId: string, flags: ApiFlags) => {
      await withClient(flags, async (client) => {
        const policy = await client.getPolicy(policyId);
        printOne(flags, policy, () => policyText(policy));
      });
    });
}

function put(): Command {
  return apiCommand('put', 'Create or replace a named retry policy from a JSON file; tasks use it from their next scheduling decision')
    .argument('<policyId>')
    .addOption(new Option('--file <path>', 'the policy as a JSON object (its fields, e.g. {"maxAttempts": 5, "backoffType": "EXPONENTIAL", …}); - reads stdin').makeOptionMandatory())
    .action(async (policyId: string, flags: ApiFlags & { file: string }) => {
      await withClient(flags, async (client) => {
        // What `policies get --json` prints can be edited and put back: its id and times are the view's, not fields.
        const { policyId: named, createdAt: _created, updatedAt: _updated, ...fields } = readJsonObject(flags.file);
        if (named !== undefined && named !== policyId) {
          throw new UsageError(`--file names policy ${JSON.stringify(named)}, not ${JSON.stringify(policyId)}: remove its policyId or put it under that id`);
        }
        // The service checks every field and names the one that breaks its rule.
        const answer = await client.putPolicy(policyId, fields as PolicyReplaceRequest);
        printOne(flags, answer.policy, () => `${answer.outcome} policy ${policyId}: ${schedule(answer.policy)}, at most ${answer.policy.maxAttempts} attempts`);
      });
    });
}

/** `retryd policies list|get|put`, through the HTTP API of a running service. */
export function policiesCommand(): Command {
  return new Command('policies')
    .description('Named retry policies of a running service, through its HTTP API (--url, --api-key)')
    .addCommand(list())
    .addCommand(get())
    .addCommand(put());
}
