/** Policy ids: a letter or digit, then up to 127 letters, digits, `.`, `_`, `:` or `-`. */
export const POLICY_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** {@link POLICY_ID_PATTERN} in words, for validation messages. */
export const POLICY_ID_RULE = 'a string of 1 to 128 letters, digits, ".", "_", ":" or "-", starting with a letter or digit';
