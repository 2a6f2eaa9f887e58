const PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Fewest key bytes a secret may hold: 24 (192 bits), the Standard Webhooks specification's lower bound and the one the
 * retryd service signs with. A shorter key can be guessed offline from one signed request.
 */
export const MIN_WEBHOOK_KEY_BYTES = 24;

/** Bytes of standard base64 text (`atob`, which browsers, edge runtimes and Node all have). */
export function base64Bytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Whether `text` is strict standard base64 (padded), as signatures and secrets are written. */
export const isBase64 = (text: string): boolean => BASE64.test(text);

/**
 * The HMAC key of a Standard Webhooks secret: `whsec_` (optional, as the specification's libraries accept) and the
 * base64 of at least {@link MIN_WEBHOOK_KEY_BYTES} key bytes.
 *
 * @param field - the option's name, for the message
 * @throws TypeError naming the field and the rule, never quoting the secret
 */
export function secretKeyBytes(secret: unknown, field: string): Uint8Array<ArrayBuffer> {
  if (typeof secret !== 'string') throw new TypeError(`${field} must be a string (whsec_ followed by base64), got ${typeof secret}`);
  const encoded = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  if (encoded.length === 0 || !isBase64(encoded)) throw new TypeError(`${field} must be whsec_ followed by standard base64 (the secret is not shown)`);
  const bytes = base64Bytes(encoded);
  if (bytes.length < MIN_WEBHOOK_KEY_BYTES) {
    throw new TypeError(
      `${field} must hold at least ${MIN_WEBHOOK_KEY_BYTES} key bytes (whsec_ followed by the base64 of ${MIN_WEBHOOK_KEY_BYTES} to 64 random bytes), ` +
        `got ${bytes.length} (the secret is not shown)`,
    );
  }
  return bytes;
}
