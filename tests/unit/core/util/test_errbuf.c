/* test_errbuf.c - one-line error messages (core/util/errbuf.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/errbuf.h"

static void test_format_and_cut(void **state)
{
    (void)state;
    char err[16];
    errbuf_printf(err, sizeof(err), "%s %d", "abc", 42);
    assert_string_equal(err, "abc 42");
    errbuf_printf(err, sizeof(err), "%s", "0123456789abcdefghij");
    assert_string_equal(err, "0123456789abcde");
    errbuf_printf(err, 1, "%s", "x");
    assert_string_equal(err, "");
    errbuf_printf(NULL, 10, "%s", "x");
    err[0] = 'q';
    errbuf_printf(err, 0, "%s", "x");
    assert_int_equal(err[0], 'q');
}

/* A cluster name read from a kubeconfig once broke the loader's message over two lines. */
static void test_control_characters_become_spaces(void **state)
{
    (void)state;
    char err[64];
    errbuf_printf(err, sizeof(err), "cluster \"%s\" not found", "a\nb\r\tc\x1b[31m\x7f");
    assert_string_equal(err, "cluster \"a b  c [31m \" not found");
    errbuf_printf(err, sizeof(err), "caf\xc3\xa9 %s", "\xe2\x98\x83");
    assert_string_equal(err, "caf\xc3\xa9 \xe2\x98\x83");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_and_cut),
        cmocka_unit_test(test_control_characters_become_spaces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
