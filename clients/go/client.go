package retryd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// DefaultServiceURL is where `retryd serve` listens by default.
const DefaultServiceURL = "http://127.0.0.1:8080"

// APIKeyEnv is the environment variable the API key is read from when ClientOptions gives none.
const APIKeyEnv = "RETRYD_API_KEY"

// DefaultRequestTimeout is the most time one API request may take: 30 s.
const DefaultRequestTimeout = 30 * time.Second

// MaxWaitPerRequest is the longest one long poll asks the service to wait (the waitMs maximum): 30 s.
const MaxWaitPerRequest = 30 * time.Second

// DefaultWaitTimeout is how long WaitForTask waits when given 0: 60 s.
const DefaultWaitTimeout = 60 * time.Second

// ClientRetry is how the client retries its own requests when the service is unreachable or answers 429 or 503 (a
// restart, a store outage): 3 attempts, up to 200 ms then up to 400 ms with full jitter, as @retryd/client does. A
// Retry-After asking for longer wins, up to MaxDelayMs. Only requests that are safe to repeat are retried: enqueues
// always carry an idempotency key.
var ClientRetry = RetryPolicy{MaxAttempts: 3, BackoffType: BackoffExponential, InitialDelayMs: 200, Multiplier: 2, MaxDelayMs: 5_000, JitterType: JitterFull}

// ClientOptions say how to reach the service. All optional.
type ClientOptions struct {
	// URL is the service's base URL. Default DefaultServiceURL.
	URL string
	// APIKey (rtd_…) is sent as Authorization: Bearer. Default: RETRYD_API_KEY from the environment; none when unset.
	APIKey string
	// HTTPClient sends the requests. Default: a client of its own over http.DefaultTransport.
	HTTPClient *http.Client
	// RequestTimeout bounds each request (a long poll: beyond its wait). Default DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Retry is how the client's own requests are retried. Default ClientRetry.
	Retry *RetryPolicy
}

// Client is a client of the retryd HTTP API. Every method takes a context, which cancels the request and the
// client's own retries. Errors are an *APIError (the service answered a problem) or an *UnreachableError.
//
//	client := retryd.NewClient(retryd.ClientOptions{URL: "http://127.0.0.1:8080"})
//	answer, err := client.EnqueueTask(ctx, retryd.EnqueueRequest{TargetURL: "https://api.example.com/charge", Method: "POST", Body: map[string]any{"amount": 5}})
type Client struct {
	url     string
	apiKey  string
	http    *http.Client
	timeout time.Duration
	retry   RetryPolicy
	random  func() float64
}

