import type { AttemptTimeouts } from '../domain/attempt-timeouts.js';

/** The timeouts a message may quote: the attempt's own, as resolved for it. */
export type TimeoutSettings = AttemptTimeouts;

const MAX_MESSAGE_CHARS = 500;

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) {
    // Node's happy-eyeballs connect rejects with an AggregateError whose own message is empty.
    if (error.message === '' && error instanceof AggregateError) {
      return [...new Set(error.errors.map(messageOf))].join('; ');
    }
    return error.message;
  }
  return String(error);
}

/**
 * One readable line for the attempt log from whatever an HTTP call threw, e.g.
 * `no response headers within 30000 ms (UND_ERR_HEADERS_TIMEOUT)` or `connect ECONNREFUSED 127.0.0.1:9 (ECONNREFUSED)`.
 * The cause is appended when it says more (undici's "other side closed" hides the socket's reason in it).
 */
export function describeError(error: unknown, timeouts: TimeoutSettings): string {
  const code = codeOf(error);
  let text: string;
  switch (code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
      text = `no response headers within ${timeouts.attemptTimeoutMs} ms`;
      break;
    case 'UND_ERR_BODY_TIMEOUT':
      text = `response body stalled for ${timeouts.attemptTimeoutMs} ms`;
      break;
    case 'UND_ERR_CONNECT_TIMEOUT':
      text = `could not connect within ${timeouts.connectTimeoutMs} ms`;
      break;
    default:
      text = messageOf(error) || (error instanceof Error ? error.name : 'unknown error');
  }
  if (code !== undefined && !text.includes(code)) text += ` (${code})`;
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause !== undefined && cause !== null) {
    const causeText = messageOf(cause);
    if (causeText !== '' && !text.includes(causeText)) text += `: ${causeText}`;
  }
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS - 1)}…` : text;
}
