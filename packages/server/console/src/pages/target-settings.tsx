// A target's protection settings, edited in place: the fields changed are sent as a partial settings object
// (PUT /targets/{targetKey}), and the API's message for a field is shown beside it.
import { useState } from 'preact/hooks';
import { ApiError, api, type TargetView } from '../api.js';
import { ErrorLine, messageFor } from '../ui.js';

type Settings = TargetView['settings'];

/**
 * The settings the form edits, by their path in the settings object. `nullable`: empty means null (no limit, or the
 * service's own value); `number`: empty or not a number is sent as typed, for the API to name the rule.
 */
const SETTING_FIELDS = [
  { path: 'rateLimit.ratePerSecond', label: 'Rate limit (per second)', kind: 'nullable', hint: 'Empty: no limit' },
  { path: 'rateLimit.burst', label: 'Burst', kind: 'nullable', hint: 'Empty: a hundredth of a second of the rate, at least 1' },
  { path: 'maxInFlight', label: 'Most in flight', kind: 'nullable', hint: 'Empty: no limit' },
  { path: 'breaker.enabled', label: 'Circuit breaker', kind: 'boolean' },
  { path: 'breaker.consecutiveFailures', label: 'Opens after failures in a row', kind: 'number' },
  { path: 'breaker.openDurationMs', label: 'First open period (ms)', kind: 'number' },
  { path: 'breaker.maxOpenDurationMs', label: 'Longest open period (ms)', kind: 'number' },
  { path: 'adaptive.enabled', label: 'Adaptive throttling', kind: 'boolean' },
  { path: 'retryBudget.enabled', label: 'Retry budget', kind: 'boolean' },
  { path: 'retryBudget.retryRatio', label: 'Retries per first attempt', kind: 'number' },
  { path: 'retryBudget.minRetriesPerSecond', label: 'Retries per second, at least', kind: 'number' },
  { path: 'retryAfterHoldsTarget', label: 'Retry-After holds the whole target', kind: 'boolean' },
  { path: 'attemptTimeoutMs', label: 'Attempt timeout (ms)', kind: 'nullable', hint: "Empty: the service's" },
  { path: 'connectTimeoutMs', label: 'Connect timeout (ms)', kind: 'nullable', hint: "Empty: the service's" },
] as const;

type Values = Record<string, string | boolean>;

function read(settings: Settings, path: string): unknown {
  return path.split('.').reduce<unknown>((value, part) => (value as Record<string, unknown> | undefined)?.[part], settings);
}

function valuesOf(settings: Settings): Values {
  const values: Values = {};
  for (const field of SETTING_FIELDS) {
    const value = read(settings, field.path);
    values[field.path] = field.kind === 'boolean' ? value === true : value === null || value === undefined ? '' : String(value);
  }
  return values;
}

/** The partial settings of the fields that changed, nested as the API takes them. */
function patchOf(values: Values, before: Values): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const field of SETTING_FIELDS) {
    const value = values[field.path];
    if (value === before[field.path]) continue;
    let sent: unknown = value;
    if (typeof value === 'string') {
      const text = value.trim();
      sent = text === '' && field.kind === 'nullable' ? null : /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
    }
    const parts = field.path.split('.');
    let into = patch;
    for (const part of parts.slice(0, -1)) into = (into[part] ??= {}) as Record<string, unknown>;
    into[parts.at(-1)!] = sent;
  }
  return patch;
}

export function TargetSettingsForm({ target, onSaved }: { target: TargetView; onSaved: () => void }) {
  const [before, setBefore] = useState(() => valuesOf(target.settings));
  const [values, setValues] = useState(before);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<Error>();
  const [status, setStatus] = useState<string>();
  const submit = async (event: Event) => {
    event.preventDefault();
    setStatus(undefined);
    const patch = patchOf(values, before);
    if (Object.keys(patch).length === 0) {
      setStatus('Nothing changed.');
      return;
    }
    try {
      const saved = await api<TargetView>('PUT', `/targets/${encodeURIComponent(target.targetKey)}`, patch);
      const now = valuesOf(saved.settings);
      setBefore(now);
      setValues(now);
      setFieldErrors({});
      setError(undefined);
      setStatus('Saved.');
      onSaved();
    } catch (failure) {
      const byField = failure instanceof ApiError ? failure.fieldErrors : {};
      setFieldErrors(byField);
      const placed = Object.keys(byField).length > 0 && Object.keys(byField).every((name) => SETTING_FIELDS.some((f) => messageFor({ [name]: '' }, f.path) !== undefined));
      setError(placed ? new Error('The settings were not saved: see the fields marked below.') : (failure as Error));
    }
  };
  return (
    <form class="policy-form" onSubmit={submit} noValidate aria-label="Target settings">
      <ErrorLine error={error} />
      {status !== undefined && (
        <p class="ok" role="status">
          {status}
        </p>
      )}
      {SETTING_FIELDS.map((field) => {
        const id = `setting-${field.path.replace('.', '-')}`;
        const message = messageFor(fieldErrors, field.path);
        const described = [message === undefined ? '' : `${id}-error`, 'hint' in field ? `${id}-hint` : ''].filter((s) => s !== '').join(' ') || undefined;
        return (
          <div class={field.kind === 'boolean' ? 'field check' : 'field'} key={field.path}>
            {field.kind === 'boolean' ? (
              <label>
                <input
                  id={id}
                  type="checkbox"
                  checked={values[field.path] === true}
                  aria-invalid={message !== undefined}
                  aria-describedby={described}
                  onChange={(e) => setValues({ ...values, [field.path]: e.currentTarget.checked })}
                />{' '}
                {field.label}
              </label>
            ) : (
              <>
                <label for={id}>{field.label}</label>
                <input
                  id={id}
                  inputMode="decimal"
                  value={values[field.path] as string}
                  aria-invalid={message !== undefined}
                  aria-describedby={described}
                  onInput={(e) => setValues({ ...values, [field.path]: e.currentTarget.value })}
                />
              </>
            )}
            {'hint' in field && (
              <p id={`${id}-hint`} class="hint">
                {field.hint}
              </p>
            )}
            {message !== undefined && (
              <p id={`${id}-error`} class="field-error">
                {message}
              </p>
            )}
          </div>
        );
      })}
      <button type="submit" class="primary">
        Save settings
      </button>
    </form>
  );
}
