package retryd

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fast retries in process: no waits worth the name.
var fast = &RetryPolicy{MaxAttempts: 3, BackoffType: BackoffFixed, InitialDelayMs: 1, Multiplier: 1, MaxDelayMs: 1_000, JitterType: JitterFull}

func TestTransportRetriesWithOneDerivedKeyAndTheBodyEachTime(t *testing.T) {
	tg := newTarget(t, 503, 502, 201)
	client := &http.Client{Transport: &Transport{Policy: fast}}
	res, err := client.Post(tg.URL+"/orders/?b=2&a=1", "application/json", strings.NewReader(`{"sku":"A"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 201 || string(body) != `{"answer":201}` {
		t.Fatalf("answered %d %s", res.StatusCode, body)
	}
	want, _ := DeriveIdempotencyKey("POST", tg.URL+"/orders?a=1&b=2", []byte(`{"sku":"A"}`))
	got := tg.requests()
	if len(got) != 3 {
		t.Fatalf("%d attempts", len(got))
	}
	for i, r := range got {
		if r.header.Get(IdempotencyKeyHeader) != want || r.body != `{"sku":"A"}` {
			t.Fatalf("attempt %d carried key %q and body %q, want %q", i+1, r.header.Get(IdempotencyKeyHeader), r.body, want)
		}
	}
}

func TestTransportKeepsTheCallersKeyAndKeysNoGet(t *testing.T) {
	tg := newTarget(t, 500, 200)
	client := &http.Client{Transport: &Transport{Policy: fast}}
	req, _ := http.NewRequest("PATCH", tg.URL+"/x", strings.NewReader("p"))
	req.Header.Set(IdempotencyKeyHeader, "mine-1")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	res, err = client.Get(tg.URL + "/y")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	got := tg.requests()
	if got[0].header.Get(IdempotencyKeyHeader) != "mine-1" || got[1].header.Get(IdempotencyKeyHeader) != "mine-1" || got[2].header.Get(IdempotencyKeyHeader) != "" {
		t.Fatalf("keys %q %q %q", got[0].header.Get(IdempotencyKeyHeader), got[1].header.Get(IdempotencyKeyHeader), got[2].header.Get(IdempotencyKeyHeader))
	}
	if req.Header.Get(IdempotencyKeyHeader) != "mine-1" || len(req.Header) != 1 {
		t.Fatalf("the caller's request was changed: %v", req.Header)
	}
}

func TestTransportReturnsAPermanentAnswerAtOnceAndTheLastRetryableOneAtTheEnd(t *testing.T) {
	tg := newTarget(t, 404)
	client := &http.Client{Transport: &Transport{Policy: fast}}
	res, err := client.Get(tg.URL)
	if err != nil || res.StatusCode != 404 || len(tg.requests()) != 1 {
		t.Fatalf("answered %v, %v after %d attempts", res, err, len(tg.requests()))
	}
	res.Body.Close()
	tg = newTarget(t, 503)
	res, err = client.Get(tg.URL)
	if err != nil || res.StatusCode != 503 || len(tg.requests()) != 3 {
		t.Fatalf("answered %v, %v after %d attempts", res, err, len(tg.requests()))
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != `{"answer":503}` {
		t.Fatalf("the last answer's body was %q", body)
	}
}

func TestTransportWaitsWhatRetryAfterAsksWithinMaxDelay(t *testing.T) {
	tg := newTarget(t, 429, 200)
	tg.header.Set("Retry-After", "1")
	start := time.Now()
	res, err := (&http.Client{Transport: &Transport{Policy: fast}}).Get(tg.URL)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("answered %v, %v", res, err)
	}
	res.Body.Close()
	if elapsed := time.Since(start); elapsed < time.Second {
		t.Fatalf("retried after %v, before the Retry-After of 1 s", elapsed)
	}
	// Longer than MaxDelayMs: no wait, the answer as it is.
	tg = newTarget(t, 503, 200)
	tg.header.Set("Retry-After", "5")
	start = time.Now()
	res, err = (&http.Client{Transport: &Transport{Policy: fast}}).Get(tg.URL)
	if err != nil || res.StatusCode != 503 || time.Since(start) > 2*time.Second || len(tg.requests()) != 1 {
		t.Fatalf("answered %v, %v after %v and %d attempts", res, err, time.Since(start), len(tg.requests()))
	}
	res.Body.Close()
}

func TestTransportStopsAtTheContextsDeadlineAndCancelsTheAttempt(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	tg := newTarget(t, 503)
	slow := &Transport{Policy: fast, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if len(tg.requests()) < 2 {
			return http.DefaultTransport.RoundTrip(r)
		}
		select {
		case <-hang:
		case <-r.Context().Done():
		}
		return nil, r.Context().Err()
	})}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", tg.URL, nil)
	start := time.Now()
	_, err := slow.RoundTrip(req)
	var retryErr *RetryError
	if !errors.As(err, &retryErr) || retryErr.Reason != GiveUpBudget || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %#v", err)
	}
	if elapsed := time.Since(start); elapsed < 290*time.Millisecond || elapsed > 5*time.Second {
		t.Fatalf("gave up after %v, the deadline was 300 ms", elapsed)
	}
}

func TestTransportRetriesARefusedConnectionAndReportsTheLastError(t *testing.T) {
	listener, _ := net.Listen("tcp", "127.0.0.1:0")
	address := listener.Addr().String()
	listener.Close()
	_, err := (&http.Client{Transport: &Transport{Policy: fast}}).Get("http://" + address + "/x")
	var retryErr *RetryError
	if !errors.As(err, &retryErr) || retryErr.Attempts != 3 || retryErr.Reason != GiveUpMaxAttempts || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("error %#v", err)
	}
}

func TestTransportHandsAFailingCallToRetrydAndAnswers202(t *testing.T) {
	retrydClient := NewClient(ClientOptions{URL: serviceURL(t)})
	tg := newTarget(t, 503)
	transport := &Transport{Policy: &RetryPolicy{MaxAttempts: 2, BackoffType: BackoffFixed, InitialDelayMs: 1, Multiplier: 1, MaxDelayMs: 1, JitterType: JitterNone}, Handoff: &Handoff{
		Client: retrydClient, Policy: quick, CredentialRules: CredentialRules{Secrets: map[string]string{"Authorization": "ORDERS_TOKEN"}},
	}}
	call := func() *http.Response {
		req, _ := http.NewRequest("POST", tg.URL+"/charges", strings.NewReader(`{"amount":5}`))
		req.Header.Set("Authorization", "Bearer caller-token")
		req.Header.Set("X-Api-Key", "k-1")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Connection", "close")
		res, err := (&http.Client{Transport: transport}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := call()
	var answer struct{ Status, TaskID string }
	_ = json.NewDecoder(res.Body).Decode(&answer)
	res.Body.Close()
	taskID, queued := QueuedTaskID(res)
	if res.StatusCode != 202 || answer.Status != "queued" || answer.TaskID == "" || !queued || taskID != answer.TaskID {
		t.Fatalf("answered %d %+v", res.StatusCode, answer)
	}
	tg.script(200)
	ctx := testContext(t)
	ended, err := retrydClient.WaitForTask(ctx, taskID, 0)
	if err != nil || ended.Status != StatusSucceeded {
		t.Fatalf("the task ended %+v, %v", ended, err)
	}
	// Two attempts in process, then retryd's (one more when its first came before the script changed).
	got := tg.requests()
	first, byRetryd := got[0], got[len(got)-1]
	if len(got) < 3 || byRetryd.header.Get(IdempotencyKeyHeader) != first.header.Get(IdempotencyKeyHeader) || ended.IdempotencyKey != first.header.Get(IdempotencyKeyHeader) {
		t.Fatalf("%d requests; keys: the call's %q, retryd's %q, the task's %q", len(got), first.header.Get(IdempotencyKeyHeader), byRetryd.header.Get(IdempotencyKeyHeader), ended.IdempotencyKey)
	}
	if byRetryd.header.Get("Authorization") != secretValue || byRetryd.header.Get("X-Api-Key") != "" || byRetryd.body != `{"amount":5}` || byRetryd.header.Get("Content-Type") != "application/json" {
		t.Fatalf("retryd sent %+v", byRetryd)
	}
	// The same call again is the same task.
	tg.script(503)
	again := call()
	again.Body.Close()
	if id, _ := QueuedTaskID(again); id != taskID {
		t.Fatalf("the same call made task %s, then %s", taskID, id)
	}
}

func TestTransportSaysWhenRetrydCannotTakeTheCall(t *testing.T) {
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	address := closed.Addr().String()
	closed.Close()
	retry := RetryPolicy{MaxAttempts: 1, BackoffType: BackoffFixed, InitialDelayMs: 1, Multiplier: 1, MaxDelayMs: 1, JitterType: JitterNone}
	tg := newTarget(t, 500)
	transport := &Transport{Policy: fast, Handoff: &Handoff{Client: NewClient(ClientOptions{URL: "http://" + address, Retry: &retry})}}
	_, err := (&http.Client{Transport: transport}).Post(tg.URL, "text/plain", strings.NewReader("x"))
	var handoffErr *HandoffError
	var unreachable *UnreachableError
	if !errors.As(err, &handoffErr) || handoffErr.Status != 500 || !errors.As(err, &unreachable) {
		t.Fatalf("error %#v", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
