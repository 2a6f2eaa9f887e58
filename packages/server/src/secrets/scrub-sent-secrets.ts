import { REDACTED } from './redaction.js';

/**
 * Shortest secret value scrubbed: a shorter one guards nothing, and replacing every `ok` or `1` of an excerpt would
 * leave nothing readable.
 */
export const MIN_SCRUBBED_LENGTH = 4;

/**
 * Shortest part of a value scrubbed on its own: a credential header's token after its scheme (`Bearer <token>`), a
 * cookie's value (`sid=<value>`), and a secret's head cut off by the end of the excerpt. Shorter parts are words such
 * as `Bearer` or `sid` that any answer may hold.
 */
export const MIN_SCRUBBED_PART = 8;

/** Where a header value splits into parts a target may echo on their own: `Bearer <token>`, `a=1; b=2`, `k1, k2`. */
const PART_SEPARATORS = /[\s,;=]+/;

/**
 * What an attempt sent that must not come back in its excerpt: the plain value of every sealed or referenced header
 * (whole, and each part of {@link MIN_SCRUBBED_PART} characters or more), each `{{secret:NAME}}` value it resolved,
 * and a sensitive body. Filled by `TaskSecrets.reveal` as it reveals them.
 */
export class SentSecrets {
  readonly #values = new Set<string>();

  /** A header's plain value, as sent. */
  addHeader(value: string): void {
    this.add(value);
    for (const part of value.split(PART_SEPARATORS)) if (part.length >= MIN_SCRUBBED_PART) this.#values.add(part);
  }

  /** A secret's value (a resolved reference, a sensitive body), as sent. */
  add(value: string): void {
    if (value.length >= MIN_SCRUBBED_LENGTH) this.#values.add(value);
  }

  get size(): number {
    return this.#values.size;
  }

  /**
   * The forms each value may come back in from a target that echoes what it received: as sent, escaped in a JSON
   * string (`"` and `\` and control characters), and percent-encoded; longest first, so a whole value is replaced
   * before the parts it holds.
   */
  forms(): string[] {
    const forms = new Set<string>();
    for (const value of this.#values) {
      forms.add(value);
      forms.add(JSON.stringify(value).slice(1, -1));
      forms.add(encodeURIComponent(value));
    }
    return [...forms].sort((a, b) => b.length - a.length);
  }
}

/**
 * `text` with every occurrence of the secrets' forms replaced by `[REDACTED]`, and a head of one (at least
 * {@link MIN_SCRUBBED_PART} characters) that the text ends with, since an excerpt is cut at 4 KiB wherever a secret
 * stands. What it cannot see: a secret the target sends back transformed otherwise (hashed, base64-encoded, cut in
 * the middle).
 */
export function scrubSecrets(text: string, forms: readonly string[]): string {
  let scrubbed = text;
  for (const form of forms) {
    if (scrubbed.includes(form)) scrubbed = scrubbed.split(form).join(REDACTED);
  }
  for (const form of forms) {
    const cut = cutHeadAt(scrubbed, form);
    if (cut >= 0) scrubbed = `${scrubbed.slice(0, cut)}${REDACTED}`;
  }
  return scrubbed;
}

/** Where `text` ends with the head of `form` (at least MIN_SCRUBBED_PART characters of it, not all of it), or -1. */
function cutHeadAt(text: string, form: string): number {
  if (form.length <= MIN_SCRUBBED_PART) return -1;
  const head = form.slice(0, MIN_SCRUBBED_PART);
  let at = text.indexOf(head, Math.max(0, text.length - form.length + 1));
  while (at >= 0 && at <= text.length - MIN_SCRUBBED_PART) {
    if (form.startsWith(text.slice(at))) return at;
    at = text.indexOf(head, at + 1);
  }
  return -1;
}
