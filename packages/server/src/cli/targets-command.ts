import { Argument, Command, Option } from 'commander';
import type { BreakerAction, TargetSettingsPatch, Target as TargetView } from '@retryd/client';
import { textTable } from '../terminal/text-table.js';
import { apiCommand, iso, listCommand, listed, printListing, printOne, readJsonObject, timeTextOf, UsageError, withClient, type ApiFlags, type ListFlags, type TimeText } from './api-command.js';
import { rateText } from '../terminal/relative-time.js';
import { parseIntegerOption } from '../service/retryd-config.js';
import { MAX_MANUAL_OPEN_MS } from '../protection/target-control.js';
import { DEFAULT_TARGET_SETTINGS } from '../protection/target-settings.js';
import { isTimeoutMs, TIMEOUT_RULE } from '../domain/attempt-timeouts.js';

const limitText = (value: number | null, unit = '') => (value === null ? '-' : `${value}${unit}`);
const rateOrNone = (value: number | null) => (value === null ? '-' : rateText(value));

function targetTable(targets: readonly TargetView[], time: TimeText): string {
  const rows = targets.map((t) => [
    t.targetKey,
    t.breaker.state,
    time(t.heldUntil),
    String(t.inFlight),
    String(t.dueTasks),
    rateOrNone(t.limits.ratePerSecond),
    limitText(t.limits.maxInFlight),
    rateOrNone(t.allowedRatePerSecond),
  ]);
  return textTable(['target', 'breaker', 'held until', 'in flight', 'due', 'rate limit', 'max in flight', 'allowed rate'], rows, 3);
}

function targetText(t: TargetView): string {
  const lines: [string, string][] = [
    ['target', t.targetKey],
    ['breaker', `${t.breaker.state}${t.breaker.openUntil === null ? '' : ` until ${iso(t.breaker.openUntil)}`}, re-opened ${t.breaker.reopenCount} in a row`],
    ['held until', iso(t.heldUntil)],
    ['throttled until', iso(t.throttledUntil)],
    ['in flight', String(t.inFlight)],
    ['due tasks', String(t.dueTasks)],
    ['next due', iso(t.nextDueAt)],
    ['limits', `rate ${limitText(t.limits.ratePerSecond, '/s')}, burst ${limitText(t.limits.burst)}, in flight ${limitText(t.limits.maxInFlight)}`],
    ['allowed rate', rateOrNone(t.allowedRatePerSecond)],
  ];
  const width = Math.max(...lines.map(([k]) => k.length));
  return `${lines.map(([k, v]) => `${`${k}:`.padEnd(width + 2)}${v}`).join('\n')}\n\nsettings:\n${JSON.stringify(t.settings, null, 2)}`;
}

/**
 * A number that passes `test`, or `none` (no limit: null in the patch), naming the flag and the rule when it is
 * neither. `none` stays a word here: commander drops a parser's null.
 */
const limitOption =
  (flag: string, rule: string, test: (n: number) => boolean) =>
  (value: string): number | 'none' => {
    if (value === 'none') return 'none';
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || !test(n)) throw new UsageError(`${flag} must be ${rule}, or none, got ${JSON.stringify(value)}`);
    return n;
  };

/** Every protection on (the service's defaults) or off (for a downstream that fails by design); signing is left alone. */
export function protectionPatch(on: boolean): TargetSettingsPatch {
  return {
    // On: each as the service's defaults have it (the retry budget is off by default).
    breaker: { enabled: on && DEFAULT_TARGET_SETTINGS.breaker.enabled },
    adaptive: { enabled: on && DEFAULT_TARGET_SETTINGS.adaptive.enabled },
    retryBudget: { enabled: on && DEFAULT_TARGET_SETTINGS.retryBudget.enabled },
    stormDetection: { enabled: on && DEFAULT_TARGET_SETTINGS.stormDetection.enabled },
    retryAfterHoldsTarget: on && DEFAULT_TARGET_SETTINGS.retryAfterHoldsTarget,
  };
}

interface SetFlags extends ApiFlags {
  file?: string;
  rate?: number | 'none';
  burst?: number | 'none';
  maxInFlight?: number | 'none';
  protection?: 'on' | 'off';
  attemptTimeout?: number | 'none';
  connectTimeout?: number | 'none';
}

/** The settings patch of `targets set`: the file's, then the flags over it. */
function patchOf(flags: SetFlags): Record<string, unknown> {
  const limit = (value: number | 'none') => (value === 'none' ? null : value);
  const patch: Record<string, unknown> = flags.file === undefined ? {} : readJsonObject(flags.file);
  if (flags.protection !== undefined) Object.assign(patch, protectionPatch(flags.protection === 'on'));
  if (flags.rate !== undefined || flags.burst !== undefined) {
    const fromFile = typeof patch.rateLimit === 'object' && patch.rateLimit !== null ? patch.rateLimit : {};
    // A burst is the size of a rate limit: lifting the rate lifts its burst too.
    const burst = flags.rate === 'none' && flags.burst === undefined ? { burst: null } : {};
    patch.rateLimit = {
      ...fromFile,
      ...(flags.rate === undefined ? {} : { ratePerSecond: limit(flags.rate) }),
      ...burst,
      ...(flags.burst === undefined ? {} : { burst: limit(flags.burst) }),
    };
  }
  if (flags.maxInFlight !== undefined) patch.maxInFlight = limit(flags.maxInFlight);
  if (flags.attemptTimeout !== undefined) patch.attemptTimeoutMs = limit(flags.attemptTimeout);
  if (flags.connectTimeout !== undefined) patch.connectTimeoutMs = limit(flags.connectTimeout);
  if (Object.keys(patch).length === 0) {
    throw new UsageError('nothing to set: give --file, --rate, --burst, --max-in-flight, --protection, --attempt-timeout or --connect-timeout');
  }
  return patch;
}

