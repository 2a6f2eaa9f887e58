package retryd_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	retryd "retryd/clients/go"
)

// The README quotes these functions whole (readme_test.go checks it): they compile with every change.

func ExampleClient() {
	client := retryd.NewClient(retryd.ClientOptions{URL: "http://127.0.0.1:8080"}) // API key from RETRYD_API_KEY
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	answer, err := client.EnqueueTask(ctx, retryd.EnqueueRequest{
		TargetURL: "https://api.example.com/charges",
		Method:    "POST",
		Headers:   map[string]string{"content-type": "application/json"},
		Body:      map[string]any{"amount": 500, "currency": "EUR"},
	})
	var apiErr *retryd.APIError
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.Code, apiErr.Detail) // e.g. VALIDATION_FAILED targetUrl must …
		return
	} else if err != nil {
		panic(err)
	}
	ended, err := client.WaitForTask(ctx, answer.Task.TaskID, 0)
	if err == nil && ended.Status != retryd.StatusSucceeded {
		fmt.Println(*ended.DeadLetterReason)
		_, _ = client.ReplayTask(ctx, ended.TaskID)
	}
}

func ExampleTransport() {
	client := &http.Client{Transport: &retryd.Transport{
		Policy: &retryd.RetryPolicy{MaxAttempts: 4, BackoffType: retryd.BackoffExponential, InitialDelayMs: 100, Multiplier: 2, MaxDelayMs: 2_000, JitterType: retryd.JitterFull},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // the deadline of every attempt and wait
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", "https://api.example.com/orders", strings.NewReader(`{"sku":"A"}`))
	res, err := client.Do(req) // one Idempotency-Key on every attempt
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
}

func ExampleHandoff() {
	transport := &retryd.Transport{
		Policy: &retryd.RetryPolicy{MaxAttempts: 1, BackoffType: retryd.BackoffFixed, InitialDelayMs: 1, Multiplier: 1, MaxDelayMs: 1, JitterType: retryd.JitterNone},
		Handoff: &retryd.Handoff{
			Client:          retryd.NewClient(retryd.ClientOptions{URL: "http://127.0.0.1:8080"}),
			CredentialRules: retryd.CredentialRules{Secrets: map[string]string{"Authorization": "ORDERS_TOKEN"}},
		},
	}
	client := &http.Client{Transport: transport}
	req, _ := http.NewRequest("POST", "https://orders.example.com/orders", strings.NewReader(`{"sku":"A"}`))
	req.Header.Set("Authorization", "Bearer sk_live_…") // sent to retryd as {{secret:ORDERS_TOKEN}}
	res, err := client.Do(req)
	if err != nil {
		panic(err) // a *retryd.HandoffError when retryd could not take the call either
	}
	defer res.Body.Close()
	if taskID, queued := retryd.QueuedTaskID(res); queued {
		fmt.Println("handed to retryd as", taskID) // the answer is 202 {"status":"queued","taskId":"…"}
	}
}
