/* utf8.c - strict UTF-8 decoding. */
#include "utf8.h"

#include <string.h>

size_t utf8_decode(const unsigned char *s, size_t avail, unsigned *cp_out)
{
    unsigned char c = s[0];
    size_t n;
    unsigned cp;
    if (c < 0x80) {
        *cp_out = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, cp = c & 0x07;
    else
        return 0;
    if (n > avail)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    *cp_out = cp;
    return n;
}

void utf8_stream_init(struct utf8_stream *s)
{
    s->need = 0;
    s->lo = 0x80;
    s->hi = 0xbf;
}

size_t utf8_stream_valid_prefix(struct utf8_stream *s, const char *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)data[i];
        if (s->need > 0) {
            if (c < s->lo || c > s->hi)
                return i;
            s->need--;
            s->lo = 0x80;
            s->hi = 0xbf;
            continue;
        }
        if (c >= 0x01 && c <= 0x7f)
            continue;
        s->lo = 0x80;
        s->hi = 0xbf;
        if (c >= 0xc2 && c <= 0xdf) {
            s->need = 1;
        } else if (c >= 0xe0 && c <= 0xef) {
            s->need = 2;
            if (c == 0xe0)
                s->lo = 0xa0; /* overlong below U+0800 */
            else if (c == 0xed)
                s->hi = 0x9f; /* surrogates U+D800..U+DFFF */
        } else if (c >= 0xf0 && c <= 0xf4) {
            s->need = 3;
            if (c == 0xf0)
                s->lo = 0x90; /* overlong below U+10000 */
            else if (c == 0xf4)
                s->hi = 0x8f; /* above U+10FFFF */
        } else {
            return i; /* NUL, a stray continuation byte, 0xc0, 0xc1 or 0xf5..0xff */
        }
    }
    return len;
}

int utf8_stream_complete(const struct utf8_stream *s)
{
    return s->need == 0;
}

bool utf8_copy(char *dst, size_t cap, const char *src, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len && src[i];) {
        unsigned cp;
        size_t n = utf8_decode((const unsigned char *)src + i, len - i, &cp);
        size_t w = n ? n : 1;
        if (o + w >= cap) {
            dst[o] = '\0';
            return false;
        }
        if (n)
            memcpy(dst + o, src + i, n);
        else
            dst[o] = '?';
        o += w;
        i += w;
    }
    dst[o] = '\0';
    return true;
}
