package retryd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
)

// The reasons retries stop, as @retryd/core names them.
const (
	// GiveUpMaxAttempts: MaxAttempts attempts were made.
	GiveUpMaxAttempts = "max_attempts"
	// GiveUpBudget: less than EstimatedCallMs of the deadline remains.
	GiveUpBudget = "budget"
	// GiveUpRetryAfterBeyondBudget: the server asked (Retry-After) for a wait past the deadline or past MaxDelayMs.
	GiveUpRetryAfterBeyondBudget = "retry_after_beyond_budget"
)

// RetryError is a call that failed on every attempt it was given, for Reason (GiveUpMaxAttempts, GiveUpBudget or
// GiveUpRetryAfterBeyondBudget): Err is the last attempt's error.
type RetryError struct {
	Reason   string
	Attempts int
	Err      error
}

func (e *RetryError) Error() string {
	return fmt.Sprintf("gave up after %d attempts (%s): %v", e.Attempts, e.Reason, e.Err)
}

// Unwrap gives the last attempt's error.
func (e *RetryError) Unwrap() error { return e.Err }

// retryPlan is what follows a retryable failure: a wait, or a reason to stop.
type retryPlan struct {
	retry           bool
	delayMs         float64
	previousDelayMs float64
	reason          string
}

// planRetry is @retryd/core's planRetry for a retry someone waits on (capRetryAfterAtMaxDelay): a Retry-After hint
// replaces the computed delay, and one longer than MaxDelayMs or ending past the deadline stops the retries rather
// than hold the caller; otherwise the delay is clipped so that the next attempt starts with EstimatedCallMs left.
func planRetry(p RetryPolicy, attemptsMade int, elapsedMs, budgetMs, previousDelayMs float64, retryAfterMs *float64, random float64) retryPlan {
	if attemptsMade >= p.MaxAttempts {
		return retryPlan{reason: GiveUpMaxAttempts}
	}
	hinted := retryAfterMs != nil
	computed := 0.0
	if hinted {
		computed = *retryAfterMs
	} else {
		computed = ComputeDelay(p, attemptsMade, previousDelayMs, random)
	}
	remaining := budgetMs - p.EstimatedCallMs - elapsedMs
	if remaining < 0 {
		return retryPlan{reason: GiveUpBudget}
	}
	if hinted && (computed > remaining || computed > p.MaxDelayMs) {
		return retryPlan{reason: GiveUpRetryAfterBeyondBudget}
	}
	plan := retryPlan{retry: true, delayMs: computed, previousDelayMs: computed}
	if computed > remaining {
		plan.delayMs = remaining
	}
	if hinted {
		plan.previousDelayMs = previousDelayMs
	}
	return plan
}

// IsRetryableError reports whether a transport error is a failure to connect to or hear from the server that may
// pass on a later attempt, as @retryd/core's isRetryableError: the connection refused, reset, aborted or timed out, a
// broken pipe, an unreachable host or network, a temporary DNS failure, a connection closed before the answer. Not
// a name that does not resolve (an authoritative no), nor the caller's own cancellation.
func IsRetryableError(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	for _, errno := range []syscall.Errno{syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.ETIMEDOUT, syscall.EPIPE, syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ENETDOWN} {
		if errors.Is(err, errno) {
			return true
		}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return !dnsErr.IsNotFound && (dnsErr.IsTimeout || dnsErr.IsTemporary)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout() && !errors.Is(err, context.DeadlineExceeded)
}
