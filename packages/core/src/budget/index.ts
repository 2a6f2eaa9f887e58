/**
 * Retry budget: retries may be at most a ratio of first attempts plus a floor, over a sliding window,
 * shared by every call to a target.
 * @packageDocumentation
 */
export { RetryBudget } from './retry-budget.js';
export { RETRY_BUDGET_DEFAULTS, type RetryBudgetOptions } from './retry-budget-options.js';
export type { RetryBudgetSnapshot, BudgetWindowCounter } from './retry-budget-snapshot.js';
