/** What a dispatch needs of a target URL: where to connect and what to ask for there. */
export interface TargetUrlParts {
  /** `http:` or `https:` (or another scheme, which the dispatcher refuses). */
  readonly protocol: string;
  /** Scheme, host and port, as undici's `origin`. */
  readonly origin: string;
  /** Path and query, as undici's `path`. */
  readonly path: string;
}

/** Most target URLs kept parsed: past this many, all are forgotten and parsed again when next dispatched. */
export const MAX_PARSED_TARGET_URLS = 1_024;

/**
 * Target URLs parsed once each rather than once per attempt: a service calls few distinct URLs many times, and a
 * WHATWG parse (`new URL`) is an allocation and a microsecond or two of every attempt. Bounded by
 * {@link MAX_PARSED_TARGET_URLS}; a URL that does not parse is not kept, and throws as `new URL` does each time.
 */
export class TargetUrlParser {
  readonly #parsed = new Map<string, TargetUrlParts>();

  /** The parts of `targetUrl`. @throws TypeError (`ERR_INVALID_URL`) when it is not a URL. */
  parse(targetUrl: string): TargetUrlParts {
    let parts = this.#parsed.get(targetUrl);
    if (parts === undefined) {
      const url = new URL(targetUrl);
      parts = { protocol: url.protocol, origin: url.origin, path: url.pathname + url.search };
      if (this.#parsed.size >= MAX_PARSED_TARGET_URLS) this.#parsed.clear();
      this.#parsed.set(targetUrl, parts);
    }
    return parts;
  }
}
