package retryd

import (
	"fmt"
	"strconv"
)

// APIError is an error answer of the service: its status and its problem (one made from the status when the body
// is not a problem, such as a proxy's HTML page).
//
//	var apiErr *retryd.APIError
//	if errors.As(err, &apiErr) && apiErr.Code == "VALIDATION_FAILED" { for _, e := range apiErr.Errors { … } }
type APIError struct {
	Status int
	// Code is the problem's stable code, e.g. VALIDATION_FAILED, NOT_FOUND, TASK_NOT_DEAD.
	Code string
	// Detail is the problem's one sentence naming the field and the rule.
	Detail string
	// Errors lists each broken rule (VALIDATION_FAILED); empty when the problem names none.
	Errors  []FieldError
	Problem Problem
}

func (e *APIError) Error() string {
	return fmt.Sprintf("retryd answered %d %s: %s", e.Status, e.Code, e.Detail)
}

// codeOfStatus is the code a bare status stands for when the body is not a problem.
var codeOfStatus = map[int]string{401: "UNAUTHENTICATED", 403: "FORBIDDEN", 404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 413: "PAYLOAD_TOO_LARGE", 429: "RATE_LIMITED", 503: "STORE_UNAVAILABLE"}

func newAPIError(status int, p *Problem) *APIError {
	if p == nil || p.Code == "" || p.Detail == "" {
		code, ok := codeOfStatus[status]
		if !ok && status >= 500 {
			code = "INTERNAL"
		} else if !ok {
			code = "VALIDATION_FAILED"
		}
		p = &Problem{Type: "about:blank", Title: "HTTP " + strconv.Itoa(status), Status: status, Detail: "the service answered HTTP " + strconv.Itoa(status), Code: code}
	}
	return &APIError{Status: status, Code: p.Code, Detail: p.Detail, Errors: p.Errors, Problem: *p}
}

// UnreachableError is no answer at all: the connection was refused or reset, or the request timed out.
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string { return fmt.Sprintf("cannot reach %s: %v", e.URL, e.Err) }

// Unwrap gives the transport's error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// WaitTimeoutError is WaitForTask's time running out before the task ended: Task is the task as last read.
type WaitTimeoutError struct {
	Task *Task
	Err  error
}

func (e *WaitTimeoutError) Error() string {
	return fmt.Sprintf("task %s had not ended when the wait ended (%v): it is %s", e.Task.TaskID, e.Err, e.Task.Status)
}

// Unwrap gives the context's error (context.DeadlineExceeded or context.Canceled).
func (e *WaitTimeoutError) Unwrap() error { return e.Err }
