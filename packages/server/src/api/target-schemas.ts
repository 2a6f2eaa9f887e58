import { CircuitState } from '@retryd/core';
import { DEFAULT_TARGET_SETTINGS, type TargetSettings } from '../protection/target-settings.js';
import { DUE_COUNT_CAP } from '../store/store.js';
import { MAX_MANUAL_OPEN_MS } from '../protection/target-control.js';
import { NEXT_CURSOR } from './schemas.js';

// JSON schemas of `/targets`, added to the app after the shared ones of schemas.ts, so `/openapi.json` names them as
// components. A PUT's body is not checked by `TargetSettingsPatch` but by `TargetControl.putSettings` (one validator
// for the API and the CLI); that schema documents it. The breaker request is checked by its schema.

const nullable = (type: string) => ({ type: [type, 'null'] });

/** What each section of a target's settings is, for the OpenAPI document (the fields are documented in target-settings.ts). */
const SETTINGS_SECTIONS: Record<keyof TargetSettings, string> = {
  breaker: 'The circuit breaker: opens on consecutive failures or a failure rate; while open, due tasks are held (no attempt burned).',
  rateLimit: 'Most dispatches per second over every instance, with a burst (default a hundredth of a second of the rate, at least 1); null: no limit.',
  maxInFlight: 'Most attempts in flight over every instance; null: no limit.',
  adaptive: 'Adaptive throttling: a 429, or a 503 with Retry-After, lowers the allowed rate; successes raise it again.',
  retryBudget: 'Retries at most retryRatio of first attempts over windowMs, plus a floor per second; first attempts always go.',
  stormDetection: 'A sharp rise of retries with few successes opens the breaker and logs retry_storm.',
  retryAfterHoldsTarget: 'Whether a Retry-After on a 429 or 503 holds the whole target until then.',
  signing:
    'Standard Webhooks signatures on every attempt (webhook-id, webhook-timestamp, webhook-signature); secrets are ' +
    '{{secret:NAME}} references to whsec_ secrets, one signature each (several during a rotation).',
  attemptTimeoutMs:
    "The attempt timeout of the target's tasks that set none, in ms (1 to 1800000: 30 minutes); null: the service's (--attempt-timeout).",
  connectTimeoutMs:
    "The connect timeout of the target's tasks that set none, in ms (1 to 1800000, <= attemptTimeoutMs when both are set); null: the service's (--connect-timeout).",
};

/**
 * The JSON schema of a settings value, derived from `DEFAULT_TARGET_SETTINGS` so a field added there is documented at
 * once: a boolean is a boolean, a number a number, and a field whose default is null a number or null. Every number
 * is `number` (not `integer`): the response serialiser would truncate a fraction that an `integer` type let through.
 * `partial`: the shape of a `PUT` (nothing required); else every field is.
 */
function settingsSchemaOf(value: unknown, partial: boolean): Record<string, unknown> {
  if (value === null) return { type: ['number', 'null'] };
  if (Array.isArray(value)) return { type: 'array', items: { type: 'string' }, ...(partial ? {} : { default: [...(value as unknown[])] }) };
  // A PUT's missing field keeps the target's current value, not the default: only the full shape shows defaults.
  if (typeof value === 'boolean') return { type: 'boolean', ...(partial ? {} : { default: value }) };
  if (typeof value === 'number') return { type: 'number', ...(partial ? {} : { default: value }) };
  const entries = Object.entries(value as Record<string, unknown>);
  return {
    type: 'object',
    additionalProperties: false,
    ...(partial ? {} : { required: entries.map(([name]) => name) }),
    properties: Object.fromEntries(entries.map(([name, inner]) => [name, settingsSchemaOf(inner, partial)])),
  };
}

