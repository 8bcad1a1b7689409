/*
 * strconv.h - numbers from text, whole or not at all (Go's strconv.ParseInt semantics for base
 * 10): for command-line flags and other short strings.
 */
#ifndef GPUTRI_STRCONV_H
#define GPUTRI_STRCONV_H

/*
 * strconv_long() - the decimal integer `s` (an optional sign, then digits, nothing else: no
 * blanks, no trailing text) when it lies in [min, max], into *out. Returns K_OK, or K_EINVAL for
 * an empty string, other characters, overflow, or a value out of range (*out unchanged).
 * Thread-safe.
 */
int strconv_long(const char *s, long min, long max, long *out);

#endif
