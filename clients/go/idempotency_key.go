package retryd

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// IdempotencyKeyHeader is the header every attempt of a call carries its key in.
const IdempotencyKeyHeader = "Idempotency-Key"

// idempotencyKeyLower is IdempotencyKeyHeader as header maps built by hand key it.
const idempotencyKeyLower = "idempotency-key"

// KeyError says why no idempotency key was derived: the method or the URL breaks a rule that @retryd/core enforces
// too, or (NotDerivable) the URL is valid but holds what this client's URL normaliser leaves out (user information,
// a host in Unicode or percent-encoded), where core would derive a key. Never a different key from core's.
type KeyError struct {
	// Field is "method" or "url".
	Field string
	// Value is the method or URL as given.
	Value string
	// Rule is what the value breaks, e.g. "must use the http: or https: scheme".
	Rule string
	// NotDerivable marks a valid URL this client does not derive keys for: send an Idempotency-Key of your own.
	NotDerivable bool
}

func (e *KeyError) Error() string { return fmt.Sprintf("%s %s, got %q", e.Field, e.Rule, e.Value) }

func invalidURL(raw, rule string) error { return &KeyError{Field: "url", Value: raw, Rule: rule} }

func notDerivable(raw, why string) error {
	return &KeyError{Field: "url", Value: raw, Rule: why + ": no key is derived for it here, send an Idempotency-Key header of your own", NotDerivable: true}
}

var methodToken = regexp.MustCompile("^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$")

// DeriveIdempotencyKey is @retryd/core's deriveIdempotencyKey, byte for byte: the first 32 hex characters of SHA-256
// over the upper-case method, the normalised URL and the body, separated by line feeds. The URL is normalised as
// core's WHATWG parser writes it (scheme and host lower-cased, default port dropped, trailing slashes trimmed, query
// sorted by name then value, fragment dropped), so the same request however spelt gets one key. A nil or empty body
// is no body.
//
// Errors are a [*KeyError] naming the method or the URL and the rule.
//
//	key, err := retryd.DeriveIdempotencyKey("POST", "https://api.example.com/orders?b=2&a=1", []byte(`{"sku":"A"}`))
func DeriveIdempotencyKey(method, rawURL string, body []byte) (string, error) {
	if !methodToken.MatchString(method) {
		return "", &KeyError{Field: "method", Value: method, Rule: "must be an HTTP token (RFC 9110 §9.1)"}
	}
	normalised, err := normaliseURL(rawURL)
	if err != nil {
		return "", err
	}
	hash := sha256.New()
	hash.Write([]byte(strings.ToUpper(method) + "\n" + normalised + "\n"))
	hash.Write(body)
	return hex.EncodeToString(hash.Sum(nil))[:32], nil
}

// randomKey is a version 4 UUID, for a call whose key cannot be derived: every attempt still carries the one key.
func randomKey() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("retryd: crypto/rand failed: " + err.Error())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
