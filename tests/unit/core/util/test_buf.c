/* test_buf.c - the bounded growable buffer (core/util/buf.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/buf.h"
#include "util/result.h"

static void test_empty(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 16);
    assert_null(b.data);
    assert_string_equal(buf_cstr(&b), "");
    buf_reset(&b); /* no allocation yet */
    assert_int_equal(buf_append(&b, NULL, 0), K_OK);
    assert_non_null(b.data);
    assert_string_equal(buf_cstr(&b), "");
    assert_int_equal(b.len, 0);
    buf_cleanup(&b);
    assert_null(b.data);
    buf_cleanup(&b); /* twice is harmless */
}

static void test_append_keeps_terminator(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 1 << 20);
    assert_int_equal(buf_append(&b, "ab\0cd", 5), K_OK);
    assert_int_equal(b.len, 5);
    assert_memory_equal(b.data, "ab\0cd", 6);
    assert_int_equal(buf_append_str(&b, "ef"), K_OK);
    assert_int_equal(b.len, 7);
    assert_int_equal(b.data[7], '\0');
    assert_int_equal(buf_printf(&b, "-%d-%s", 42, "x"), K_OK);
    assert_memory_equal(b.data + 5, "ef-42-x", 8);
    buf_reset(&b);
    assert_int_equal(b.len, 0);
    assert_string_equal(buf_cstr(&b), "");
    buf_cleanup(&b);
}

/* Growth past the first allocation keeps every byte. */
static void test_grows(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 100000);
    for (int i = 0; i < 10000; i++)
        assert_int_equal(buf_printf(&b, "%d,", i % 10), K_OK);
    assert_int_equal(b.len, 20000);
    assert_true(b.cap > b.len);
    for (size_t i = 0; i < b.len; i += 2)
        assert_int_equal(b.data[i], '0' + (int)((i / 2) % 10));
    assert_int_equal(b.data[b.len], '\0');
    buf_cleanup(&b);
}

/* The limit counts content bytes (not the terminator); a refused append changes nothing. */
static void test_limit(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 5);
    assert_int_equal(buf_append_str(&b, "abc"), K_OK);
    assert_int_equal(buf_append_str(&b, "def"), K_ETOOBIG);
    assert_int_equal(b.len, 3);
    assert_string_equal(buf_cstr(&b), "abc");
    assert_int_equal(buf_printf(&b, "%s", "xyz"), K_ETOOBIG);
    assert_string_equal(buf_cstr(&b), "abc");
    assert_int_equal(buf_append_str(&b, "de"), K_OK);
    assert_string_equal(buf_cstr(&b), "abcde");
    assert_int_equal(buf_append(&b, "f", 1), K_ETOOBIG);
    /* a length that would wrap len + n is refused too */
    assert_int_equal(buf_append(&b, "f", SIZE_MAX), K_ETOOBIG);
    assert_int_equal(buf_append(&b, NULL, 0), K_OK);
    buf_cleanup(&b);

    buf_init(&b, 0);
    assert_int_equal(buf_append_str(&b, "a"), K_ETOOBIG);
    assert_int_equal(buf_append_str(&b, ""), K_OK);
    buf_cleanup(&b);
}

static void test_take(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 64);
    char *p = buf_take(&b); /* empty: a new "" */
    assert_non_null(p);
    assert_string_equal(p, "");
    free(p);
    assert_int_equal(buf_append_str(&b, "hello"), K_OK);
    p = buf_take(&b);
    assert_string_equal(p, "hello");
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 0);
    assert_int_equal(b.limit, 64); /* still usable with the same limit */
    assert_int_equal(buf_append_str(&b, "again"), K_OK);
    assert_string_equal(buf_cstr(&b), "again");
    free(p);
    buf_cleanup(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty), cmocka_unit_test(test_append_keeps_terminator),
        cmocka_unit_test(test_grows), cmocka_unit_test(test_limit),
        cmocka_unit_test(test_take),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
