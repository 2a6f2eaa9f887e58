package retryd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
)

// InRequestDeadline bounds a call through Transport whose policy names no TotalBudgetMs, as @retryd/client's
// retrying fetch does: 30 s, attempts and waits included. An earlier deadline of the request's context wins.
const InRequestDeadline = 30 * time.Second

// Transport is an http.RoundTripper that retries a request in process, as @retryd/client's retrying fetch does:
//
//   - retried: transport errors IsRetryableError accepts and the policy's retryable statuses (default 408, 425, 429,
//     500, 502, 503, 504), waiting ComputeDelay's delay (full jitter by default) between attempts;
//   - the deadline is the request context's, or Policy.TotalBudgetMs (InRequestDeadline when 0) if earlier: no
//     attempt starts past it, and one still running when it passes is cancelled;
//   - a Retry-After on a retryable answer replaces the delay; one longer than MaxDelayMs or ending past the deadline
//     stops the retries at once;
//   - POST and PATCH (KeyedMethods) carry one Idempotency-Key on every attempt: the request's own, else
//     DeriveIdempotencyKey's (a random one where the URL gives none);
//   - the body is read once and sent again on every attempt (it is held in memory).
//
// When the retries end on a retryable status, that response is returned; on a transport error, a *RetryError.
// With Handoff set, such a request is handed to retryd instead, and the caller gets a 202 (see Handoff).
//
//	client := &http.Client{Transport: &retryd.Transport{}}
//	res, err := client.Post("https://api.example.com/orders", "application/json", strings.NewReader(order))
type Transport struct {
	// Base makes each attempt. Default http.DefaultTransport.
	Base http.RoundTripper
	// Policy is the retry policy. Default DefaultPolicy (3 attempts, 100 ms doubling up to 10 s, full jitter).
	Policy *RetryPolicy
	// KeyedMethods get a derived Idempotency-Key when the request has none. Default POST and PATCH.
	KeyedMethods []string
	// RetryOnError says whether a transport error is worth another attempt. Default IsRetryableError.
	RetryOnError func(error) bool
	// Handoff, when set, hands a request whose retries ended on a retryable failure to retryd.
	Handoff *Handoff
	// Random draws the jitter, in [0, 1). Default a math/rand source seeded from crypto/rand.
	Random func() float64
}

// outcome is what one attempt gave: a response or an error.
type outcome struct {
	res *http.Response
	err error
}

// RoundTrip sends the request with retries; see Transport.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	policy := DefaultPolicy
	if t.Policy != nil {
		policy = *t.Policy
	}
	budget := InRequestDeadline
	if policy.TotalBudgetMs > 0 {
		budget = time.Duration(policy.TotalBudgetMs * float64(time.Millisecond))
	}
	start := time.Now()
	deadline := start.Add(budget)
	if d, ok := req.Context().Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	ctx, cancel := context.WithDeadline(req.Context(), deadline)
	key := t.keyFor(req, body)
	previousDelayMs := 0.0
	for attempt := 1; ; attempt++ {
		res, err := t.base().RoundTrip(attemptOf(req, ctx, body, key))
		var retryAfterMs *float64
		if err == nil {
			if !retryableStatus(policy, res.StatusCode) {
				res.Body = &cancelOnClose{ReadCloser: res.Body, cancel: cancel}
				return res, nil
			}
			if ms, ok := ParseRetryAfter(res.Header.Get("Retry-After"), time.Now()); ok {
				hint := float64(ms)
				retryAfterMs = &hint
			}
		} else if errors.Is(req.Context().Err(), context.Canceled) || (ctx.Err() == nil && !t.retryOnError(err)) {
			cancel()
			return nil, err
		}
		last := outcome{res, err}
		elapsedMs := float64(time.Since(start)) / float64(time.Millisecond)
		plan := planRetry(policy, attempt, elapsedMs, float64(deadline.Sub(start))/float64(time.Millisecond), previousDelayMs, retryAfterMs, t.random())
		if ctx.Err() != nil {
			plan = retryPlan{reason: GiveUpBudget}
		}
		if !plan.retry {
			return t.giveUp(req, body, key, last, &RetryError{Reason: plan.reason, Attempts: attempt, Err: err}, cancel)
		}
		if res != nil {
			drain(res)
		}
		previousDelayMs = plan.previousDelayMs
		if err := sleepContext(req.Context(), time.Duration(plan.delayMs*float64(time.Millisecond))); err != nil {
			cancel()
			return nil, err
		}
	}
}

// giveUp ends a call whose retries ended on a retryable failure: handed to retryd when there is a Handoff (the
// caller has not cancelled it), else the last response as it is, or the error.
func (t *Transport) giveUp(req *http.Request, body []byte, key string, last outcome, retryErr *RetryError, cancel context.CancelFunc) (*http.Response, error) {
	if t.Handoff != nil && !errors.Is(req.Context().Err(), context.Canceled) {
		if last.res != nil {
			drain(last.res)
		}
		cancel()
		return t.Handoff.handOff(req, body, key, last)
	}
	if last.res != nil {
		last.res.Body = &cancelOnClose{ReadCloser: last.res.Body, cancel: cancel}
		return last.res, nil
	}
	cancel()
	return nil, retryErr
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

func (t *Transport) retryOnError(err error) bool {
	if t.RetryOnError != nil {
		return t.RetryOnError(err)
	}
	return IsRetryableError(err)
}

func (t *Transport) random() float64 {
	if t.Random != nil {
		return t.Random()
	}
	return sharedRandom.Float64()
}

// keyFor is the request's Idempotency-Key: its own, else derived for a keyed method (any method when calls may be
// handed to retryd), else none.
func (t *Transport) keyFor(req *http.Request, body []byte) string {
	if key := req.Header.Get(IdempotencyKeyHeader); key != "" {
		return key
	}
	methods := t.KeyedMethods
	if methods == nil {
		methods = []string{"POST", "PATCH"}
	}
	keyed := t.Handoff != nil
	for _, m := range methods {
		keyed = keyed || strings.EqualFold(m, req.Method)
	}
	if !keyed {
		return ""
	}
	if key, err := DeriveIdempotencyKey(req.Method, req.URL.String(), body); err == nil {
		return key
	}
	// Not derivable here (user information in the URL, a host in Unicode): a key per call is what retries need.
	return randomKey()
}

func retryableStatus(p RetryPolicy, status int) bool {
	if status >= 200 && status <= 299 {
		return false
	}
	for _, s := range p.SuccessStatusCodes {
		if s == status {
			return false
		}
	}
	codes := p.RetryableStatusCodes
	if codes == nil {
		codes = DefaultRetryableStatusCodes
	}
	for _, s := range codes {
		if s == status {
			return true
		}
	}
	return false
}

// readBody reads and closes the request's body (a RoundTripper must close it): every attempt sends these bytes.
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	return io.ReadAll(req.Body)
}

// attemptOf is one attempt's request: a copy under the call's deadline, with the body and the key.
func attemptOf(req *http.Request, ctx context.Context, body []byte, key string) *http.Request {
	r := req.Clone(ctx)
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		r.ContentLength = int64(len(body))
	} else if req.Body != nil {
		r.Body, r.GetBody, r.ContentLength = http.NoBody, nil, 0
	}
	if key != "" {
		r.Header.Set(IdempotencyKeyHeader, key)
	}
	return r
}

// drain reads a little of an answer that is not returned and closes it, so that its connection can be reused.
func drain(res *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	_ = res.Body.Close()
}

// cancelOnClose ends the call's deadline context when the caller closes the answer's body (not before: the body is
// read under it).
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
