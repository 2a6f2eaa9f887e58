package retryd

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// maxRetryAfterMs is 2^31 seconds in ms: the most any Retry-After asks for (RFC 9111 §1.2.2), as in @retryd/core.
const maxRetryAfterMs = int64(1) << 31 * 1000

var (
	delaySeconds = regexp.MustCompile(`^\d+$`)
	months       = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	month        = "(" + strings.Join(months, "|") + ")"
	clock        = `(\d{2}):(\d{2}):(\d{2})`
	// The three grammars of RFC 9110 §5.6.7, matched exactly (case and single spaces), as core matches them.
	imfFixdate  = regexp.MustCompile(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) ` + month + ` (\d{4}) ` + clock + ` GMT$`)
	rfc850Date  = regexp.MustCompile(`^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\d{2})-` + month + `-(\d{2}) ` + clock + ` GMT$`)
	asctimeDate = regexp.MustCompile(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ` + month + ` (\d{2}| \d) ` + clock + ` (\d{4})$`)
)

// ParseRetryAfter is @retryd/core's parseRetryAfter: the delay in ms a Retry-After value asks for, and false when
// the value is absent or malformed. delay-seconds (digits only, after trimming) or an HTTP-date (IMF-fixdate, RFC
// 850, asctime; one in the past is 0; one that does not exist, such as Feb 30, is malformed), capped at 2^31 s.
func ParseRetryAfter(value string, now time.Time) (int64, bool) {
	trimmed := strings.TrimSpace(value)
	if delaySeconds.MatchString(trimmed) {
		digits := strings.TrimLeft(trimmed, "0")
		if len(digits) > 10 {
			return maxRetryAfterMs, true
		}
		seconds, _ := strconv.ParseInt("0"+digits, 10, 64)
		return minInt64(seconds*1000, maxRetryAfterMs), true
	}
	nowMs := now.UnixMilli()
	at, ok := parseHTTPDate(trimmed, now)
	if !ok {
		return 0, false
	}
	delay := at - nowMs
	if delay < 0 {
		delay = 0
	}
	return minInt64(delay, maxRetryAfterMs), true
}

func minInt64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
}

func monthIndex(name string) int {
	for i, m := range months {
		if m == name {
			return i
		}
	}
	return -1
}

// epochMs is the instant the parts name, or false when there is none (Feb 30, 24:00:00). Second 60 (a leap second)
// counts as the next minute's first.
func epochMs(year, month, day, hour, minute, second int) (int64, bool) {
	if month < 0 || hour > 23 || minute > 59 || second > 60 {
		return 0, false
	}
	date := time.Date(year, time.Month(month+1), day, 0, 0, 0, 0, time.UTC)
	if date.Year() != year || int(date.Month()) != month+1 || date.Day() != day {
		return 0, false
	}
	return date.UnixMilli() + int64((hour*60+minute)*60+second)*1000, true
}

func parseHTTPDate(value string, now time.Time) (int64, bool) {
	if m := imfFixdate.FindStringSubmatch(value); m != nil {
		return epochMs(atoi(m[3]), monthIndex(m[2]), atoi(m[1]), atoi(m[4]), atoi(m[5]), atoi(m[6]))
	}
	if m := rfc850Date.FindStringSubmatch(value); m != nil {
		// RFC 9110 §5.6.7: a two-digit year more than 50 years ahead is the most recent past year with those digits.
		now = now.UTC()
		latest := now.Year() + 51
		year := latest - (((latest-atoi(m[3]))%100)+100)%100
		horizon := now.AddDate(50, 0, 0).UnixMilli()
		if ms, ok := epochMs(year, monthIndex(m[2]), atoi(m[1]), atoi(m[4]), atoi(m[5]), atoi(m[6])); ok && ms <= horizon {
			return ms, true
		}
		return epochMs(year-100, monthIndex(m[2]), atoi(m[1]), atoi(m[4]), atoi(m[5]), atoi(m[6]))
	}
	if m := asctimeDate.FindStringSubmatch(value); m != nil {
		return epochMs(atoi(m[6]), monthIndex(m[1]), atoi(m[2]), atoi(m[3]), atoi(m[4]), atoi(m[5]))
	}
	return 0, false
}
