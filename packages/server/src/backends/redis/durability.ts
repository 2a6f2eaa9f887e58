/**
 * How much acknowledged work a crash can take away, from the server's own settings:
 * - `always`: AOF with `appendfsync always`, every write is on disk before its reply: nothing is lost.
 * - `everysec`: AOF fsynced once a second: a crash of the Redis host may lose about the last second (2 s at worst).
 * - `os`: AOF with `appendfsync no`: the kernel decides when to flush (about 30 s on Linux).
 * - `snapshots`: no AOF, RDB snapshots only: a restart loses everything since the last snapshot.
 * - `none`: neither AOF nor snapshots: a restart of Redis loses every task.
 * - `unknown`: `CONFIG` is disabled (managed Redis, renamed command): check the server yourself.
 */
export type RedisDurabilityMode = 'always' | 'everysec' | 'os' | 'snapshots' | 'none' | 'unknown';

/** The server's persistence settings as `CONFIG GET` reports them; undefined where it could not be read. */
export interface RedisPersistence {
  appendonly?: string;
  appendfsync?: string;
  save?: string;
}

/** Classifies the server's persistence settings (see {@link RedisDurabilityMode}). */
export function durabilityMode(settings: RedisPersistence): RedisDurabilityMode {
  if (settings.appendonly === undefined) return 'unknown';
  if (settings.appendonly === 'yes') {
    if (settings.appendfsync === 'always') return 'always';
    if (settings.appendfsync === 'everysec') return 'everysec';
    if (settings.appendfsync === 'no') return 'os';
    return 'unknown';
  }
  return settings.save === undefined || settings.save.trim() === '' ? 'none' : 'snapshots';
}

const SUMMARIES: Record<RedisDurabilityMode, string> = {
  always: 'AOF with appendfsync always: every acknowledged write is on disk; a crash loses nothing acknowledged',
  everysec:
    'AOF with appendfsync everysec: a crash of the Redis host may lose about the last second of acknowledged ' +
    'writes (tasks and attempts), up to 2 s when the disk is slow',
  os:
    'AOF with appendfsync no: a crash of the Redis host may lose the writes the kernel had not flushed yet ' +
    '(about 30 s on Linux)',
  snapshots:
    'no AOF, RDB snapshots only: a Redis restart loses every write since the last snapshot; ' +
    'set appendonly yes and appendfsync always for no acknowledged loss',
  none:
    'no AOF and no snapshots: a Redis restart loses every task; ' +
    'set appendonly yes and appendfsync always for no acknowledged loss',
  unknown: 'unknown: CONFIG GET is not available on this server; check appendonly and appendfsync yourself',
};

/**
 * Whether `retryd serve` warns at start about the Redis it writes to: when a restart or a crash of the Redis host can
 * lose acknowledged tasks that a retry service exists to keep (`none`, `snapshots`, `os`), or when it cannot tell
 * (`unknown`). `always` loses nothing; `everysec` at most about a second, the usual trade (docs/stores.md).
 */
export function warnsAtStart(mode: RedisDurabilityMode): boolean {
  return mode !== 'always' && mode !== 'everysec';
}

/** One line for the start-up log, naming the settings and what a crash loses under them. */
export function describeDurability(settings: RedisPersistence): string {
  const mode = durabilityMode(settings);
  return `${mode} (${SUMMARIES[mode]})`;
}

/** The part of an ioredis client that reading the settings needs. */
export interface ConfigReader {
  config(subcommand: 'GET', parameter: string): Promise<unknown>;
}

/**
 * Reads `appendonly`, `appendfsync` and `save` with `CONFIG GET`. Never fails: a server where CONFIG is renamed or
 * refused (managed services) yields empty settings, i.e. mode `unknown`.
 */
export async function readPersistence(client: ConfigReader): Promise<RedisPersistence> {
  const settings: RedisPersistence = {};
  try {
    for (const name of ['appendonly', 'appendfsync', 'save'] as const) {
      const reply = (await client.config('GET', name)) as string[];
      const value = reply[1];
      if (value !== undefined) settings[name] = value;
    }
  } catch {
    return {};
  }
  return settings;
}
