package retryd

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// quick retries, so that the service's tasks end within a test.
var quick = &RetryPolicy{MaxAttempts: 2, BackoffType: BackoffFixed, InitialDelayMs: 10, Multiplier: 1, MaxDelayMs: 10, JitterType: JitterNone}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestEnqueueCreatesThenReplaysAndWaitSeesTheEnd(t *testing.T) {
	client, ctx := NewClient(ClientOptions{URL: serviceURL(t)}), testContext(t)
	tg := newTarget(t, 503, 200)
	request := EnqueueRequest{TargetURL: tg.URL + "/orders", Method: "POST", Body: map[string]any{"sku": "A"}, Policy: quick, IdempotencyKey: "go-enqueue-" + randomKey()}
	first, err := client.EnqueueTask(ctx, request)
	if err != nil {
		t.Fatal(err)
	}
	again, err := client.EnqueueTask(ctx, request)
	if err != nil {
		t.Fatal(err)
	}
	if first.Outcome != "created" || again.Outcome != "replayed" || again.Task.TaskID != first.Task.TaskID {
		t.Fatalf("outcomes %s then %s, tasks %s and %s", first.Outcome, again.Outcome, first.Task.TaskID, again.Task.TaskID)
	}
	ended, err := client.WaitForTask(ctx, first.Task.TaskID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ended.Status != StatusSucceeded || ended.AttemptNumber != 2 || *ended.LastResponseStatus != 200 {
		t.Fatalf("ended %s after %d attempts", ended.Status, ended.AttemptNumber)
	}
	got := tg.requests()
	if len(got) != 2 || got[1].header.Get(IdempotencyKeyHeader) != request.IdempotencyKey || got[1].body != `{"sku":"A"}` {
		t.Fatalf("the target received %+v", got)
	}
}

func TestEnqueueWithoutAKeyGivesOneSoThatARetryFindsTheTask(t *testing.T) {
	client, ctx := NewClient(ClientOptions{URL: serviceURL(t)}), testContext(t)
	answer, err := client.EnqueueTask(ctx, EnqueueRequest{TargetURL: "http://127.0.0.1:9/never", Method: "GET", DelayMs: 3_600_000})
	if err != nil {
		t.Fatal(err)
	}
	if len(answer.Task.IdempotencyKey) != 36 {
		t.Fatalf("key %q is not a UUID", answer.Task.IdempotencyKey)
	}
	if _, err := client.CancelTask(ctx, answer.Task.TaskID); err != nil {
		t.Fatal(err)
	}
}

func TestBatchGivesOneResultPerTaskInOrder(t *testing.T) {
	client, ctx := NewClient(ClientOptions{URL: serviceURL(t)}), testContext(t)
	good := EnqueueRequest{TargetURL: "http://127.0.0.1:9/batch", Method: "PUT", DelayMs: 3_600_000}
	results, err := client.EnqueueTasks(ctx, []EnqueueRequest{good, {TargetURL: "ftp://127.0.0.1/x", Method: "GET"}, good}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 || results[0].Status != 201 || results[0].TaskID == "" || results[1].Status != 400 || results[1].Error == nil || results[1].Error.Code != "VALIDATION_FAILED" || results[2].Status != 201 {
		t.Fatalf("results %+v", results)
	}
	full, err := client.EnqueueTasks(ctx, []EnqueueRequest{good}, false)
	if err != nil || full[0].Task == nil || full[0].Task.TaskSummary.Method != "PUT" {
		t.Fatalf("results %+v, %v", full, err)
	}
}

func TestProblemsAreTypedErrors(t *testing.T) {
	client, ctx := NewClient(ClientOptions{URL: serviceURL(t)}), testContext(t)
	_, err := client.EnqueueTask(ctx, EnqueueRequest{TargetURL: "ftp://127.0.0.1/x", Method: "GET"})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Code != "VALIDATION_FAILED" || len(apiErr.Errors) == 0 || apiErr.Errors[0].Field != "targetUrl" || apiErr.Detail == "" {
		t.Fatalf("error %#v", err)
	}
	_, err = client.GetTask(ctx, "00000000-0000-4000-8000-000000000000")
	if !errors.As(err, &apiErr) || apiErr.Status != 404 || apiErr.Code != "NOT_FOUND" {
		t.Fatalf("error %#v", err)
	}
}

func TestTheAPIKeyGoesAsABearerToken(t *testing.T) {
	client := NewClient(ClientOptions{URL: serviceURL(t), APIKey: "rtd_not_a_key"})
	_, err := client.GetTask(testContext(t), "00000000-0000-4000-8000-000000000000")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 401 || apiErr.Code != "UNAUTHENTICATED" {
		t.Fatalf("error %#v", err)
	}
}

func TestCancelThenWaitSeesTheCancel(t *testing.T) {
	client, ctx := NewClient(ClientOptions{URL: serviceURL(t)}), testContext(t)
	answer, err := client.EnqueueTask(ctx, EnqueueRequest{TargetURL: "http://127.0.0.1:9/later", Method: "POST", DelayMs: 3_600_000})
	if err != nil {
		t.Fatal(err)
	}
	cancelled, err := client.CancelTask(ctx, answer.Task.TaskID)
	if err != nil || cancelled.Outcome != "cancelled" || cancelled.Task.Status != StatusCancelled {
		t.Fatalf("cancel answered %+v, %v", cancelled, err)
	}
	ended, err := client.WaitForTask(ctx, answer.Task.TaskID, time.Second)
	if err != nil || ended.Status != StatusCancelled {
		t.Fatalf("wait answered %+v, %v", ended, err)
	}
	_, err = client.CancelTask(ctx, answer.Task.TaskID)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 409 {
		t.Fatalf("a second cancel answered %v", err)
	}
}

func TestWaitEndsWithTheTaskAsLastReadWhenTimeRunsOut(t *testing.T) {
	client, ctx := NewClient(ClientOptions{URL: serviceURL(t)}), testContext(t)
	answer, err := client.EnqueueTask(ctx, EnqueueRequest{TargetURL: "http://127.0.0.1:9/later", Method: "POST", DelayMs: 3_600_000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = client.CancelTask(context.Background(), answer.Task.TaskID) })
	start := time.Now()
	_, err = client.WaitForTask(ctx, answer.Task.TaskID, 300*time.Millisecond)
	var timeout *WaitTimeoutError
	if !errors.As(err, &timeout) || timeout.Task.Status != StatusPending || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %#v", err)
	}
	if elapsed := time.Since(start); elapsed < 300*time.Millisecond || elapsed > 20*time.Second {
		t.Fatalf("the wait took %v", elapsed)
	}
}

func TestDeadLettersListedAndReplayed(t *testing.T) {
	client, ctx := NewClient(ClientOptions{URL: serviceURL(t)}), testContext(t)
	tg := newTarget(t, 400)
	answer, err := client.EnqueueTask(ctx, EnqueueRequest{TargetURL: tg.URL + "/dead", Method: "POST", Body: "x", Policy: quick})
	if err != nil {
		t.Fatal(err)
	}
	dead, err := client.WaitForTask(ctx, answer.Task.TaskID, 0)
	if err != nil || dead.Status != StatusFailed {
		t.Fatalf("ended %+v, %v", dead, err)
	}
	page, err := client.ListDeadLetters(ctx, DeadLetterFilter{Status: StatusFailed, TargetKey: dead.TargetKey, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].TaskID != dead.TaskID || page.Items[0].DeadLetterReason == nil {
		t.Fatalf("page %+v", page)
	}
	tg.script(200)
	if _, err := client.ReplayTask(ctx, dead.TaskID); err != nil {
		t.Fatal(err)
	}
	ended, err := client.WaitForTask(ctx, dead.TaskID, 0)
	if err != nil || ended.Status != StatusSucceeded {
		t.Fatalf("replayed task ended %+v, %v", ended, err)
	}
}

func TestTheClientRetriesItsOwnRequestsOn503HonouringRetryAfter(t *testing.T) {
	var calls atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(503)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"taskId":"t1","status":"PENDING"}`))
	}))
	defer flaky.Close()
	start := time.Now()
	task, err := NewClient(ClientOptions{URL: flaky.URL}).GetTask(testContext(t), "t1")
	if err != nil || task.TaskID != "t1" || calls.Load() != 2 {
		t.Fatalf("task %+v, %v after %d calls", task, err, calls.Load())
	}
	if time.Since(start) < time.Second {
		t.Fatalf("retried after %v, before the Retry-After of 1 s", time.Since(start))
	}
}

func TestAnUnreachableServiceIsAnUnreachableError(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	retry := RetryPolicy{MaxAttempts: 2, BackoffType: BackoffFixed, InitialDelayMs: 1, Multiplier: 1, MaxDelayMs: 1, JitterType: JitterNone}
	_, err := NewClient(ClientOptions{URL: closed.URL, Retry: &retry}).GetTask(testContext(t), "t1")
	var unreachable *UnreachableError
	if !errors.As(err, &unreachable) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("error %#v", err)
	}
}

func TestACancelledContextEndsTheCall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewClient(ClientOptions{URL: serviceURL(t)}).GetTask(ctx, "t1")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %#v", err)
	}
}