function list(): Command {
  return listCommand('list', "List the tenant's targets with their breaker, hold, calls in flight, due tasks and limits").action(async (flags: ListFlags) => {
    await withClient(flags, async (client) => {
      printListing(flags, await listed(client, flags, (page) => client.listTargets(page)), 'targets', (targets) => targetTable(targets, timeTextOf(flags)));
    });
  });
}

function get(): Command {
  return apiCommand('get', 'Show a target: breaker, hold, limits, calls in flight, due tasks and its settings')
    .argument('<targetKey>', 'the origin, e.g. https://api.example.com')
    .action(async (targetKey: string, flags: ApiFlags) => {
      await withClient(flags, async (client) => {
        const target = await client.getTarget(targetKey);
        printOne(flags, target, () => targetText(target));
      });
    });
}

function set(): Command {
  return apiCommand('set', "Change a target's protection settings: the fields given replace its current ones, the rest keep their value")
    .argument('<targetKey>', 'the origin, e.g. https://api.example.com')
    .addOption(new Option('--file <path>', 'a partial settings object as JSON (the settings of targets get --json); - reads stdin. Flags given with it win'))
    .addOption(new Option('--rate <perSecond>', 'most dispatches per second over every instance, or none').argParser(limitOption('--rate', 'a number above 0', (n) => n > 0)))
    .addOption(new Option('--burst <n>', 'the burst of the rate limit, or none (a hundredth of a second of the rate)').argParser(limitOption('--burst', 'a number of at least 1', (n) => n >= 1)))
    .addOption(new Option('--max-in-flight <n>', 'most attempts in flight over every instance, or none').argParser(limitOption('--max-in-flight', 'an integer of at least 1', (n) => Number.isInteger(n) && n >= 1)))
    .addOption(
      new Option('--attempt-timeout <ms>', "the attempt timeout of the target's tasks that set none, or none (the service's)").argParser(
        limitOption('--attempt-timeout', TIMEOUT_RULE, isTimeoutMs),
      ),
    )
    .addOption(
      new Option('--connect-timeout <ms>', "the connect timeout of the target's tasks that set none, at most the attempt timeout, or none (the service's)").argParser(
        limitOption('--connect-timeout', TIMEOUT_RULE, isTimeoutMs),
      ),
    )
    .addOption(new Option('--protection <mode>', 'on: each protection as the defaults have it (breaker, adaptive throttling, storm detection, Retry-After holds; the retry budget off); off: none of them').choices(['on', 'off']))
    .action(async (targetKey: string, flags: SetFlags) => {
      await withClient(flags, async (client) => {
        const target = await client.putTargetSettings(targetKey, patchOf(flags));
        printOne(flags, target, () => `settings of ${target.targetKey} changed\n\n${targetText(target)}`);
      });
    });
}

function breaker(): Command {
  return apiCommand('breaker', "Open, close or reset a target's circuit breaker by hand")
    .argument('<targetKey>', 'the origin, e.g. https://api.example.com')
    .addArgument(
      new Argument('<action>', "open: hold the target (for --duration-ms, by default its maxOpenDurationMs), then probe; close: end every hold now (a Retry-After's too); reset: close and clear its counts").choices([
        'open',
        'close',
        'reset',
      ]),
    )
    .addOption(
      new Option('--duration-ms <ms>', 'with open: how long the target is held before probes start (at most 7 days)').argParser((v) =>
        parseIntegerOption('--duration-ms', v, 1, MAX_MANUAL_OPEN_MS),
      ),
    )
    .action(async (targetKey: string, action: BreakerAction, flags: ApiFlags & { durationMs?: number }) => {
      await withClient(flags, async (client) => {
        const target = await client.setTargetBreaker(targetKey, action, flags.durationMs === undefined ? {} : { durationMs: flags.durationMs });
        printOne(flags, target, () => `breaker of ${target.targetKey}: ${target.breaker.state}${target.breaker.openUntil === null ? '' : ` until ${iso(target.breaker.openUntil)}`}`);
      });
    });
}

function release(): Command {
  return apiCommand('release', "End a target's holds now: a Retry-After hold and any other but an open breaker's (breaker close ends that)")
    .argument('<targetKey>', 'the origin, e.g. https://api.example.com')
    .action(async (targetKey: string, flags: ApiFlags) => {
      await withClient(flags, async (client) => {
        const target = await client.releaseTarget(targetKey);
        printOne(flags, target, () => `holds of ${target.targetKey} released; held until: ${iso(target.heldUntil)}`);
      });
    });
}

/** `retryd targets list|get|set|breaker|release`, through the HTTP API of a running service. */
export function targetsCommand(): Command {
  return new Command('targets')
    .description('Targets (origins) of a running service and their protection, through its HTTP API (--url, --api-key)')
    .addCommand(list())
    .addCommand(get())
    .addCommand(set())
    .addCommand(breaker())
    .addCommand(release());
}
