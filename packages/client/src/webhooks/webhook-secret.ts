const PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Bytes of standard base64 text (`atob`, which browsers, edge runtimes and Node all have). */
export function base64Bytes(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Whether `text` is strict standard base64 (padded), as signatures and secrets are written. */
export const isBase64 = (text: string): boolean => BASE64.test(text);

/**
 * The HMAC key of a Standard Webhooks secret: `whsec_` (optional, as the specification's libraries accept) and the
 * base64 of the key bytes.
 *
 * @param field - the option's name, for the message
 * @throws TypeError naming the field and the rule, never quoting the secret
 */
export function secretKeyBytes(secret: unknown, field: string): Uint8Array {
  if (typeof secret !== 'string') throw new TypeError(`${field} must be a string (whsec_ followed by base64), got ${typeof secret}`);
  const encoded = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  if (encoded.length === 0 || !isBase64(encoded)) throw new TypeError(`${field} must be whsec_ followed by standard base64 (the secret is not shown)`);
  return base64Bytes(encoded);
}
