package retryd

import (
	"net"
	"strconv"
	"strings"
)

// The host of an http(s) URL as the WHATWG URL Standard writes it: a domain in lower case, an IPv4 address in any of
// its forms as four decimal parts, an IPv6 address in its canonical text.

func parseHost(raw, host string) (string, error) {
	if host == "" {
		return "", invalidURL(raw, "must be an absolute URL (WHATWG URL syntax)")
	}
	if strings.HasPrefix(host, "[") {
		inner := host[1 : len(host)-1]
		ip := net.ParseIP(inner)
		if ip == nil || !strings.Contains(inner, ":") || strings.Contains(inner, "%") {
			return "", invalidURL(raw, "must be an absolute URL (WHATWG URL syntax)")
		}
		return "[" + serialiseIPv6(ip.To16()) + "]", nil
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if c == '%' {
			return "", notDerivable(raw, "has a percent-encoded host")
		}
		if c >= 0x80 {
			return "", notDerivable(raw, "has a host in Unicode (IDNA)")
		}
		if c <= 0x20 || c == 0x7f || strings.IndexByte(`#/:<>?@[\]^|`, c) >= 0 {
			return "", invalidURL(raw, "must be an absolute URL (WHATWG URL syntax)")
		}
	}
	host = strings.ToLower(host)
	if !endsInANumber(host) {
		return host, nil
	}
	address, ok := parseIPv4(host)
	if !ok {
		return "", invalidURL(raw, "must be an absolute URL (WHATWG URL syntax)")
	}
	return address, nil
}

// ipv4Parts splits a host at its dots, one empty last label (a trailing dot) left out.
func ipv4Parts(host string) []string {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func endsInANumber(host string) bool {
	parts := ipv4Parts(host)
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// parseIPv4Number reads one part of an IPv4 address: decimal, octal with a leading 0, hex with 0x. Values past 2^32
// stay past it (capped), which is all the caller needs to refuse them.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	radix := uint64(10)
	if len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X") {
		s, radix = s[2:], 16
	} else if len(s) >= 2 && s[0] == '0' {
		s, radix = s[1:], 8
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		d := uint64(hexValue(s[i]))
		if d >= radix {
			return 0, false
		}
		if n < 1<<40 {
			n = n*radix + d
		}
	}
	return n, true
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func parseIPv4(host string) (string, bool) {
	parts := ipv4Parts(host)
	if len(parts) > 4 {
		return "", false
	}
	numbers := make([]uint64, len(parts))
	for i, part := range parts {
		n, ok := parseIPv4Number(part)
		if !ok || (i < len(parts)-1 && n > 255) {
			return "", false
		}
		numbers[i] = n
	}
	last := numbers[len(numbers)-1]
	if last >= 1<<(8*(5-len(numbers))) {
		return "", false
	}
	address := last
	for i, n := range numbers[:len(numbers)-1] {
		address += n << (8 * (3 - i))
	}
	return strconv.FormatUint(address>>24, 10) + "." + strconv.FormatUint(address>>16&255, 10) + "." +
		strconv.FormatUint(address>>8&255, 10) + "." + strconv.FormatUint(address&255, 10), true
}

// serialiseIPv6 writes an address as WHATWG does: lower-case hex pieces without leading zeros, the first longest run
// of two or more zero pieces written "::", and no dotted IPv4 part (net.IP's String writes ::ffff:1.2.3.4).
func serialiseIPv6(ip net.IP) string {
	var pieces [8]uint16
	for i := range pieces {
		pieces[i] = uint16(ip[2*i])<<8 | uint16(ip[2*i+1])
	}
	start, length := -1, 1
	for i := 0; i < 8; {
		if pieces[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && pieces[j] == 0 {
			j++
		}
		if j-i > length {
			start, length = i, j-i
		}
		i = j
	}
	var b strings.Builder
	for i := 0; i < 8; i++ {
		if i == start {
			b.WriteString("::")
			i += length - 1
			continue
		}
		if i > 0 && i != start+length {
			b.WriteByte(':')
		}
		b.WriteString(strconv.FormatUint(uint64(pieces[i]), 16))
	}
	return b.String()
}
