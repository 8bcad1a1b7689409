/* utf8.c - strict UTF-8 decoding. */
#include "utf8.h"

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
