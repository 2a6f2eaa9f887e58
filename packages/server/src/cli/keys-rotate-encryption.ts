import { Command, Option } from 'commander';
import type { BlobStore } from '../blobs/blob-store.js';
import { BlobsUrlError } from '../blobs/s3-blobs-url.js';
import { EncryptionKeyError, parseKeyring, type Keyring } from '../secrets/encryption-keys.js';
import { DEFAULT_ROTATION_BATCH, rotateStoredSecrets, type RotationCounts, type RotationReport } from '../secrets/rotate-stored-secrets.js';
import { openStore, parseStoreUrl, StoreUrlError } from '../service/open-store.js';
import { storeIsThere } from './with-store.js';
import { DEFAULT_CONFIG, parseIntegerOption } from '../service/retryd-config.js';
import type { Store } from '../store/store.js';

/** Most tasks `--batch` may read and re-seal at once: a store's page limit. */
const MAX_BATCH = 1_000;

/** The parsed flags of `retryd keys rotate-encryption`. */
interface RotateFlags {
  store: string;
  blobs?: string;
  batch: number;
}

/**
 * `retryd keys rotate-encryption`: re-seals every stored secret under the first key of `RETRYD_ENCRYPTION_KEY` (see
 * `rotateStoredSecrets`), while the service runs. Prints what it re-sealed, skipped and could not re-seal (each
 * failure on stderr, by task and field); exits 1 when a value failed, 130 when a signal stopped it (run it again to
 * finish), 2 on a usage error (no or a malformed `RETRYD_ENCRYPTION_KEY`, a bad `--store`, `--blobs` or `--batch`).
 *
 * @example
 * ```sh
 * RETRYD_ENCRYPTION_KEY="2026-11:$NEW,2026-05:$OLD" retryd keys rotate-encryption --store postgres://db/retryd
 * ```
 */
export function rotateEncryptionCommand(): Command {
  return new Command('rotate-encryption')
    .summary('re-encrypt every stored secret under the first key of RETRYD_ENCRYPTION_KEY, while the service runs')
    .description(
      'Re-encrypt every stored secret (credential headers, sensitive bodies, inline or in the blob store) under the first key of ' +
        'RETRYD_ENCRYPTION_KEY, while the service runs. Every instance must already list that key first and the old ones after it; ' +
        'run with the same RETRYD_ENCRYPTION_KEY. Safe to run twice and to interrupt. Exits 1 if a value could not be re-encrypted.',
    )
    .addOption(
      new Option('--store <url>', 'the store to rotate: sqlite:<file>, postgres://…, redis://… or redis+cluster://… (as given to serve)')
        .env('RETRYD_STORE')
        .default(DEFAULT_CONFIG.store),
    )
    .addOption(new Option('--blobs <url>', "where bodies over 64 KiB live, as given to serve (s3://bucket/prefix?…); default: the store's own").env('RETRYD_BLOBS'))
    .addOption(
      new Option('--batch <n>', `tasks read and re-encrypted at once (1 to ${MAX_BATCH})`)
        .default(DEFAULT_ROTATION_BATCH)
        .argParser((value) => parseIntegerOption('--batch', value, 1, MAX_BATCH)),
    )
    .exitOverride()
    .action(async (flags: RotateFlags) => {
      process.exitCode = await rotateEncryption(flags);
    });
}

/** Runs the rotation the flags ask for; resolves to the exit code. Usage errors are thrown (the CLI prints them). */
async function rotateEncryption(flags: RotateFlags): Promise<number> {
  const keyring = keyringFromEnvironment();
  parseStoreUrl(flags.store);
  let opened: { store: Store; blobs: BlobStore };
  try {
    // Opening a store creates it: a mistyped --store would rotate an empty store and report success.
    if (!(await storeIsThere(flags.store))) return 2;
    // A networked store reconnects by itself; a call that fails meanwhile stops the run below.
    opened = await openStore(flags.store, { ...(flags.blobs === undefined ? {} : { blobs: flags.blobs }), onError: () => undefined });
  } catch (error) {
    if (error instanceof StoreUrlError || error instanceof BlobsUrlError) throw error;
    console.error(`retryd: cannot open the store: ${messageOf(error)}`);
    return 1;
  }
  const { store, blobs } = opened;
  const abort = new AbortController();
  const stop = () => {
    if (abort.signal.aborted) process.exit(130);
    console.error('retryd: stopping after the tasks in progress (a second signal stops at once); run again to finish');
    abort.abort();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    const report = await rotateStoredSecrets({
      store,
      blobs,
      keyring,
      batch: flags.batch,
      signal: abort.signal,
      onFailure: (f) => console.error(`retryd: task ${f.taskId} (tenant ${f.tenantId}) ${f.field}: ${f.reason}`),
    });
    console.log(summary(report));
    return report.values.failed > 0 ? 1 : report.interrupted ? 130 : 0;
  } catch (error) {
    // What was re-sealed stays so: a later run skips it and goes on.
    console.error(`retryd: rotation stopped: ${messageOf(error)}; run it again to finish`);
    return 1;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await store.close();
    await blobs.close?.();
  }
}

/**
 * The keyring from `RETRYD_ENCRYPTION_KEY`, never a flag (a key on the command line shows in the process list).
 * @throws EncryptionKeyError when it is missing or breaks its rule
 */
function keyringFromEnvironment(): Keyring {
  const value = process.env.RETRYD_ENCRYPTION_KEY;
  if (value === undefined || value.trim() === '') {
    throw new EncryptionKeyError(
      'RETRYD_ENCRYPTION_KEY must be set to the keys the instances use, the new key first and the old ones after it (id:base64,id:base64)',
    );
  }
  return parseKeyring(value);
}

/** The report as the command prints it: the key, then tasks and values, each re-sealed, skipped and failed. */
function summary(report: RotationReport): string {
  const line = (what: string, counts: RotationCounts) =>
    `${what} ${counts.resealed} re-encrypted, ${counts.skipped} skipped (already under key ${report.keyId}), ${counts.failed} failed`;
  return [
    `key:    ${report.keyId}`,
    line('tasks: ', report.tasks),
    line('values:', report.values),
    ...(report.interrupted ? ['interrupted: run the command again to finish'] : []),
  ].join('\n');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
