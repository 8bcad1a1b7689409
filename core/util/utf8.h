/*
 * utf8.h - decoding one UTF-8 sequence strictly (RFC 3629): no overlong forms, no surrogates
 * (U+D800..U+DFFF), nothing above U+10FFFF. This is what Go's unicode/utf8 accepts as valid, and
 * so what the API server and kubectl produce and accept.
 */
#ifndef GPUTRI_UTF8_H
#define GPUTRI_UTF8_H

#include <stddef.h>

/*
 * utf8_decode() - decode the sequence starting at s[0], reading at most `avail` bytes (avail
 * >= 1). Returns its length 1..4 and stores the code point in *cp_out, or returns 0 for an
 * invalid, overlong, surrogate or truncated sequence (*cp_out untouched). Pure; thread-safe.
 */
size_t utf8_decode(const unsigned char *s, size_t avail, unsigned *cp_out);

#endif
