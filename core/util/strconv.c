/* strconv.c - whole-string integer and duration parsing (see strconv.h). */
#include "strconv.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "result.h"

int strconv_long(const char *s, long min, long max, long *out)
{
    char *end;
    if (!s || !*s || isspace((unsigned char)*s))
        return K_EINVAL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return K_EINVAL;
    *out = v;
    return K_OK;
}

int strconv_duration_ms(const char *s, int64_t max_ms, int64_t *out)
{
    if (!s || !*s)
        return K_EINVAL;
    int64_t total = 0;
    const char *p = s;
    while (*p) { /* every pass consumes at least one character */
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno || !isfinite(v) || v < 0)
            return K_EINVAL;
        p = end;
        double unit;
        if (p[0] == 'm' && p[1] == 's') {
            unit = 1;
            p += 2;
        } else if (*p == 's') {
            unit = 1000;
            p++;
        } else if (*p == 'm') {
            unit = 60000;
            p++;
        } else if (*p == 'h') {
            unit = 3600000;
            p++;
        } else if (!*p && total == 0) {
            unit = 1000; /* a bare number: seconds */
        } else {
            return K_EINVAL;
        }
        /* Bound the term before converting it: (int64_t) of a value past INT64_MAX is undefined. */
        if (v > (double)(max_ms - total) / unit)
            return K_ETOOBIG;
        total += (int64_t)(v * unit);
        if (total > max_ms)
            return K_ETOOBIG;
    }
    if (total <= 0)
        return K_EINVAL;
    *out = total;
    return K_OK;
}

int strconv_hex_digit(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}
