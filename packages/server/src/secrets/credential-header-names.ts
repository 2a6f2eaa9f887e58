import { ENQUEUE_LIMITS, HEADER_NAME_PATTERN } from '../tasks/enqueue-input.js';
import { SecretsFileError } from './secret-provider.js';

/**
 * The header names an operator counts as credentials besides the built-in rule (`--credential-headers`,
 * `RETRYD_CREDENTIAL_HEADERS`, comma-separated, any letter case): `X-Partner-Id,X-Tenant-Pin`. Each is a header name
 * a task may give (token characters, at most 256 bytes).
 * @throws SecretsFileError naming the flag and the name that breaks the rule
 */
export function parseCredentialHeaderNames(names: string | readonly string[] | undefined, flag = '--credential-headers'): string[] {
  const list = typeof names === 'string' ? names.split(',') : (names ?? []);
  const out: string[] = [];
  for (const raw of list) {
    const name = raw.trim();
    if (name === '') continue;
    if (!HEADER_NAME_PATTERN.test(name) || name.length > ENQUEUE_LIMITS.headerNameLength) {
      throw new SecretsFileError(
        `${flag} must list header names of token characters (RFC 9110), at most ${ENQUEUE_LIMITS.headerNameLength} bytes each, separated by commas; got ${JSON.stringify(name.slice(0, 40))}`,
      );
    }
    out.push(name.toLowerCase());
  }
  return out;
}
