/* text.c - see text.h. */
#include "text.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

char *test_empty_objects(const char *head, size_t len, const char *tail)
{
    size_t h = strlen(head), t = strlen(tail);
    assert_true(len > h + t + 2);
    char *out = malloc(len + 1);
    assert_non_null(out);
    memcpy(out, head, h);
    size_t at = h;
    while (at + 3 + 2 + t <= len) {
        memcpy(out + at, "{},", 3);
        at += 3;
    }
    memcpy(out + at, "{}", 2);
    memcpy(out + at + 2, tail, t + 1);
    return out;
}

const char *test_write_file(const char *dir, const char *name, const char *text)
{
    static char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}
