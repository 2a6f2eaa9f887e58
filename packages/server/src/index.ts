/**
 * `@retryd/server`: the retryd service — an HTTP API that takes calls to retry, durable state, and the workers
 * that make the attempts. `retryd serve` runs it; {@link startRetryd} embeds it.
 * @packageDocumentation
 */
export { startRetryd, redactUrl, type RunningRetryd, type StartRetrydOptions } from './service/start-retryd.js';
export { AttemptSpanAttribute } from './engine/attempt-tracing.js';
export { parseTraceparent, formatTraceparent, type Traceparent } from './domain/traceparent.js';
export { DEFAULT_CONFIG, ConfigError, type RetrydConfig } from './service/retryd-config.js';
export { createLogger } from './service/logger.js';
export { buildApp, type BuildAppOptions } from './api/build-app.js';
export { TaskService, type TaskServiceOptions, type TaskServiceStore } from './tasks/task-service.js';
export { Engine } from './engine/engine.js';
export type { EngineOptions, EngineStore, StopOptions } from './engine/engine-options.js';
export { openStore, parseStoreUrl, DEFAULT_STORE_URL } from './service/open-store.js';
export type * from './store/store.js';
export type * from './domain/task.js';
export { AttemptLogOutcome, DEFAULT_TENANT, RetryDelayReasons } from './domain/task.js';
export { TASK_FIELDS, TASK_FIELD_NAMES, type TaskFieldName, type FieldSpec } from './domain/task-fields.js';
export { targetKeyOf } from './domain/target-key.js';
export { DEFAULT_POLICY_ID, DEFAULT_SERVICE_POLICY } from './policies/default-policy.js';
export { TaskSecrets, type TaskSecretsOptions } from './secrets/task-secrets.js';
export { parseKeyring, EncryptionKeyError, type Keyring, type EncryptionKey } from './secrets/encryption-keys.js';
export {
  rotateStoredSecrets,
  DEFAULT_ROTATION_BATCH,
  type RotateStoredSecretsOptions,
  type RotationReport,
  type RotationCounts,
  type RotationFailure,
} from './secrets/rotate-stored-secrets.js';
export {
  envSecretProvider,
  fileSecretProvider,
  chainSecretProviders,
  checkSecretVariables,
  tenantSecretVariable,
  SecretsFileError,
  type SecretProvider,
  type SecretRef,
} from './secrets/secret-provider.js';
export { isCredentialHeader, redactHeaders, redactUrlQuery, urlOrigin, REDACTED } from './secrets/redaction.js';
export type { StoredHeaders, StoredHeaderValue, SecretHeaderValue } from './domain/header-value.js';
export { TargetGuard, parseAllowList, type TargetGuardOptions, type TargetVerdict, type HostLookup } from './security/target-guard.js';
export { TargetBlockedError, guardedConnector, isTargetBlocked } from './security/guarded-connector.js';
export { BLOCKED_RANGES, IPV4_EMBEDDINGS, type BlockedRange } from './security/blocked-ranges.js';
export { webhookKey, webhookSignature, WEBHOOK_SECRET_PREFIX } from './security/webhook-signature.js';
export { DeadLetterReason } from './domain/dead-letter-reason.js';
export { TargetProtection, type TargetProtectionOptions, type KnownTargetState } from './protection/target-protection.js';
export {
  ServiceMetrics,
  MAX_TARGET_LABELS,
  MAX_POLICY_LABELS,
  MAX_REASON_LABELS,
  INLINE_POLICY_LABEL,
  type ServiceMetricsOptions,
} from './metrics/service-metrics.js';
export { LabelCap, OTHER_LABEL, TenantLabelCap } from './metrics/label-cap.js';
export type { EngineMetrics, TimedStoreCall } from './engine/engine-metrics.js';
export {
  DEFAULT_TARGET_SETTINGS,
  PROTECTIONS_OFF,
  applySettingsPatch,
  type TargetSettings,
  type TargetSettingsPatch,
  type TargetSettingsCheck,
  type BreakerSettings,
  type AdaptiveSettings,
  type RetryBudgetSettings,
  type StormSettings,
  type SigningSettings,
} from './protection/target-settings.js';
export type { TargetControl, TargetStatus, BreakerView, BreakerAction } from './protection/target-control.js';
export type { ProtectionEvent, BreakerOpenCause, BreakerCloseCause } from './protection/protection-events.js';
