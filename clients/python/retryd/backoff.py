"""@retryd/core's delay math and retry decision, ported: pure functions of the policy, the retry number, the previous
delay and a random draw."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .types import RetryPolicy

DEFAULT_POLICY = RetryPolicy(max_attempts=3, backoff_type="EXPONENTIAL", initial_delay_ms=100, multiplier=2,
                             max_delay_ms=10_000, jitter_type="FULL")
"""@retryd/core's DEFAULT_POLICY: 3 attempts, exponential from 100 ms doubling up to 10 s, full jitter."""

DEFAULT_RETRYABLE_STATUS_CODES = (408, 425, 429, 500, 502, 503, 504)
"""Statuses retried when a policy names none."""

GIVE_UP_MAX_ATTEMPTS = "max_attempts"
GIVE_UP_BUDGET = "budget"
GIVE_UP_RETRY_AFTER_BEYOND_BUDGET = "retry_after_beyond_budget"


def base_delay(policy: RetryPolicy, n: int) -> float:
    """The capped delay before retry ``n`` without jitter: FIXED ``initial``, LINEAR ``initial × n``, EXPONENTIAL
    ``initial × multiplier^(n−1)``, then at most ``max_delay_ms`` (an overflow is ``max_delay_ms``)."""
    if policy.backoff_type == "LINEAR":
        base = policy.initial_delay_ms * n
    elif policy.backoff_type == "EXPONENTIAL":
        try:
            base = policy.initial_delay_ms * math.pow(policy.multiplier, n - 1)
        except OverflowError:
            return policy.max_delay_ms
    else:
        base = policy.initial_delay_ms
    return min(policy.max_delay_ms, base) if math.isfinite(base) else policy.max_delay_ms


def compute_delay(policy: RetryPolicy, n: int, previous_delay_ms: float, random: float) -> float:
    """@retryd/core's computeDelay: the delay in ms before retry ``n`` (``n = 1`` is the second attempt).

    NONE: the capped base; FULL: ``uniform(0, cap)``; EQUAL: ``cap/2 + uniform(0, cap/2)``; DECORRELATED:
    ``min(max_delay_ms, uniform(initial, max(initial, previous_delay_ms) × 3))``. ``random`` is a draw in [0, 1).
    (``math.pow`` may differ from JavaScript's ``Math.pow`` in the last bit: delays agree with core's to within a
    rounding.)

    :raises ValueError: when ``n`` is not an integer >= 1
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")

    def uniform(low: float, high: float) -> float:
        return low + random * (high - low)

    cap = base_delay(policy, n)
    if policy.jitter_type == "FULL":
        return uniform(0, cap)
    if policy.jitter_type == "EQUAL":
        return cap / 2 + uniform(0, cap / 2)
    if policy.jitter_type == "DECORRELATED":
        previous = previous_delay_ms if math.isfinite(previous_delay_ms) else policy.initial_delay_ms
        high = min(max(policy.initial_delay_ms, previous) * 3, 1.7976931348623157e308)
        return min(policy.max_delay_ms, uniform(policy.initial_delay_ms, high))
    return cap


@dataclass(frozen=True)
class RetryPlan:
    """What follows a retryable failure: ``retry`` with ``delay_ms``, or ``reason`` to stop."""

    retry: bool
    delay_ms: float = 0.0
    previous_delay_ms: float = 0.0
    reason: str | None = None


def plan_retry(policy: RetryPolicy, attempts_made: int, elapsed_ms: float, previous_delay_ms: float,
               retry_after_ms: float | None, random: float) -> RetryPlan:
    """@retryd/core's planRetry for a retry someone waits on (capRetryAfterAtMaxDelay): a Retry-After hint replaces the
    computed delay, and one longer than ``max_delay_ms`` or ending past the budget stops the retries rather than hold
    the caller; otherwise the delay is clipped so that the next attempt starts with ``estimated_call_ms`` left."""
    if attempts_made >= policy.max_attempts:
        return RetryPlan(False, reason=GIVE_UP_MAX_ATTEMPTS)
    hinted = retry_after_ms is not None and math.isfinite(retry_after_ms) and retry_after_ms >= 0
    beyond_max_delay = hinted and retry_after_ms > policy.max_delay_ms
    computed = retry_after_ms if hinted else compute_delay(policy, attempts_made, previous_delay_ms, random)
    previous = previous_delay_ms if hinted else computed
    if policy.total_budget_ms is None:
        if beyond_max_delay:
            return RetryPlan(False, reason=GIVE_UP_RETRY_AFTER_BEYOND_BUDGET)
        return RetryPlan(True, computed, previous)
    remaining = policy.total_budget_ms - (policy.estimated_call_ms or 0) - elapsed_ms
    if remaining < 0:
        return RetryPlan(False, reason=GIVE_UP_BUDGET)
    if hinted and (computed > remaining or beyond_max_delay):
        return RetryPlan(False, reason=GIVE_UP_RETRY_AFTER_BEYOND_BUDGET)
    return RetryPlan(True, min(computed, remaining), previous)
