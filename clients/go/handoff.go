package retryd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// TaskIDHeader names the task on the 202 answer Transport gives for a call it handed to retryd.
const TaskIDHeader = "Retryd-Task-Id"

// forbiddenHeaders are the headers the service refuses on a task (hop-by-hop and framing headers, Expect): a handed
// call leaves them out, as the HTTP client that makes its attempts sets its own.
var forbiddenHeaders = map[string]bool{
	"host": true, "content-length": true, "transfer-encoding": true, "connection": true, "keep-alive": true,
	"proxy-connection": true, "proxy-authorization": true, "proxy-authenticate": true, "te": true, "trailer": true,
	"upgrade": true, "expect": true,
}

// Handoff hands a call whose in-process retries ended on a retryable failure to the retryd service, as
// @retryd/client's handoffFetch does: the call is enqueued with the same Idempotency-Key (the same call made twice is
// one task) and its credential headers stripped or replaced by {{secret:NAME}} references (CredentialRules), and the
// caller gets a 202 Accepted with the body {"status":"queued","taskId":"…"} and the task's id in the Retryd-Task-Id
// header (QueuedTaskID reads it). Set Transport.Policy.MaxAttempts to 1 for the first try only, as handoffFetch does.
//
// A body that is not UTF-8 text cannot be handed over (retryd stores bodies as text). When retryd refuses the call
// or cannot be reached, the caller gets a *HandoffError.
type Handoff struct {
	// Client is the client of the service the calls are handed to.
	Client *Client
	// PolicyID is the registered policy the service retries with. Default: the service's "default". Not with Policy.
	PolicyID string
	// Policy is an inline policy instead. Not with PolicyID.
	Policy *RetryPolicy
	CredentialRules
}

// HandoffError is a call that failed and could not be handed to retryd: Err is retryd's error (or why the call
// cannot be handed over), CallErr the call's own last error (nil when it ended on a status, Status).
type HandoffError struct {
	Err     error
	CallErr error
	Status  int
}

func (e *HandoffError) Error() string {
	call := "answered " + strconv.Itoa(e.Status)
	if e.CallErr != nil {
		call = e.CallErr.Error()
	}
	return fmt.Sprintf("the call failed (%s) and could not be handed to retryd: %v", call, e.Err)
}

// Unwrap gives retryd's error.
func (e *HandoffError) Unwrap() error { return e.Err }

// QueuedTaskID gives the task a call was handed to, when res is Transport's 202 for such a call.
func QueuedTaskID(res *http.Response) (string, bool) {
	id := res.Header.Get(TaskIDHeader)
	return id, res.StatusCode == http.StatusAccepted && id != ""
}

func (h *Handoff) handOff(req *http.Request, body []byte, key string, last outcome) (*http.Response, error) {
	fail := func(err error) (*http.Response, error) {
		status := 0
		if last.res != nil {
			status = last.res.StatusCode
		}
		return nil, &HandoffError{Err: err, CallErr: last.err, Status: status}
	}
	if !utf8.Valid(body) {
		return fail(fmt.Errorf("the body is not UTF-8 text, which retryd stores bodies as"))
	}
	headers := map[string]string{}
	for name, values := range req.Header {
		lower := strings.ToLower(name)
		if lower != idempotencyKeyLower && !forbiddenHeaders[lower] {
			headers[lower] = strings.Join(values, ", ")
		}
	}
	headers, err := StripCredentials(headers, h.CredentialRules)
	if err != nil {
		return fail(err)
	}
	request := EnqueueRequest{TargetURL: req.URL.String(), Method: strings.ToUpper(req.Method), Headers: headers, IdempotencyKey: key, PolicyID: h.PolicyID, Policy: h.Policy}
	if len(body) > 0 {
		request.Body = string(body)
	}
	// Not under the request's context: its deadline may be what ended the call, and the hand-off is what saves it.
	answer, err := h.Client.EnqueueTask(context.Background(), request)
	if err != nil {
		return fail(err)
	}
	return queuedResponse(req, answer.Task.TaskID), nil
}

func queuedResponse(req *http.Request, taskID string) *http.Response {
	id, _ := json.Marshal(taskID)
	text := `{"status":"queued","taskId":` + string(id) + `}`
	header := http.Header{"Content-Type": {"application/json"}}
	header.Set(TaskIDHeader, taskID)
	return &http.Response{
		Status: "202 Accepted", StatusCode: http.StatusAccepted, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: header, Body: io.NopCloser(strings.NewReader(text)), ContentLength: int64(len(text)), Request: req,
	}
}
