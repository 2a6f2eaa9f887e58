package retryd

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The cases @retryd/core computed (packages/core/test/client-vectors.ts): this client must agree with every one.
type vectors struct {
	IdempotencyKeys []struct {
		Name, Method, URL, Key string
		Body                   *struct {
			Text      *string `json:"text"`
			Base64    *string `json:"base64"`
			Canonical *string `json:"canonical"`
		}
		MayRefuse bool `json:"mayRefuse"`
	} `json:"idempotencyKeys"`
	InvalidIdempotencyKeys []struct{ Name, Method, URL string } `json:"invalidIdempotencyKeys"`
	Delays                 []struct {
		Schedule        RetryPolicy
		N               int
		PreviousDelayMs float64
		Random          float64
		DelayMs         float64
	}
	RetryAfter struct {
		NowMs int64
		Cases []struct {
			Value   string
			DelayMs *int64
		}
	}
	DefaultPolicy               RetryPolicy
	DefaultRetryableStatusCodes []int
	CredentialHeaders           struct {
		Words []string
		Cases []struct {
			Name       string
			Credential bool
		}
	}
}

func loadVectors(t *testing.T) vectors {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "shared", "client-vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestIdempotencyKeysAgreeWithCore(t *testing.T) {
	v := loadVectors(t)
	for _, c := range v.IdempotencyKeys {
		var body []byte
		if c.Body != nil {
			switch {
			case c.Body.Text != nil:
				body = []byte(*c.Body.Text)
			case c.Body.Base64 != nil:
				body, _ = base64.StdEncoding.DecodeString(*c.Body.Base64)
			case c.Body.Canonical != nil:
				body = []byte(*c.Body.Canonical)
			}
		}
		key, err := DeriveIdempotencyKey(c.Method, c.URL, body)
		var keyErr *KeyError
		switch {
		case err != nil && c.MayRefuse && errors.As(err, &keyErr) && keyErr.NotDerivable:
		case err != nil:
			t.Errorf("%s: %v", c.Name, err)
		case key != c.Key:
			normalised, _ := normaliseURL(c.URL)
			t.Errorf("%s: key %s, core's %s (URL written %q)", c.Name, key, c.Key, normalised)
		}
	}
	if len(v.IdempotencyKeys) < 60 {
		t.Fatalf("only %d key cases read", len(v.IdempotencyKeys))
	}
}

func TestInvalidRequestsGetNoKey(t *testing.T) {
	for _, c := range loadVectors(t).InvalidIdempotencyKeys {
		key, err := DeriveIdempotencyKey(c.Method, c.URL, nil)
		var keyErr *KeyError
		if !errors.As(err, &keyErr) || keyErr.NotDerivable {
			t.Errorf("%s: got key %q, error %v; core refuses it", c.Name, key, err)
		}
	}
}

func TestDelaysAgreeWithCore(t *testing.T) {
	v := loadVectors(t)
	for _, c := range v.Delays {
		got := ComputeDelay(c.Schedule, c.N, c.PreviousDelayMs, c.Random)
		// Within a rounding: math.Pow and JavaScript's Math.pow are not both correctly rounded.
		if math.Abs(got-c.DelayMs) > 1e-12*math.Max(1, math.Abs(c.DelayMs)) {
			t.Errorf("%+v n=%d previous=%v random=%v: %v, core's %v", c.Schedule, c.N, c.PreviousDelayMs, c.Random, got, c.DelayMs)
		}
	}
	if len(v.Delays) < 100 {
		t.Fatalf("only %d delay cases read", len(v.Delays))
	}
}

func TestRetryAfterAgreesWithCore(t *testing.T) {
	v := loadVectors(t).RetryAfter
	now := time.UnixMilli(v.NowMs)
	for _, c := range v.Cases {
		got, ok := ParseRetryAfter(c.Value, now)
		if c.DelayMs == nil && ok || c.DelayMs != nil && (!ok || got != *c.DelayMs) {
			t.Errorf("%q: %d %v, core's %v", c.Value, got, ok, c.DelayMs)
		}
	}
}

func TestDefaultsAndCredentialHeadersAgreeWithCore(t *testing.T) {
	v := loadVectors(t)
	if a, b := mustJSON(t, v.DefaultPolicy), mustJSON(t, DefaultPolicy); a != b {
		t.Errorf("DefaultPolicy %s, core's %s", b, a)
	}
	if a, b := mustJSON(t, v.DefaultRetryableStatusCodes), mustJSON(t, DefaultRetryableStatusCodes); a != b {
		t.Errorf("DefaultRetryableStatusCodes %s, core's %s", b, a)
	}
	if a, b := mustJSON(t, v.CredentialHeaders.Words), mustJSON(t, CredentialHeaderWords); a != b {
		t.Errorf("CredentialHeaderWords %s, core's %s", b, a)
	}
	for _, c := range v.CredentialHeaders.Cases {
		if IsCredentialHeader(c.Name) != c.Credential {
			t.Errorf("IsCredentialHeader(%q) = %v, core's %v", c.Name, !c.Credential, c.Credential)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
