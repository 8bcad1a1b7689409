/*
 * utf8.h - decoding one UTF-8 sequence strictly (RFC 3629): no overlong forms, no surrogates
 * (U+D800..U+DFFF), nothing above U+10FFFF. This is what Go's unicode/utf8 accepts as valid, and
 * so what the API server and kubectl produce and accept.
 */
#ifndef GPUTRI_UTF8_H
#define GPUTRI_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/*
 * utf8_decode() - decode the sequence starting at s[0], reading at most `avail` bytes (avail
 * >= 1). Returns its length 1..4 and stores the code point in *cp_out, or returns 0 for an
 * invalid, overlong, surrogate or truncated sequence (*cp_out untouched). Pure; thread-safe.
 */
size_t utf8_decode(const unsigned char *s, size_t avail, unsigned *cp_out);

/*
 * A UTF-8 check over a byte stream that arrives in pieces: the state carries a sequence cut by a
 * piece boundary into the next call, so the answer does not depend on where the stream is cut.
 * Zero-initialise (or utf8_stream_init) before the first piece.
 */
struct utf8_stream {
    unsigned need;        /* continuation bytes the current sequence still needs */
    unsigned char lo, hi; /* the range the next continuation byte must lie in */
};

/* utf8_stream_init() - the state before the first byte. */
void utf8_stream_init(struct utf8_stream *s);

/*
 * utf8_stream_valid_prefix() - how many leading bytes of data[0..len) continue a valid UTF-8
 * stream (the rules of utf8_decode) without a NUL byte, which can never be part of JSON text and
 * which json-c takes for the end of its input. The state advances over the bytes counted; a
 * return below len names the first bad byte, after which the stream is to be refused. Pure but
 * for `s`; one stream per state.
 */
size_t utf8_stream_valid_prefix(struct utf8_stream *s, const char *data, size_t len);

/* utf8_stream_complete() - non-zero when the stream did not end inside a sequence. */
int utf8_stream_complete(const struct utf8_stream *s);

/*
 * utf8_copy() - a bounded copy of text from an untrusted source into a fixed buffer: the bytes
 * src[0..len) (reading no further, and stopping at a NUL) into dst[0..cap), NUL-terminated
 * (cap >= 1). Valid sequences (utf8_decode) are copied whole, each byte of an invalid one
 * becomes '?', so dst is always valid UTF-8; the copy stops before the first character that does
 * not fit, so no character is cut. Returns true when the copy is whole, false when it was cut.
 * Pure; thread-safe.
 */
bool utf8_copy(char *dst, size_t cap, const char *src, size_t len);

#endif