// NewClient makes a client; see ClientOptions for the defaults.
func NewClient(options ClientOptions) *Client {
	c := &Client{url: strings.TrimRight(options.URL, "/"), apiKey: options.APIKey, http: options.HTTPClient, timeout: options.RequestTimeout, retry: ClientRetry, random: sharedRandom.Float64}
	if c.url == "" {
		c.url = DefaultServiceURL
	}
	if c.apiKey == "" {
		c.apiKey = os.Getenv(APIKeyEnv)
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if c.timeout <= 0 {
		c.timeout = DefaultRequestTimeout
	}
	if options.Retry != nil {
		c.retry = *options.Retry
	}
	return c
}

// URL is the service's base URL, without a trailing slash.
func (c *Client) URL() string { return c.url }

// EnqueueAnswer is the outcome of an enqueue: "created", or "replayed" when the idempotency key already had a task.
type EnqueueAnswer struct {
	Outcome string
	Task    *Task
}

// EnqueueTask is POST /retry-tasks (enqueueTask). A request without an idempotency key (field or header) is given a
// random one, so that a retry of this request after a lost answer finds the same task.
func (c *Client) EnqueueTask(ctx context.Context, request EnqueueRequest) (*EnqueueAnswer, error) {
	var task Task
	status, err := c.send(ctx, "POST", "/retry-tasks", withKey(request), true, nil, c.timeout, &task)
	if err != nil {
		return nil, err
	}
	outcome := "replayed"
	if status == http.StatusCreated {
		outcome = "created"
	}
	return &EnqueueAnswer{Outcome: outcome, Task: &task}, nil
}

// EnqueueTasks is POST /retry-tasks/batch (enqueueTasks): up to 1,000 tasks, one result per task in order, each keyed
// as EnqueueTask keys it. With returnMinimal, each created or replayed entry carries its TaskID instead of the task.
func (c *Client) EnqueueTasks(ctx context.Context, requests []EnqueueRequest, returnMinimal bool) ([]BatchEntryResult, error) {
	body := batchRequest{Tasks: make([]EnqueueRequest, len(requests))}
	for i, r := range requests {
		body.Tasks[i] = withKey(r)
	}
	var headers map[string]string
	if returnMinimal {
		headers = map[string]string{"Prefer": "return=minimal"}
	}
	var answer batchResult
	if _, err := c.send(ctx, "POST", "/retry-tasks/batch", body, true, headers, c.timeout, &answer); err != nil {
		return nil, err
	}
	return answer.Results, nil
}

// GetTask is GET /retry-tasks/{taskId} (getTask).
func (c *Client) GetTask(ctx context.Context, taskID string) (*Task, error) {
	var task Task
	if _, err := c.send(ctx, "GET", "/retry-tasks/"+url.PathEscape(taskID), nil, true, nil, c.timeout, &task); err != nil {
		return nil, err
	}
	return &task, nil
}

// WaitForTask waits until the task ends (SUCCEEDED, FAILED, EXHAUSTED or CANCELLED) and returns it as it ended, by
// long polls of GET /retry-tasks/{taskId}?waitMs= (each at most MaxWaitPerRequest): the service answers the moment
// the task ends. After timeout (0: DefaultWaitTimeout), or when ctx ends after a first read, the error is a
// *WaitTimeoutError holding the task as last read; an *APIError (404) when there is no such task.
func (c *Client) WaitForTask(ctx context.Context, taskID string, timeout time.Duration) (*Task, error) {
	if timeout <= 0 {
		timeout = DefaultWaitTimeout
	}
	deadline := time.Now().Add(timeout)
	var last *Task
	for {
		wait := time.Until(deadline)
		if wait > MaxWaitPerRequest {
			wait = MaxWaitPerRequest
		}
		if wait < 0 {
			wait = 0
		}
		asked := time.Now()
		path := "/retry-tasks/" + url.PathEscape(taskID) + "?waitMs=" + strconv.FormatInt(wait.Milliseconds(), 10)
		var task Task
		if _, err := c.send(ctx, "GET", path, nil, true, nil, c.timeout+wait, &task); err != nil {
			if last != nil && ctx.Err() != nil {
				return nil, &WaitTimeoutError{Task: last, Err: ctx.Err()}
			}
			return nil, err
		}
		last = &task
		if task.Status.Ended() {
			return &task, nil
		}
		if !time.Now().Before(deadline) {
			return nil, &WaitTimeoutError{Task: last, Err: context.DeadlineExceeded}
		}
		// A service that answered before the wait it was asked for (an older one, or one with too many waiting): a
		// pause, so that this loop is never a stream of reads.
		if early := minDuration(time.Second, wait) - time.Since(asked); early > 0 {
			if err := sleepContext(ctx, minDuration(early, time.Until(deadline))); err != nil {
				return nil, &WaitTimeoutError{Task: last, Err: err}
			}
		}
	}
}

// CancelAnswer is the outcome of a cancel: "cancelled" now, or "cancel_requested" when the attempt in flight ends.
type CancelAnswer struct {
	Outcome string
	Task    *Task
}

// CancelTask is DELETE /retry-tasks/{taskId} (cancelTask). A finished task answers 409 (an *APIError).
func (c *Client) CancelTask(ctx context.Context, taskID string) (*CancelAnswer, error) {
	var task Task
	status, err := c.send(ctx, "DELETE", "/retry-tasks/"+url.PathEscape(taskID), nil, false, nil, c.timeout, &task)
	if err != nil {
		return nil, err
	}
	outcome := "cancelled"
	if status == http.StatusAccepted {
		outcome = "cancel_requested"
	}
	return &CancelAnswer{Outcome: outcome, Task: &task}, nil
}

// ReplayTask is POST /retry-tasks/{taskId}/replay (replayTask): re-drives a FAILED or EXHAUSTED task; replaying
// twice runs it once.
func (c *Client) ReplayTask(ctx context.Context, taskID string) (*Task, error) {
	var task Task
	if _, err := c.send(ctx, "POST", "/retry-tasks/"+url.PathEscape(taskID)+"/replay", nil, true, nil, c.timeout, &task); err != nil {
		return nil, err
	}
	return &task, nil
}

// DeadLetterFilter narrows ListDeadLetters. All optional.
type DeadLetterFilter struct {
	// Status is StatusFailed or StatusExhausted; both when empty.
	Status TaskStatus
	// PolicyID keeps the tasks of one registered policy.
	PolicyID string
	// TargetKey keeps the tasks of one target: an origin as tasks record it (https://api.example.com).
	TargetKey string
	// Cursor is the previous page's NextCursor.
	Cursor string
	// Limit is the page size, 1 to 1,000; 0: the service's (50).
	Limit int
}

// ListDeadLetters is GET /dead-letters (listDeadLetters): a page of FAILED and EXHAUSTED tasks, newest first. Read on
// with the page's NextCursor while it is not empty: a page may be short, even empty, and still have one.
func (c *Client) ListDeadLetters(ctx context.Context, filter DeadLetterFilter) (*TaskPage, error) {
	query := url.Values{}
	for name, value := range map[string]string{"status": string(filter.Status), "policyId": filter.PolicyID, "targetKey": filter.TargetKey, "cursor": filter.Cursor} {
		if value != "" {
			query.Set(name, value)
		}
	}
	if filter.Limit > 0 {
		query.Set("limit", strconv.Itoa(filter.Limit))
	}
	path := "/dead-letters"
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	var page TaskPage
	if _, err := c.send(ctx, "GET", path, nil, true, nil, c.timeout, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// withKey gives a request without an idempotency key (field or header) a random one.
func withKey(r EnqueueRequest) EnqueueRequest {
	if r.IdempotencyKey != "" {
		return r
	}
	for name := range r.Headers {
		if strings.EqualFold(name, IdempotencyKeyHeader) {
			return r
		}
	}
	r.IdempotencyKey = randomKey()
	return r
}

// send makes one API request, retried as c.retry says when repeatable, and decodes a 2xx answer into out.
func (c *Client) send(ctx context.Context, method, path string, body any, repeatable bool, headers map[string]string, timeout time.Duration, out any) (int, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return 0, fmt.Errorf("retryd: the request body cannot be written as JSON: %w", err)
		}
	}
	previousDelayMs := 0.0
	for attempt := 1; ; attempt++ {
		last := !repeatable || attempt >= c.retry.MaxAttempts
		status, answer, retryAfter, err := c.sendOnce(ctx, method, path, payload, headers, timeout)
		if err != nil {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			if last {
				return 0, &UnreachableError{URL: c.url, Err: err}
			}
		} else if status >= 200 && status <= 299 {
			if out != nil && len(answer) > 0 {
				if err := json.Unmarshal(answer, out); err != nil {
					return status, fmt.Errorf("retryd: the service's answer to %s %s is not what this client reads: %w", method, path, err)
				}
			}
			return status, nil
		} else if last || (status != http.StatusServiceUnavailable && status != http.StatusTooManyRequests) {
			var problem Problem
			if json.Unmarshal(answer, &problem) != nil {
				return status, newAPIError(status, nil)
			}
			return status, newAPIError(status, &problem)
		}
		computed := ComputeDelay(c.retry, attempt, previousDelayMs, c.random())
		previousDelayMs = computed
		delayMs := computed
		if asked, ok := ParseRetryAfter(retryAfter, time.Now()); ok && float64(asked) > delayMs {
			delayMs = float64(asked)
		}
		if delayMs > c.retry.MaxDelayMs {
			delayMs = c.retry.MaxDelayMs
		}
		if err := sleepContext(ctx, time.Duration(delayMs*float64(time.Millisecond))); err != nil {
			return 0, err
		}
	}
}

func (c *Client) sendOnce(ctx context.Context, method, path string, payload []byte, headers map[string]string, timeout time.Duration) (int, []byte, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url+path, body)
	if err != nil {
		return 0, nil, "", err
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	for name, value := range headers {
		req.Header.Set(name, value)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil, "", err
	}
	return res.StatusCode, answer, res.Header.Get("Retry-After"), nil
}

// sleepContext waits d, or until ctx ends (its error).
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func minDuration(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}
