/* errbuf.c - one-line error messages into a caller's buffer. */
#include "errbuf.h"

#include <stdarg.h>
#include <stdio.h>

void errbuf_printf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}
