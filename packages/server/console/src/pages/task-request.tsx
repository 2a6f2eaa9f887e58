// What a task sends: method, URL, headers (the API shows credentials as [REDACTED]), a body excerpt, its
// Idempotency-Key, and who is told when it ends.
import type { TaskView } from '../api.js';

/** Characters of the body shown; the rest is left out (a body may be megabytes). */
const BODY_EXCERPT = 2_000;

function Body({ task }: { task: TaskView }) {
  if (task.bodyRef !== null) return <p class="hint">Kept in object storage ({task.bodyRef}); not shown here.</p>;
  if (task.body === null || task.body === '') return <p class="hint">No body.</p>;
  const cut = task.body.length > BODY_EXCERPT;
  return (
    <>
      <pre aria-label="Request body">{cut ? task.body.slice(0, BODY_EXCERPT) : task.body}</pre>
      {cut && <p class="hint">The first {BODY_EXCERPT.toLocaleString()} of {task.body.length.toLocaleString()} characters.</p>}
      {task.sensitiveBody && <p class="hint">Stored encrypted: the API shows it redacted.</p>}
    </>
  );
}

export function TaskRequest({ task }: { task: TaskView }) {
  const headers = Object.entries(task.headers);
  return (
    <section aria-labelledby="request-title">
      <h2 id="request-title">Request</h2>
      <dl class="facts">
        <dt>Call</dt>
        <dd class="mono wrap">
          {task.method} {task.targetUrl}
        </dd>
        <dt>Target</dt>
        <dd>
          <a class="mono" href={`#/targets/${encodeURIComponent(task.targetKey)}`}>
            {task.targetKey}
          </a>
        </dd>
        <dt>Idempotency-Key</dt>
        <dd class="mono wrap" aria-label="Idempotency key">
          {task.idempotencyKey}
        </dd>
        <dt>Callback</dt>
        <dd aria-label="Callback">
          {task.callback === null ? (
            'none'
          ) : (
            <>
              <span class="mono wrap">POST {task.callback.url}</span> when it ends {(task.callback.on ?? ['succeeded', 'failed', 'cancelled']).join(', ')}
              {task.callback.policyId != null && ` (policy ${task.callback.policyId})`}
            </>
          )}
        </dd>
      </dl>
      <h3>Headers</h3>
      {headers.length === 0 ? (
        <p class="hint">None of its own (retryd adds Idempotency-Key).</p>
      ) : (
        <table class="headers">
          <caption class="visually-hidden">Request headers; credentials shown as [REDACTED]</caption>
          <tbody>
            {headers.map(([name, value]) => (
              <tr key={name}>
                <th scope="row" class="mono">
                  {name}
                </th>
                <td class="mono wrap">{value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h3>Body</h3>
      <Body task={task} />
    </section>
  );
}
