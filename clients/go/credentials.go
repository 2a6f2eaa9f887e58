package retryd

import (
	"fmt"
	"regexp"
	"strings"
)

// CredentialHeaderWords make a header name a credential's wherever they stand in it, in any case: @retryd/core's
// CREDENTIAL_HEADER_WORDS (Authorization, X-Auth-Token, apikey, X-Password, Session-Id, Cookie, Stripe-Signature).
var CredentialHeaderWords = []string{"auth", "token", "key", "secret", "password", "passwd", "session", "cookie", "signature", "credential"}

// retrydOwnHeaders are retryd's own headers, never a caller's secret although their names hold a credential word.
var retrydOwnHeaders = map[string]bool{idempotencyKeyLower: true, "webhook-id": true, "webhook-timestamp": true, "webhook-signature": true}

var credentialWord = regexp.MustCompile("(?i)" + strings.Join(CredentialHeaderWords, "|"))

// IsCredentialHeader is @retryd/core's isCredentialHeader: whether a header carries a credential by its name alone.
func IsCredentialHeader(name string) bool {
	return credentialWord.MatchString(name) && !retrydOwnHeaders[strings.ToLower(name)]
}

// CredentialRules say what happens to credential headers of a call handed to retryd (as @retryd/client's
// stripCredentials): a header named in Secrets is sent as a {{secret:NAME}} reference the service resolves at each
// attempt; any other credential header is dropped.
type CredentialRules struct {
	// Secrets maps a header name (any case) to the name of a secret the service holds: 1 to 128 letters, digits, _.
	Secrets map[string]string
	// AlsoStrip names more headers to drop besides IsCredentialHeader's.
	AlsoStrip []string
	// NotCredentials names headers to keep although IsCredentialHeader takes them for credentials.
	NotCredentials []string
}

var secretName = regexp.MustCompile(`^[A-Za-z0-9_]{1,128}$`)

// check refuses a secret name the service could never resolve, naming the header.
func (r CredentialRules) check() error {
	for header, secret := range r.Secrets {
		if !secretName.MatchString(secret) {
			return fmt.Errorf("retryd: Secrets[%q] must be a secret name of 1 to 128 letters, digits or _, got %q", header, secret)
		}
	}
	return nil
}

// StripCredentials takes every credential out of headers before they are handed to retryd: a header named in
// rules.Secrets becomes {{secret:NAME}}, any other credential header is removed, the rest are kept as they are.
func StripCredentials(headers map[string]string, rules CredentialRules) (map[string]string, error) {
	if err := rules.check(); err != nil {
		return nil, err
	}
	secrets := lowerKeys(rules.Secrets)
	also, keep := lowerSet(rules.AlsoStrip), lowerSet(rules.NotCredentials)
	out := make(map[string]string, len(headers))
	for name, value := range headers {
		lower := strings.ToLower(name)
		if secret, ok := secrets[lower]; ok {
			out[name] = "{{secret:" + secret + "}}"
		} else if drop := also[lower] || (IsCredentialHeader(lower) && !keep[lower]); !drop {
			out[name] = value
		}
	}
	return out, nil
}

func lowerKeys(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[strings.ToLower(k)] = v
	}
	return out
}

func lowerSet(names []string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[strings.ToLower(n)] = true
	}
	return out
}
