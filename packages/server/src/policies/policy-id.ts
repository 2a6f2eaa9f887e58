/** Policy ids: a letter or digit, then up to 127 letters, digits, `.`, `_`, `:` or `-`. */
export const POLICY_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** {@link POLICY_ID_PATTERN} in words, for validation messages. */
export const POLICY_ID_RULE = 'a string of 1 to 128 letters, digits, ".", "_", ":" or "-", starting with a letter or digit';

/** Longest policy id: 128 characters. */
export const POLICY_ID_MAX_LENGTH = 128;

/**
 * The JSON schema of a policy id, wherever one is given (a registration, a path, a filter), so an id that can be
 * registered can always be read and changed, and `/openapi.json` says the same rule everywhere.
 */
export const POLICY_ID_SCHEMA = Object.freeze({
  type: 'string',
  minLength: 1,
  maxLength: POLICY_ID_MAX_LENGTH,
  pattern: POLICY_ID_PATTERN.source,
} as const);
