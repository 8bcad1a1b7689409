/* test_line.c - the classifier's bounded detail line (core/classify/line.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "classify/line.h"

static void test_appends(void **state)
{
    (void)state;
    char buf[64];
    struct line l = {.buf = buf, .cap = sizeof(buf)};
    line_printf(&l, "%s", "");
    line_printf(&l, "node %s", "a");
    line_printf(&l, ", %d GPUs", 4);
    line_finish(&l);
    assert_string_equal(buf, "node a, 4 GPUs");
    assert_int_equal(l.len, 14);
    assert_false(l.truncated);
}

/* Once full, the line keeps cap - 1 bytes and drops every later piece. */
static void test_truncates(void **state)
{
    (void)state;
    char buf[8];
    struct line l = {.buf = buf, .cap = sizeof(buf)};
    line_printf(&l, "abcd");
    line_printf(&l, "efgh");
    assert_true(l.truncated);
    assert_int_equal(l.len, 7);
    line_printf(&l, "x");
    line_finish(&l);
    assert_string_equal(buf, "abcdefg");

    /* exactly cap - 1 bytes fit */
    struct line m = {.buf = buf, .cap = sizeof(buf)};
    line_printf(&m, "1234567");
    assert_false(m.truncated);
    line_printf(&m, "8");
    assert_true(m.truncated);
    line_finish(&m);
    assert_string_equal(buf, "1234567");
}

/* A multi-byte character cut by truncation goes whole; one that fits stays. */
static void test_keeps_utf8_whole(void **state)
{
    (void)state;
    char buf[6];
    struct line l = {.buf = buf, .cap = sizeof(buf)};
    line_printf(&l, "abc\xe2\x98\x83"); /* snowman: 3 bytes, only 2 fit */
    line_finish(&l);
    assert_string_equal(buf, "abc");
    assert_int_equal(l.len, 3);

    struct line m = {.buf = buf, .cap = sizeof(buf)};
    line_printf(&m, "ab\xe2\x98\x83z"); /* snowman fits, z cut */
    line_finish(&m);
    assert_string_equal(buf, "ab\xe2\x98\x83");

    struct line n = {.buf = buf, .cap = sizeof(buf)};
    line_printf(&n, "abcd\xf0\x9f\x98\x80"); /* 4-byte emoji, 1 byte fits */
    line_finish(&n);
    assert_string_equal(buf, "abcd");

    struct line o = {.buf = buf, .cap = sizeof(buf)};
    line_printf(&o, "abc\xc3\xa9z"); /* é fits exactly */
    line_finish(&o);
    assert_string_equal(buf, "abc\xc3\xa9");
}

/* A name from the API cannot break the one-line detail: control characters become spaces. */
static void test_control_characters(void **state)
{
    (void)state;
    char buf[32];
    struct line l = {.buf = buf, .cap = sizeof(buf)};
    line_printf(&l, "node %s ok", "a\nb\r\t\x1b\x7f");
    line_finish(&l);
    assert_string_equal(buf, "node a b     ok");
    /* bytes of UTF-8 above 0x7f stay */
    struct line m = {.buf = buf, .cap = sizeof(buf)};
    line_printf(&m, "caf\xc3\xa9");
    line_finish(&m);
    assert_string_equal(buf, "caf\xc3\xa9");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_appends),
        cmocka_unit_test(test_truncates),
        cmocka_unit_test(test_keeps_utf8_whole),
        cmocka_unit_test(test_control_characters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
