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
    int n = vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    if (n < 0) {
        err[0] = '\0';
        return;
    }
    /* Names and values quoted from a file may hold newlines or escapes; keep one line. */
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
}
