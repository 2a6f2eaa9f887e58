/**
 * `@retryd/client`: what calling services install to retry their own calls correctly and to hand to the retryd
 * service what must not be lost. Adapters for axios, Express and Fastify live behind their own subpaths, so importing
 * this entry point never loads them.
 *
 * @packageDocumentation
 */
export * from './service/index.js';
export { stripCredentials, isCredentialHeader, CredentialRuleError, type CredentialRules, type StrippedHeaders } from './credentials/strip-credentials.js';
export { handoffFetch, RetrydQueued, isRetrydQueued, queuedAnswer, type HandoffOptions, type RequestRetryd } from './handoff/handoff-fetch.js';
