// Policies: list, read, create and edit, with the API's own validation messages shown by the field they name.
import { useState } from 'preact/hooks';
import { ApiError, api, query, type Page, type PolicyView } from '../api.js';
import { BackoffPreview } from '../charts/backoff-preview.js';
import { ErrorLine, PageTitle, duration, messageFor, time, useLoad } from '../ui.js';

const BACKOFF_TYPES = ['EXPONENTIAL', 'LINEAR', 'FIXED'];
const JITTER_TYPES = ['NONE', 'FULL', 'EQUAL', 'DECORRELATED'];

/** The form's fields in the order shown; `number` ones are sent as numbers when they read as one. */
const FIELDS = [
  { name: 'maxAttempts', label: 'Max attempts', kind: 'number', hint: 'Attempts in all, the first included' },
  { name: 'backoffType', label: 'Backoff', kind: 'select', options: BACKOFF_TYPES },
  { name: 'initialDelayMs', label: 'Initial delay (ms)', kind: 'number' },
  { name: 'multiplier', label: 'Multiplier', kind: 'number' },
  { name: 'maxDelayMs', label: 'Max delay (ms)', kind: 'number' },
  { name: 'jitterType', label: 'Jitter', kind: 'select', options: JITTER_TYPES },
  { name: 'totalBudgetMs', label: 'Total budget (ms)', kind: 'number', hint: 'Empty: no budget' },
  { name: 'estimatedCallMs', label: 'Estimated call (ms)', kind: 'number', hint: 'Empty: none' },
  { name: 'retryableStatusCodes', label: 'Retryable statuses', kind: 'list', hint: 'Comma-separated; empty: the defaults' },
  { name: 'backoffByClass', label: 'Backoff by failure class (JSON)', kind: 'json', hint: 'Empty: every failure follows the schedule above' },
] as const;

type Values = Record<string, string>;

function valuesOf(policy: Partial<PolicyView> | undefined): Values {
  const values: Values = {};
  for (const field of FIELDS) {
    const value = (policy as Record<string, unknown> | undefined)?.[field.name];
    if (value === undefined || value === null) values[field.name] = '';
    else if (field.kind === 'list') values[field.name] = (value as number[]).join(', ');
    else if (field.kind === 'json') values[field.name] = JSON.stringify(value, null, 2);
    else values[field.name] = String(value);
  }
  return values;
}

const NEW_POLICY: Partial<PolicyView> = { maxAttempts: 5, backoffType: 'EXPONENTIAL', initialDelayMs: 500, multiplier: 2, maxDelayMs: 30_000, jitterType: 'FULL' };

/** The request body: empty fields left out; what does not read as a number or as JSON is sent as typed, for the API to name. */
function bodyOf(values: Values): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of FIELDS) {
    const text = (values[field.name] ?? '').trim();
    if (text === '') continue;
    if (field.kind === 'number') body[field.name] = /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
    else if (field.kind === 'list') body[field.name] = text.split(/[\s,]+/).filter((s) => s !== '').map((s) => (/^\d+$/.test(s) ? Number(s) : s));
    else if (field.kind === 'json') {
      try {
        body[field.name] = JSON.parse(text) as unknown;
      } catch {
        body[field.name] = text;
      }
    } else body[field.name] = text;
  }
  return body;
}

