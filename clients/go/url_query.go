package retryd

import (
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

type queryPair struct{ name, value string }

// sortedQuery parses a query as URLSearchParams does (split on &, + is a space, percent-decoded, UTF-8 with
// replacement characters), sorts it by name then value in UTF-16 code unit order, and writes it back.
func sortedQuery(query string) string {
	var pairs []queryPair
	for _, field := range strings.Split(query, "&") {
		if field == "" {
			continue
		}
		name, value := field, ""
		if i := strings.IndexByte(field, '='); i >= 0 {
			name, value = field[:i], field[i+1:]
		}
		pairs = append(pairs, queryPair{formDecode(name), formDecode(value)})
	}
	sort.SliceStable(pairs, func(i, j int) bool {
		if c := compareUTF16(pairs[i].name, pairs[j].name); c != 0 {
			return c < 0
		}
		return compareUTF16(pairs[i].value, pairs[j].value) < 0
	})
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = formEncode(p.name) + "=" + formEncode(p.value)
	}
	return strings.Join(parts, "&")
}

func formDecode(s string) string {
	bytes := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '+':
			bytes = append(bytes, ' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			bytes = append(bytes, byte(hexValue(s[i+1])<<4|hexValue(s[i+2])))
			i += 2
		default:
			bytes = append(bytes, c)
		}
	}
	return decodeUTF8(bytes)
}

// hexValue is the value of a hex digit (either case), or -1 for another byte.
func hexValue(c byte) int { return strings.IndexByte("0123456789abcdef", lowerASCII(c)) }

func isHex(c byte) bool { return hexValue(c) >= 0 }

// decodeUTF8 decodes as the WHATWG Encoding Standard does: each maximal invalid subsequence becomes one U+FFFD
// (utf8.DecodeRune would give one per byte, and strings.ToValidUTF8 one per run).
func decodeUTF8(b []byte) string {
	var out strings.Builder
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			out.WriteByte(c)
			i++
			continue
		}
		need, lower, upper, code := 0, byte(0x80), byte(0xbf), rune(0)
		switch {
		case c >= 0xc2 && c <= 0xdf:
			need, code = 1, rune(c&0x1f)
		case c >= 0xe0 && c <= 0xef:
			need, code = 2, rune(c&0x0f)
		case c >= 0xf0 && c <= 0xf4:
			need, code = 3, rune(c&0x07)
		default:
			out.WriteRune(utf8.RuneError)
			i++
			continue
		}
		// The second byte's narrower range after these leads (no overlong forms, surrogates or code points past U+10FFFF).
		switch c {
		case 0xe0:
			lower = 0xa0
		case 0xed:
			upper = 0x9f
		case 0xf0:
			lower = 0x90
		case 0xf4:
			upper = 0x8f
		}
		j := i + 1
		for ; need > 0; need-- {
			if j >= len(b) || b[j] < lower || b[j] > upper {
				break
			}
			code = code<<6 | rune(b[j]&0x3f)
			lower, upper = 0x80, 0xbf
			j++
		}
		if need > 0 {
			// The bytes read so far are one error; the byte that broke the sequence is read again.
			out.WriteRune(utf8.RuneError)
		} else {
			out.WriteRune(code)
		}
		i = j
	}
	return out.String()
}

// compareUTF16 orders strings as JavaScript's < does: by UTF-16 code units, not by code points.
func compareUTF16(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			if ua[i] < ub[i] {
				return -1
			}
			return 1
		}
	}
	return len(ua) - len(ub)
}

func formEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ':
			b.WriteByte('+')
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("*-._", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
		}
	}
	return b.String()
}
