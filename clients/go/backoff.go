package retryd

import (
	"crypto/rand"
	"encoding/binary"
	"math"
	mathrand "math/rand"
	"sync"
)

// BackoffType is how the base delay grows with the retry number.
type BackoffType string

// The backoff types of @retryd/core.
const (
	BackoffExponential BackoffType = "EXPONENTIAL"
	BackoffLinear      BackoffType = "LINEAR"
	BackoffFixed       BackoffType = "FIXED"
)

// JitterType is how randomness spreads the delay, so that callers failing together do not retry together.
type JitterType string

// The jitter types of @retryd/core.
const (
	JitterNone         JitterType = "NONE"
	JitterFull         JitterType = "FULL"
	JitterEqual        JitterType = "EQUAL"
	JitterDecorrelated JitterType = "DECORRELATED"
)

// RetryPolicy is @retryd/core's retry policy, as the service's API and [Transport] read it: plain data, times in ms.
type RetryPolicy struct {
	// MaxAttempts counts every attempt, the first included: 1 means no retries.
	MaxAttempts int         `json:"maxAttempts"`
	BackoffType BackoffType `json:"backoffType"`
	// InitialDelayMs is the delay before the first retry, > 0.
	InitialDelayMs float64 `json:"initialDelayMs"`
	// Multiplier is the growth factor of EXPONENTIAL backoff, >= 1.
	Multiplier float64 `json:"multiplier"`
	// MaxDelayMs caps every computed delay, >= InitialDelayMs.
	MaxDelayMs float64    `json:"maxDelayMs"`
	JitterType JitterType `json:"jitterType"`
	// TotalBudgetMs bounds the whole call, attempts and waits included; 0: none (Transport then uses 30 s).
	TotalBudgetMs float64 `json:"totalBudgetMs,omitempty"`
	// EstimatedCallMs is kept free in the budget: no attempt starts with less than this left.
	EstimatedCallMs float64 `json:"estimatedCallMs,omitempty"`
	// RetryableStatusCodes are the statuses worth retrying; nil: [DefaultRetryableStatusCodes].
	RetryableStatusCodes []int `json:"retryableStatusCodes,omitempty"`
	// SuccessStatusCodes are statuses besides 2xx that mean the call did its work (a 409 for a key already processed).
	SuccessStatusCodes []int `json:"successStatusCodes,omitempty"`
}

// DefaultPolicy is @retryd/core's DEFAULT_POLICY: 3 attempts, exponential from 100 ms doubling up to 10 s, full jitter.
var DefaultPolicy = RetryPolicy{MaxAttempts: 3, BackoffType: BackoffExponential, InitialDelayMs: 100, Multiplier: 2, MaxDelayMs: 10_000, JitterType: JitterFull}

// DefaultRetryableStatusCodes are retried when a policy names none: 408, 425, 429, 500, 502, 503 and 504.
var DefaultRetryableStatusCodes = []int{408, 425, 429, 500, 502, 503, 504}

// BaseDelay is the capped delay before retry n without jitter: FIXED InitialDelayMs, LINEAR InitialDelayMs × n,
// EXPONENTIAL InitialDelayMs × Multiplier^(n−1), then at most MaxDelayMs (an overflow is MaxDelayMs).
func BaseDelay(p RetryPolicy, n int) float64 {
	var base float64
	switch p.BackoffType {
	case BackoffLinear:
		base = p.InitialDelayMs * float64(n)
	case BackoffExponential:
		base = p.InitialDelayMs * math.Pow(p.Multiplier, float64(n-1))
	default:
		base = p.InitialDelayMs
	}
	if math.IsInf(base, 0) || math.IsNaN(base) {
		return p.MaxDelayMs
	}
	return math.Min(p.MaxDelayMs, base)
}

// ComputeDelay is @retryd/core's computeDelay: the delay in ms before retry n (n = 1 is the second attempt).
// NONE: the capped base; FULL: uniform(0, cap); EQUAL: cap/2 + uniform(0, cap/2);
// DECORRELATED: min(MaxDelayMs, uniform(InitialDelayMs, max(InitialDelayMs, previousDelayMs) × 3)).
// random is a draw in [0, 1). Pure: the same arguments give the same delay (math.Pow may differ from JavaScript's
// Math.pow in the last bit, so delays agree with core's to within a rounding, not always bit for bit).
func ComputeDelay(p RetryPolicy, n int, previousDelayMs, random float64) float64 {
	uniform := func(low, high float64) float64 { return low + random*(high-low) }
	cap := BaseDelay(p, n)
	switch p.JitterType {
	case JitterFull:
		return uniform(0, cap)
	case JitterEqual:
		return cap/2 + uniform(0, cap/2)
	case JitterDecorrelated:
		previous := previousDelayMs
		if math.IsInf(previous, 0) || math.IsNaN(previous) {
			previous = p.InitialDelayMs
		}
		high := math.Min(math.Max(p.InitialDelayMs, previous)*3, math.MaxFloat64)
		return math.Min(p.MaxDelayMs, uniform(p.InitialDelayMs, high))
	default:
		return cap
	}
}

// lockedRandom is a math/rand source seeded from crypto/rand, safe for concurrent use.
type lockedRandom struct {
	mu  sync.Mutex
	rnd *mathrand.Rand
}

func newLockedRandom() *lockedRandom {
	var seed [8]byte
	if _, err := rand.Read(seed[:]); err != nil {
		panic("retryd: crypto/rand failed: " + err.Error())
	}
	return &lockedRandom{rnd: mathrand.New(mathrand.NewSource(int64(binary.LittleEndian.Uint64(seed[:]))))}
}

func (r *lockedRandom) Float64() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rnd.Float64()
}

var sharedRandom = newLockedRandom()
