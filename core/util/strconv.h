/*
 * strconv.h - numbers from text, whole or not at all (Go's strconv.ParseInt semantics for base
 * 10): for command-line flags and other short strings.
 */
#ifndef GPUTRI_STRCONV_H
#define GPUTRI_STRCONV_H

#include <stdint.h>

/*
 * strconv_long() - the decimal integer `s` (an optional sign, then digits, nothing else: no
 * blanks, no trailing text) when it lies in [min, max], into *out. Returns K_OK, or K_EINVAL for
 * an empty string, other characters, overflow, or a value out of range (*out unchanged).
 * Thread-safe.
 */
int strconv_long(const char *s, long min, long max, long *out);

/*
 * strconv_duration_ms() - a duration flag in the spelling of Go's time.ParseDuration, the one
 * client-go's leader-election flags take (golang/go: src/time/format.go, ParseDuration): one or
 * more terms of a non-negative decimal number and a unit "ms", "s", "m" or "h" ("1m30s",
 * "500ms", "1.5h"), or a single bare number meaning seconds. The total, truncated to whole
 * milliseconds, must be > 0 and <= max_ms (0 < max_ms <= 2^53), into *out.
 * Returns K_OK, K_ETOOBIG for a number or total above max_ms (every term is bounded before it is
 * converted, so no input overflows), or K_EINVAL for an empty, malformed, negative, non-finite
 * or zero duration (*out unchanged). Reads at most strlen(s) characters; thread-safe.
 */
int strconv_duration_ms(const char *s, int64_t max_ms, int64_t *out);

/*
 * strconv_hex_digit() - the value 0..15 of the hexadecimal digit `c` ('0'-'9', 'a'-'f',
 * 'A'-'F'), or -1 for any other byte. Pure; thread-safe.
 */
int strconv_hex_digit(unsigned char c);

#endif
