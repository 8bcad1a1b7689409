/* test_log.c - log lines (core/util/log.c): request data cannot forge lines or send escapes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/log.h"

/* Runs log_warn("name=%s", arg) with stderr going to a file; returns what was written. */
static void capture(const char *arg, char *out, size_t len)
{
    char path[] = "/tmp/gputri-log-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
    log_warn("name=%s", arg);
    assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
    close(saved);
    ssize_t n = pread(fd, out, len - 1, 0);
    assert_true(n > 0);
    out[n] = '\0';
    close(fd);
    unlink(path);
}

static void test_text_escapes_controls(void **state)
{
    (void)state;
    char out[1024];
    /* a newline followed by a forged klog line, an ESC sequence, a CR, DEL and a C1 CSI */
    capture("p\nE1201 10:00:00.000000 1 webhook.c:1] forged\x1b[31mred\r\x7f\xc2\x9b", out,
            sizeof(out));
    /* one line, ending in the only newline */
    assert_non_null(strchr(out, '\n'));
    assert_int_equal(strchr(out, '\n') - out, (long)strlen(out) - 1);
    assert_non_null(strstr(out, "] name=p\\x0aE1201 10:00:00.000000 1 webhook.c:1] forged"
                                "\\x1b[31mred\\x0d\\x7f\\u009b\n"));
    for (const char *p = out; *p; p++)
        assert_true(*p == '\n' || ((unsigned char)*p >= 0x20 && *p != 0x7f));
    assert_int_equal(out[0], 'W');

    /* UTF-8 text and tabs: the text is kept, the tab escaped */
    capture("gpu-\xc3\xa9\xe2\x9c\x93\tx", out, sizeof(out));
    assert_non_null(strstr(out, "name=gpu-\xc3\xa9\xe2\x9c\x93\\x09x\n"));

    /* bytes that are not UTF-8 (a stray 0xff, an overlong '/') are escaped byte by byte */
    capture("a\xff\xc0\xaf"
            "b",
            out, sizeof(out));
    assert_non_null(strstr(out, "name=a\\xff\\xc0\\xafb\n"));
}

static void test_json_escapes_controls(void **state)
{
    (void)state;
    char out[1024];
    log_set_format(LOG_FORMAT_JSON);
    capture("p\n\x1b\x7f\xc2\x9b\xc2\x9d\xff\"\\\xc3\xa9", out, sizeof(out));
    log_set_format(LOG_FORMAT_TEXT);
    /* C0, DEL, C1 (CSI, OSC) as \u escapes, a byte that is not UTF-8 as U+FFFD; é kept */
    assert_non_null(strstr(
        out, "\"msg\":\"name=p\\u000a\\u001b\\u007f\\u009b\\u009d\\ufffd\\\"\\\\\xc3\xa9\"}\n"));
    assert_int_equal(strchr(out, '\n') - out, (long)strlen(out) - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_escapes_controls),
        cmocka_unit_test(test_json_escapes_controls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
