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
#include <json-c/json.h>

#include "util/log.h"

enum call { CALL_PRINTF, CALL_KV, CALL_KV_MANY };

/* Runs the call with stderr going to a file; returns what was written. */
static void capture_call(enum call call, const char *arg, char *out, size_t len)
{
    char path[] = "/tmp/gputri-log-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
    if (call == CALL_PRINTF) {
        log_warn("name=%s", arg);
    } else if (call == CALL_KV) {
        log_info_kv(0, "cause \"written\"", LOG_STR("pod", arg), LOG_INT("n", -42),
                    LOG_STR("absent", NULL), LOG_BOOL("ok", 1), LOG_STR("empty", ""));
    } else {
        /* 8 values of 4 KiB and more each: the line holds 3 whole, the rest are left out */
        log_error_kv("many", LOG_STR("a", arg), LOG_STR("b", arg), LOG_STR("c", arg),
                     LOG_STR("d", arg), LOG_STR("e", arg), LOG_STR("f", arg), LOG_STR("g", arg),
                     LOG_STR("h", arg), LOG_INT("last", 1));
    }
    assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
    close(saved);
    ssize_t n = pread(fd, out, len - 1, 0);
    assert_true(n > 0);
    out[n] = '\0';
    close(fd);
    unlink(path);
}

static void capture(const char *arg, char *out, size_t len)
{
    capture_call(CALL_PRINTF, arg, out, len);
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
        out, "\"msg\":\"name=p\\u000a\\u001b\\u007f\\u009b\\u009d\\ufffd\\\"\\\\\xc3\xa9\",\"v\":0,"
             "\"level\":\"warning\"}\n"));
    assert_int_equal(strchr(out, '\n') - out, (long)strlen(out) - 1);
}

/* The hostile value of the structured tests: a forged pair, a forged line, escapes. */
#define HOSTILE "p\" forged=\"x\\\nE1201 10:00:00.000000 1 a.c:1] \"f\"\x1b[31m\xc2\x9b\xff\xc3\xa9"

static void test_kv_text(void **state)
{
    (void)state;
    char out[2048];
    capture_call(CALL_KV, HOSTILE, out, sizeof(out));
    assert_int_equal(out[0], 'I');
    assert_int_equal(strchr(out, '\n') - out, (long)strlen(out) - 1);
    /* the message and the value quoted as strconv.Quote does: no quote or backslash of the
     * value stands alone, so it cannot end its quotes; NULL left out, numbers and bools bare */
    assert_non_null(strstr(out,
                           "] \"cause \\\"written\\\"\" pod=\"p\\\" forged=\\\"x\\\\\\x0aE1201 "
                           "10:00:00.000000 1 a.c:1] \\\"f\\\"\\x1b[31m\\u009b\\xff\xc3\xa9\" "
                           "n=-42 ok=true empty=\"\"\n"));
    assert_null(strstr(out, "absent"));
    for (const char *p = out; *p; p++)
        assert_true(*p == '\n' || ((unsigned char)*p >= 0x20 && *p != 0x7f));
}

static void test_kv_json(void **state)
{
    (void)state;
    char out[2048];
    log_set_format(LOG_FORMAT_JSON);
    capture_call(CALL_KV, HOSTILE, out, sizeof(out));
    log_set_format(LOG_FORMAT_TEXT);
    assert_int_equal(strchr(out, '\n') - out, (long)strlen(out) - 1);
    assert_int_equal(strncmp(out, "{\"ts\":", 6), 0);
    json_object *o = json_tokener_parse(out);
    assert_non_null(o);
    json_object *f;
    assert_true(json_object_object_get_ex(o, "msg", &f));
    assert_string_equal(json_object_get_string(f), "cause \"written\"");
    assert_true(json_object_object_get_ex(o, "pod", &f));
    /* the same text back but for what is escaped as a control: C1 kept as its code point, the
     * byte that is not UTF-8 as U+FFFD */
    assert_string_equal(json_object_get_string(f),
                        "p\" forged=\"x\\\nE1201 10:00:00.000000 1 "
                        "a.c:1] \"f\"\x1b[31m\xc2\x9b\xef\xbf\xbd\xc3\xa9");
    assert_true(json_object_object_get_ex(o, "n", &f));
    assert_true(json_object_is_type(f, json_type_int));
    assert_int_equal(json_object_get_int(f), -42);
    assert_true(json_object_object_get_ex(o, "ok", &f));
    assert_true(json_object_is_type(f, json_type_boolean));
    assert_true(json_object_object_get_ex(o, "v", &f));
    assert_int_equal(json_object_get_int(f), 0);
    assert_true(json_object_object_get_ex(o, "caller", &f));
    assert_non_null(strstr(json_object_get_string(f), "test_log.c:"));
    assert_true(json_object_object_get_ex(o, "ts", &f));
    assert_true(json_object_get_double(f) > 1.7e12); /* milliseconds since the epoch */
    assert_false(json_object_object_get_ex(o, "absent", &f));
    json_object_put(o);
}

static void test_kv_bounds(void **state)
{
    (void)state;
    static char big[6000], out[32768];
    memset(big, '"', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    for (int json = 0; json < 2; json++) {
        log_set_format(json ? LOG_FORMAT_JSON : LOG_FORMAT_TEXT);
        capture_call(CALL_KV_MANY, big, out, sizeof(out));
        log_set_format(LOG_FORMAT_TEXT);
        assert_true(strlen(out) <= 16384);
        assert_int_equal(strchr(out, '\n') - out, (long)strlen(out) - 1);
        /* each value cut to whole escapes: 2,048 quotes escaped as \" (4,096 bytes) */
        assert_non_null(strstr(out, json ? "\"a\":\"" : " a=\""));
        assert_null(strstr(out, "last"));
        if (json) {
            json_object *o = json_tokener_parse(out);
            assert_non_null(o);
            json_object *f;
            assert_true(json_object_object_get_ex(o, "a", &f));
            assert_int_equal(json_object_get_string_len(f), 2048);
            assert_true(json_object_object_get_ex(o, "c", &f));
            assert_false(json_object_object_get_ex(o, "d", &f));
            json_object_put(o);
        } else {
            assert_non_null(strstr(out, "\" c=\""));
            assert_null(strstr(out, " d=\""));
            assert_int_equal(out[strlen(out) - 2], '"');
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_escapes_controls),
        cmocka_unit_test(test_json_escapes_controls),
        cmocka_unit_test(test_kv_text),
        cmocka_unit_test(test_kv_json),
        cmocka_unit_test(test_kv_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