/** The settings schema with each section described. */
function targetSettingsSchema(partial: boolean): Record<string, unknown> {
  const schema = settingsSchemaOf(DEFAULT_TARGET_SETTINGS, partial);
  const properties = schema.properties as Record<string, Record<string, unknown>>;
  for (const [section, description] of Object.entries(SETTINGS_SECTIONS)) {
    properties[section] = { ...properties[section], description };
  }
  return schema;
}

/** Longest `targetKey` a path may carry, decoded: an origin's host name is at most 253 characters. */
export const TARGET_KEY_MAX_LENGTH = 512;

/** The schemas of the target routes, in the order they are added (later ones refer to earlier ones). */
export const TARGET_SCHEMAS = [
  {
    $id: 'TargetSettings',
    description: 'How retryd protects one target: every field, the service defaults filled in where the target has none of its own.',
    ...targetSettingsSchema(false),
  },
  {
    $id: 'TargetSettingsPatch',
    description:
      'A partial TargetSettings: the fields given replace the current ones (the service defaults until the target has ' +
      'its own), the others keep their value. Unknown fields are refused; every broken rule is named.',
    ...targetSettingsSchema(true),
  },
  {
    $id: 'Target',
    description:
      'A target (a URL origin) of the tenant: where its gate stands in the store, its breaker, the rate adaptive ' +
      'throttling allows, and its settings. Times are epoch ms.',
    type: 'object',
    required: ['targetKey', 'heldUntil', 'throttledUntil', 'nextDueAt', 'inFlight', 'dueTasks', 'limits', 'breaker', 'allowedRatePerSecond', 'settings'],
    properties: {
      targetKey: { type: 'string', description: 'The origin, e.g. https://api.example.com:8443.' },
      heldUntil: { ...nullable('number'), description: 'Until when claims skip the target (an open breaker, a Retry-After), or null.' },
      throttledUntil: { ...nullable('number'), description: 'Until when its rate or concurrency limit keeps claims off it, or null.' },
      nextDueAt: { ...nullable('number'), description: 'The earliest due time of its pending tasks as the store knows it, or null.' },
      inFlight: { type: 'integer', description: 'Its attempts in flight now, over every instance.' },
      dueTasks: { type: 'integer', description: `Its pending tasks due now (held or throttled ones included), counted up to ${DUE_COUNT_CAP}.` },
      limits: {
        type: 'object',
        description: "The limits the store's gate applies to claims now, over every instance (null: none).",
        required: ['ratePerSecond', 'burst', 'maxInFlight'],
        properties: { ratePerSecond: nullable('number'), burst: nullable('number'), maxInFlight: nullable('integer') },
      },
      breaker: {
        type: 'object',
        required: ['state', 'openUntil', 'reopenCount'],
        properties: {
          state: { type: 'string', enum: Object.values(CircuitState) },
          openUntil: { ...nullable('number'), description: 'When an OPEN breaker lets its probes through, or null.' },
          reopenCount: { type: 'integer', description: 'Re-openings in a row since it last closed (each opens it for longer).' },
        },
      },
      allowedRatePerSecond: {
        ...nullable('number'),
        description: 'The rate adaptive throttling allows now (dispatches per second), or null when it does not limit the target.',
      },
      settings: { $ref: 'TargetSettings#' },
    },
  },
  {
    $id: 'TargetPage',
    type: 'object',
    required: ['items'],
    properties: { items: { type: 'array', items: { $ref: 'Target#' } }, nextCursor: NEXT_CURSOR },
  },
  {
    $id: 'BreakerRequest',
    description:
      'open: held for durationMs (by default the breaker settings\' maxOpenDurationMs), then probed; close: closed at once; ' +
      'reset: closed, its counters cleared.',
    type: 'object',
    additionalProperties: false,
    required: ['action'],
    properties: {
      action: { type: 'string', enum: ['open', 'close', 'reset'] },
      durationMs: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_MANUAL_OPEN_MS,
        description: 'With open only: how long the target is held before probes start. Default: maxOpenDurationMs.',
      },
    },
  },
] as const;
