import type { FieldError } from '../domain/errors.js';
import { SIGNING_SECRET_REFERENCE } from '../protection/target-settings.js';
import { webhookKey, WEBHOOK_SECRET_RULE } from '../security/webhook-signature.js';
import { unknownSecretRule, type SecretProvider } from './secret-provider.js';

/**
 * The errors of the signing secrets a settings patch of tenant `tenantId`'s target names (`{ signing: { secrets: [...] } }`),
 * each naming the field (`signing.secrets[1]`) and the rule: a reference the provider does not know for that tenant
 * (neither its own secret nor a shared one: another tenant's answers the same), or one whose value is not a Standard
 * Webhooks secret. What is not a reference is left to `applySettingsPatch`, which refuses it; a value is never quoted.
 */
export async function checkSigningSecrets(patch: unknown, provider: SecretProvider, tenantId: string): Promise<FieldError[]> {
  const secrets = (patch as { signing?: { secrets?: unknown } } | null)?.signing?.secrets;
  if (!Array.isArray(secrets)) return [];
  const errors: FieldError[] = [];
  for (const [i, secret] of secrets.entries()) {
    const name = typeof secret === 'string' ? SIGNING_SECRET_REFERENCE.exec(secret)?.[1] : undefined;
    if (name === undefined) continue;
    const value = await provider.resolve({ tenantId, name });
    const rule =
      value === undefined
        ? unknownSecretRule(tenantId, name)
        : webhookKey(value) === undefined
          ? `{{secret:${name}}} must name a Standard Webhooks secret (${WEBHOOK_SECRET_RULE}); it is not one`
          : undefined;
    const field = `signing.secrets[${i}]`;
    if (rule !== undefined) errors.push({ field, rule, message: `${field}: ${rule}` });
  }
  return errors;
}
