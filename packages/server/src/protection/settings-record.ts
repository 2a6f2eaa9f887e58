import type { FieldError } from '../domain/errors.js';
import type { TargetRef, TargetStateStore } from '../store/store.js';
import { applySettingsPatch, type TargetSettings } from './target-settings.js';

/** The `targetState` key of a target's settings: `settings:https://api.example.com`. */
export function settingsKey(targetKey: string): string {
  return `settings:${targetKey}`;
}

/** A target's settings as stored: the whole object (JSON), at a version (0: none stored, the service defaults). */
export interface SettingsRecord {
  settings: TargetSettings;
  version: number;
}

/** Lost races in a row after which a settings write gives up (each one means another writer just succeeded). */
const MAX_RACES = 8;

/**
 * A target's settings: the stored ones, or `defaults` when none are stored. A stored value that no longer passes
 * the rules (written by another version of retryd) is reported through `onInvalid` and read as the defaults, at its
 * version, so the next write replaces it.
 */
export async function readSettings(
  state: TargetStateStore,
  target: TargetRef,
  defaults: TargetSettings,
  onInvalid: (error: Error) => void,
): Promise<SettingsRecord> {
  const stored = await state.getTargetState(target.tenantId, settingsKey(target.targetKey));
  if (stored === undefined) return { settings: defaults, version: 0 };
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored.value);
  } catch (error) {
    onInvalid(new Error(`the stored settings of ${target.targetKey} are not JSON`, { cause: error }));
    return { settings: defaults, version: stored.version };
  }
  const check = applySettingsPatch(defaults, parsed);
  if (check.ok) return { settings: check.settings, version: stored.version };
  onInvalid(new Error(`the stored settings of ${target.targetKey} break the rules: ${check.errors.map((e) => e.message).join('; ')}`));
  return { settings: defaults, version: stored.version };
}

/**
 * Applies `patch` over the target's current settings and stores the result, compare-and-set on the version read (a
 * concurrent write is read again and the patch applied over it). `errors` when the patch breaks a rule.
 */
export async function writeSettings(
  state: TargetStateStore,
  target: TargetRef,
  patch: unknown,
  defaults: TargetSettings,
  now: number,
  onInvalid: (error: Error) => void,
): Promise<{ ok: true; record: SettingsRecord } | { ok: false; errors: FieldError[] }> {
  for (let race = 0; race < MAX_RACES; race++) {
    const current = await readSettings(state, target, defaults, onInvalid);
    const check = applySettingsPatch(current.settings, patch);
    if (!check.ok) return check;
    const written = await state.putTargetState(target.tenantId, settingsKey(target.targetKey), current.version, JSON.stringify(check.settings), now);
    if (written) return { ok: true, record: { settings: check.settings, version: current.version + 1 } };
  }
  throw new Error(`the settings of ${target.targetKey} changed ${MAX_RACES} times while being written; try again`);
}
