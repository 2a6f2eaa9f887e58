import { createInterface } from 'node:readline';
import { Command, Option } from 'commander';
import { API_KEY_SCOPES, API_KEY_SCOPES_MEANING, ApiKeys } from '../access/api-keys.js';
import { DEFAULT_TENANT } from '../domain/task.js';
import type { ApiKeyRecord } from '../store/store.js';
import { textTable } from '../terminal/text-table.js';
import { storeOption, withStore } from './with-store.js';
import { ABSOLUTE_FLAG_MEANING, timeTextOf, UsageError } from './api-command.js';
import { API_KEY_RULE, parseApiKey } from '../access/api-key-token.js';
import { BOOTSTRAP_ADMIN_KEY_SHA256_VARIABLE, bootstrapHashOf } from '../service/bootstrap-admin-key.js';

const iso = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString());

/** `retryd keys create`: a new API key, printed alone on stdout (the only time it is shown). */
function createCommand(): Command {
  return new Command('create')
    .description('Create an API key; prints the key alone on stdout (the store keeps only its hash: it is never shown again)')
    .addOption(new Option('--tenant <id>', 'the tenant the key acts for').default(DEFAULT_TENANT))
    .addOption(new Option('--scope <scope>', API_KEY_SCOPES_MEANING).choices([...API_KEY_SCOPES]).makeOptionMandatory())
    .addOption(new Option('--name <name>', 'what the key is for (shown in lists)').makeOptionMandatory())
    .addOption(storeOption())
    .action(async (flags: { tenant: string; scope: string; name: string; store: string }) => {
      await withStore(flags.store, async (store) => {
        const { record, token } = await new ApiKeys(store).create({ tenantId: flags.tenant, scope: flags.scope, name: flags.name });
        console.error(`created API key ${record.keyId} (tenant ${record.tenantId}, scope ${record.scope}); keep it now, it cannot be shown again:`);
        console.log(token);
      });
    });
}

/** `retryd keys list`: every key, or one tenant's, without their secrets. */
function listCommand(): Command {
  return new Command('list')
    .description("List API keys (every tenant's, or one's), revoked ones included; never their secrets")
    .addOption(new Option('--tenant <id>', "only this tenant's keys"))
    .option('--json', 'one JSON object per line instead of a table')
    .option('--absolute', ABSOLUTE_FLAG_MEANING)
    .addOption(storeOption())
    .action(async (flags: { tenant?: string; json?: boolean; absolute?: boolean; store: string }) => {
      await withStore(flags.store, async (store) => {
        const keys = new ApiKeys(store);
        const all: ApiKeyRecord[] = [];
        let cursor: string | undefined;
        do {
          const page = await keys.list(flags.tenant, { limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
          all.push(...page.items);
          cursor = page.nextCursor;
        } while (cursor !== undefined);
        if (flags.json === true) {
          for (const { secretHash: _hash, ...view } of all) console.log(JSON.stringify(view));
          return;
        }
        const time = timeTextOf(flags);
        const rows = all.map((k) => [k.keyId, k.tenantId, k.scope, k.name, time(k.createdAt), time(k.revokedAt)]);
        console.log(textTable(['key id', 'tenant', 'scope', 'name', 'created', 'revoked'], rows, 6));
      });
    });
}

/** `retryd keys revoke <keyId>`. */
function revokeCommand(): Command {
  return new Command('revoke')
    .description('Revoke an API key for good: every instance refuses it within 5 s')
    .argument('<keyId>', 'the key id (the part after rtd_ and before the next _), as keys list shows it')
    .addOption(storeOption())
    .action(async (keyId: string, flags: { store: string }) => {
      await withStore(flags.store, async (store) => {
        const revoked = await new ApiKeys(store).revoke(keyId);
        console.log(`revoked API key ${revoked.keyId} (tenant ${revoked.tenantId}) at ${iso(revoked.revokedAt)}`);
      });
    });
}

/** The first line on stdin, or '' when there is none. */
async function firstLineOfStdin(): Promise<string> {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  try {
    for await (const line of lines) return line;
    return '';
  } finally {
    lines.close();
  }
}

/**
 * `retryd keys hash`: what `RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256` takes for the key on stdin (never a flag or an
 * argument, which the process list would show). Needs no store: it is computed from the key alone.
 */
function hashCommand(): Command {
  return new Command('hash')
    .description(`Print ${BOOTSTRAP_ADMIN_KEY_SHA256_VARIABLE}'s value for the API key read on stdin: the key's id, :, and the SHA-256 of its secret part`)
    .action(async () => {
      const line = (await firstLineOfStdin()).trim();
      const parts = parseApiKey(line);
      if (parts === undefined) throw new UsageError(`retryd keys hash reads an API key on stdin: ${API_KEY_RULE}; got ${line.length} characters that are not one`);
      console.log(bootstrapHashOf(parts));
    });
}

/** The API key subcommands of `retryd keys`. */
export function apiKeyCommands(): Command[] {
  return [createCommand(), listCommand(), revokeCommand(), hashCommand()];
}