function PolicyForm(props: { policy?: PolicyView; onSaved: (policy: PolicyView) => void }) {
  const creating = props.policy === undefined;
  const [policyId, setPolicyId] = useState('');
  const [values, setValues] = useState<Values>(() => valuesOf(props.policy ?? NEW_POLICY));
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<Error>();
  const [saved, setSaved] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setSaved(false);
    try {
      const policy = creating
        ? await api<PolicyView>('POST', '/retry-policies', { policyId: policyId.trim(), ...bodyOf(values) })
        : await api<PolicyView>('PUT', `/retry-policies/${encodeURIComponent(props.policy!.policyId)}`, bodyOf(values));
      setFieldErrors({});
      setError(undefined);
      setSaved(true);
      props.onSaved(policy);
    } catch (failure) {
      const byField = failure instanceof ApiError ? failure.fieldErrors : {};
      setFieldErrors(byField);
      // The messages that name no field of the form are shown above it.
      const named = Object.keys(byField);
      const placed = named.length > 0 && named.every((field) => field === 'policyId' || FIELDS.some((f) => messageFor({ [field]: '' }, f.name) !== undefined));
      setError(placed ? new Error('The policy was not saved: see the fields marked below.') : (failure as Error));
    }
  };
  const described = (name: string) => (messageFor(fieldErrors, name) === undefined ? `${name}-hint` : `${name}-error ${name}-hint`);
  return (
    <form class="policy-form" onSubmit={submit} noValidate aria-label={creating ? 'New policy' : 'Edit policy'}>
      <ErrorLine error={error} />
      {saved && (
        <p class="ok" role="status">
          Saved.
        </p>
      )}
      {creating && (
        <div class="field">
          <label for="policyId">Policy id</label>
          <input id="policyId" value={policyId} onInput={(e) => setPolicyId(e.currentTarget.value)} aria-invalid={fieldErrors.policyId !== undefined} aria-describedby="policyId-error" />
          {fieldErrors.policyId !== undefined && (
            <p id="policyId-error" class="field-error">
              {fieldErrors.policyId}
            </p>
          )}
        </div>
      )}
      {FIELDS.map((field) => {
        const message = messageFor(fieldErrors, field.name);
        const common = {
          id: field.name,
          name: field.name,
          value: values[field.name] ?? '',
          'aria-invalid': message !== undefined,
          'aria-describedby': described(field.name),
          onInput: (e: Event) => setValues({ ...values, [field.name]: (e.currentTarget as HTMLInputElement).value }),
        };
        return (
          <div class="field" key={field.name}>
            <label for={field.name}>{field.label}</label>
            {field.kind === 'select' ? (
              <select {...common}>
                {field.options.map((option) => (
                  <option key={option} value={option}>
                    {option}
                  </option>
                ))}
              </select>
            ) : field.kind === 'json' ? (
              <textarea {...common} rows={4} class="mono" />
            ) : (
              <input {...common} inputMode={field.kind === 'number' ? 'decimal' : 'text'} />
            )}
            {'hint' in field && (
              <p id={`${field.name}-hint`} class="hint">
                {field.hint}
              </p>
            )}
            {message !== undefined && (
              <p id={`${field.name}-error`} class="field-error">
                {message}
              </p>
            )}
          </div>
        );
      })}
      <button type="submit" class="primary">
        {creating ? 'Create policy' : 'Save changes'}
      </button>
    </form>
  );
}

export function PoliciesPage() {
  const [cursor, setCursor] = useState<string>();
  const policies = useLoad(() => api<Page<PolicyView>>('GET', `/retry-policies${query({ cursor, limit: 100 })}`), [cursor]);
  return (
    <>
      <PageTitle>Policies</PageTitle>
      <ErrorLine error={policies.error} />
      {policies.data !== undefined &&
        (policies.data.items.length === 0 ? (
          <p>No named policies yet.</p>
        ) : (
          <table>
            <caption class="visually-hidden">Named policies</caption>
            <thead>
              <tr>
                <th scope="col">Policy</th>
                <th scope="col" class="num">Max attempts</th>
                <th scope="col">Backoff</th>
                <th scope="col">Jitter</th>
                <th scope="col">Budget</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {policies.data.items.map((policy) => (
                <tr key={policy.policyId}>
                  <th scope="row">
                    <a href={`#/policies/${encodeURIComponent(policy.policyId)}`}>{policy.policyId}</a>
                  </th>
                  <td class="num">{policy.maxAttempts}</td>
                  <td>
                    {policy.backoffType} {duration(policy.initialDelayMs)} → {duration(policy.maxDelayMs)}
                  </td>
                  <td>{policy.jitterType}</td>
                  <td>{policy.totalBudgetMs === undefined ? 'none' : duration(policy.totalBudgetMs)}</td>
                  <td>{time(policy.updatedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
      {policies.data?.nextCursor !== undefined && (
        <div class="pager">
          <button type="button" onClick={() => setCursor(policies.data?.nextCursor)}>
            Next page
          </button>
        </div>
      )}
      <section aria-labelledby="new-policy">
        <h2 id="new-policy">New policy</h2>
        <PolicyForm onSaved={(policy) => (location.hash = `#/policies/${encodeURIComponent(policy.policyId)}`)} />
      </section>
    </>
  );
}

export function PolicyPage({ policyId }: { policyId: string }) {
  const policy = useLoad(() => api<PolicyView>('GET', `/retry-policies/${encodeURIComponent(policyId)}`), [policyId]);
  return (
    <>
      <PageTitle>
        Policy <span class="mono">{policyId}</span>
      </PageTitle>
      <p>
        <a href="#/policies">All policies</a> · <a href={`#/tasks?policyId=${encodeURIComponent(policyId)}`}>Its tasks</a>
      </p>
      <ErrorLine error={policy.error} />
      {policy.data !== undefined && (
        <>
          <p class="hint">
            Created {time(policy.data.createdAt)}, updated {time(policy.data.updatedAt)}. A change applies to the next scheduling decision of every task
            that names it.
          </p>
          <section aria-labelledby="preview-title">
            <h2 id="preview-title">Delays before each retry</h2>
            <BackoffPreview policy={policy.data} />
          </section>
          <PolicyForm policy={policy.data} onSaved={() => policy.reload()} />
        </>
      )}
    </>
  );
}
