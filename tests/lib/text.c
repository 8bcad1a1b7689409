/* text.c - see text.h. */
#include "text.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

void test_lines_with(const char *text, const char *prefix, char *out, size_t len)
{
    size_t o = 0, plen = strlen(prefix);
    out[0] = '\0';
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);
        if (strncmp(p, prefix, plen) == 0 && o + n < len) {
            memcpy(out + o, p, n);
            o += n;
            out[o] = '\0';
        }
        p += n;
    }
}

void test_command_output(const char *cmd, char *out, size_t len)
{
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    size_t n = fread(out, 1, len - 1, f);
    out[n] = '\0';
    pclose(f);
}
