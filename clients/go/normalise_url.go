package retryd

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// normaliseURL writes a URL as @retryd/core's deriveIdempotencyKey does before hashing it: parsed as the WHATWG URL
// Standard parses it (scheme and host lower-cased, default port dropped, dot segments resolved, the path
// percent-encoded, IPv4 and IPv6 addresses in their canonical form), then fragment dropped, trailing slashes trimmed
// from the path and the query re-serialised as application/x-www-form-urlencoded, sorted by name then value.
//
// It ports only what http(s) URLs need. A URL holding user information, a host in Unicode (IDNA) or a
// percent-encoded host gives a KeyError with NotDerivable set: core would derive a key for it, this port does not,
// and it never derives a different one.
func normaliseURL(raw string) (string, error) {
	if !utf8.ValidString(raw) {
		return "", notDerivable(raw, "is not UTF-8 text")
	}
	s := trimURL(raw)
	colon := schemeEnd(s)
	if colon < 0 {
		return "", invalidURL(raw, "must be an absolute URL (WHATWG URL syntax)")
	}
	scheme := strings.ToLower(s[:colon])
	if scheme != "http" && scheme != "https" {
		return "", invalidURL(raw, "must use the http: or https: scheme")
	}
	rest := s[colon+1:]
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	// A special scheme skips every slash and backslash before the authority ("https:a.com", "https:///a.com").
	rest = strings.TrimLeft(rest, `/\`)
	end := strings.IndexAny(rest, `/\?`)
	if end < 0 {
		end = len(rest)
	}
	authority, rest := rest[:end], rest[end:]
	query, hasQuery := "", false
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		query, rest, hasQuery = rest[i+1:], rest[:i], true
	}
	if strings.Contains(authority, "@") {
		return "", notDerivable(raw, "holds user information")
	}
	host, port, err := parseAuthority(raw, scheme, authority)
	if err != nil {
		return "", err
	}
	out := scheme + "://" + host
	if port != "" {
		out += ":" + port
	}
	out += trimTrailingSlashes(normalisePath(rest))
	if hasQuery {
		if q := sortedQuery(query); q != "" {
			out += "?" + q
		}
	}
	return out, nil
}

// trimURL drops leading and trailing C0 controls and spaces, and every tab, line feed and carriage return.
func trimURL(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= 0x20 })
	return strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
}

// schemeEnd is the index of the colon after a scheme (ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )), or -1.
func schemeEnd(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return i
		default:
			return -1
		}
	}
	return -1
}

func parseAuthority(raw, scheme, authority string) (host, port string, err error) {
	hostPart, portPart, hasPort := authority, "", false
	if strings.HasPrefix(authority, "[") {
		closing := strings.IndexByte(authority, ']')
		if closing < 0 {
			return "", "", invalidURL(raw, "must be an absolute URL (WHATWG URL syntax)")
		}
		hostPart = authority[:closing+1]
		after := authority[closing+1:]
		if after != "" {
			if after[0] != ':' {
				return "", "", invalidURL(raw, "must be an absolute URL (WHATWG URL syntax)")
			}
			portPart, hasPort = after[1:], true
		}
	} else if i := strings.IndexByte(authority, ':'); i >= 0 {
		hostPart, portPart, hasPort = authority[:i], authority[i+1:], true
	}
	if host, err = parseHost(raw, hostPart); err != nil {
		return "", "", err
	}
	if hasPort {
		if port, err = parsePort(raw, scheme, portPart); err != nil {
			return "", "", err
		}
	}
	return host, port, nil
}

func parsePort(raw, scheme, digits string) (string, error) {
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return "", invalidURL(raw, "must be an absolute URL (WHATWG URL syntax)")
		}
	}
	if digits == "" {
		return "", nil
	}
	trimmed := strings.TrimLeft(digits, "0")
	if len(trimmed) > 5 {
		return "", invalidURL(raw, "must be an absolute URL (WHATWG URL syntax)")
	}
	n, _ := strconv.Atoi("0" + trimmed)
	if n > 65535 {
		return "", invalidURL(raw, "must be an absolute URL (WHATWG URL syntax)")
	}
	if (scheme == "http" && n == 80) || (scheme == "https" && n == 443) {
		return "", nil
	}
	return strconv.Itoa(n), nil
}

// normalisePath resolves dot segments and percent-encodes what WHATWG's path percent-encode set holds; a percent
// sign is kept as it is written, with its hex digits in their own case.
func normalisePath(path string) string {
	if path != "" {
		path = path[1:]
	}
	segments := splitPath(path)
	out := make([]string, 0, len(segments))
	for i, segment := range segments {
		last := i == len(segments)-1
		switch {
		case isDoubleDot(segment):
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		case isSingleDot(segment):
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, percentEncodePath(segment))
		}
	}
	return "/" + strings.Join(out, "/")
}

func splitPath(path string) []string {
	var segments []string
	start := 0
	for i := 0; i < len(path); i++ {
		if path[i] == '/' || path[i] == '\\' {
			segments = append(segments, path[start:i])
			start = i + 1
		}
	}
	return append(segments, path[start:])
}

func isSingleDot(s string) bool { return s == "." || strings.EqualFold(s, "%2e") }

func isDoubleDot(s string) bool {
	switch strings.ToLower(s) {
	case "..", ".%2e", "%2e.", "%2e%2e":
		return true
	}
	return false
}

const upperHex = "0123456789ABCDEF"

func percentEncodePath(segment string) string {
	var b strings.Builder
	for i := 0; i < len(segment); i++ {
		c := segment[i]
		if c <= 0x20 || c >= 0x7f || strings.IndexByte("\"#<>?`{}", c) >= 0 {
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func trimTrailingSlashes(path string) string {
	if trimmed := strings.TrimRight(path, "/"); trimmed != "" {
		return trimmed
	}
	return "/"
}
