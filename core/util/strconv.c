/* strconv.c - whole-string integer parsing (see strconv.h). */
#include "strconv.h"

#include <ctype.h>
#include <errno.h>
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
