package retryd

// The API's shapes this client reads and sends, named as in the service's OpenAPI document (GET /openapi.json).
// Each JSON field here must be a property of the schema named beside it: drift_test.go checks them against the
// document the service publishes, so a renamed or retyped field fails a test before it fails a caller.

// TaskStatus is where a task stands.
type TaskStatus string

// The statuses of a task; the last four are ends.
const (
	StatusPending   TaskStatus = "PENDING"
	StatusInFlight  TaskStatus = "IN_FLIGHT"
	StatusSucceeded TaskStatus = "SUCCEEDED"
	StatusFailed    TaskStatus = "FAILED"
	StatusExhausted TaskStatus = "EXHAUSTED"
	StatusCancelled TaskStatus = "CANCELLED"
)

// Ended reports whether a task in this status will not run again (unless replayed).
func (s TaskStatus) Ended() bool {
	return s == StatusSucceeded || s == StatusFailed || s == StatusExhausted || s == StatusCancelled
}

// EnqueueRequest is a call for retryd to make until it succeeds or its policy gives up (schema EnqueueRequest).
type EnqueueRequest struct {
	// TargetURL is http or https; private addresses are refused unless the service's --allow-targets covers them.
	TargetURL string `json:"targetUrl"`
	// Method is GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS.
	Method string `json:"method"`
	// Headers are sent on every attempt; credential headers are stored sealed and shown [REDACTED].
	Headers map[string]string `json:"headers,omitempty"`
	// Body is a string, sent as is, or any other JSON value, sent as JSON. nil: no body.
	Body any `json:"body,omitempty"`
	// PolicyID names a registered policy; default "default". Not with Policy.
	PolicyID string `json:"policyId,omitempty"`
	// Policy is an inline policy. Not with PolicyID.
	Policy *RetryPolicy `json:"policy,omitempty"`
	// IdempotencyKey: the same key answers the existing task. Enqueue methods give a request without one a random key,
	// so that their own retries of a lost answer find the task they made.
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
	// DelayMs puts the first attempt this long after the enqueue.
	DelayMs int64 `json:"delayMs,omitempty"`
	// SecretHeaders names more headers to keep secret like credential headers.
	SecretHeaders []string `json:"secretHeaders,omitempty"`
	// AttemptTimeoutMs is the most time each attempt may take; 0: the target's, else the service's.
	AttemptTimeoutMs int64 `json:"attemptTimeoutMs,omitempty"`
	// ConnectTimeoutMs is the most time each attempt may spend connecting; 0: the target's, else the service's.
	ConnectTimeoutMs int64 `json:"connectTimeoutMs,omitempty"`
}

// TaskSummary is a task as listings show it, without its body (schema TaskSummary).
type TaskSummary struct {
	TaskID         string            `json:"taskId"`
	IdempotencyKey string            `json:"idempotencyKey"`
	TargetURL      string            `json:"targetUrl"`
	TargetKey      string            `json:"targetKey"`
	Method         string            `json:"method"`
	Headers        map[string]string `json:"headers"`
	BodyRef        *string           `json:"bodyRef"`
	PolicyID       *string           `json:"policyId"`
	Policy         *RetryPolicy      `json:"policy"`
	Status         TaskStatus        `json:"status"`
	// AttemptNumber counts the attempts made so far, replays included.
	AttemptNumber int `json:"attemptNumber"`
	// NextAttemptAt is when a PENDING task is due, epoch ms.
	NextAttemptAt      *int64  `json:"nextAttemptAt"`
	CreatedAt          int64   `json:"createdAt"`
	UpdatedAt          int64   `json:"updatedAt"`
	CancelRequested    bool    `json:"cancelRequested"`
	LastError          *string `json:"lastError"`
	LastResponseStatus *int    `json:"lastResponseStatus"`
	DeadLetterReason   *string `json:"deadLetterReason"`
	SensitiveBody      bool    `json:"sensitiveBody"`
	// LeaseExpiresAt is when an IN_FLIGHT task is due again if its worker dies, epoch ms.
	LeaseExpiresAt *int64 `json:"leaseExpiresAt"`
	// ExpiresAt is when a finished task is deleted with its idempotency key, epoch ms; nil while it is live.
	ExpiresAt *int64 `json:"expiresAt"`
	// AttemptTimeoutMs is the task's own attempt timeout; nil: its target's, else the service's.
	AttemptTimeoutMs *int64 `json:"attemptTimeoutMs"`
	// ConnectTimeoutMs is the task's own connect timeout; nil: its target's, else the service's.
	ConnectTimeoutMs *int64 `json:"connectTimeoutMs"`
}

// Task is one task as GET /retry-tasks/{taskId} shows it (schema Task).
type Task struct {
	TaskSummary
	// Body is nil when the task has none (or keeps it in object storage: BodyRef).
	Body *string `json:"body"`
	// Waiting says why a PENDING task that is due is not running; only on GetTask.
	Waiting *TaskWait `json:"waiting,omitempty"`
}

// TaskWait is why a due task waits: its target is held, paced or full (schema TaskWait).
type TaskWait struct {
	Reason string `json:"reason"`
	Until  *int64 `json:"until"`
	Detail string `json:"detail"`
}

// TaskPage is one page of a listing (schema TaskPage): read on with NextCursor while it is not empty.
type TaskPage struct {
	Items      []TaskSummary `json:"items"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

// batchRequest is the body of POST /retry-tasks/batch (schema BatchRequest).
type batchRequest struct {
	Tasks []EnqueueRequest `json:"tasks"`
}

// batchResult is the answer of POST /retry-tasks/batch (schema BatchResult).
type batchResult struct {
	Results []BatchEntryResult `json:"results"`
}

// BatchEntryResult is one task's outcome in a batch: Status 201 (created) or 200 (replayed) with Task (or only
// TaskID, with ReturnMinimal), any other status with Error.
type BatchEntryResult struct {
	Status int      `json:"status"`
	Task   *Task    `json:"task,omitempty"`
	TaskID string   `json:"taskId,omitempty"`
	Error  *Problem `json:"error,omitempty"`
}

// Problem is an application/problem+json answer (schema Problem).
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	// Detail is one sentence naming the field and the rule.
	Detail string `json:"detail"`
	// Code is the stable error code, e.g. VALIDATION_FAILED, NOT_FOUND.
	Code     string       `json:"code"`
	Instance string       `json:"instance,omitempty"`
	Errors   []FieldError `json:"errors,omitempty"`
}

// FieldError is one broken rule of a VALIDATION_FAILED problem.
type FieldError struct {
	Field   string `json:"field"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}
