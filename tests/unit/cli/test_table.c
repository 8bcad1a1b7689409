/* Tests for cli/table.c: kubectl's tabwriter layout (minwidth 10, padding 3), escaping, indent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "table.h"
#include "util/result.h"

static char *render(const struct table *t, size_t indent)
{
    struct buf b;
    buf_init(&b, 1u << 20);
    assert_int_equal(table_render(t, indent, &b), K_OK);
    char *s = buf_take(&b);
    return s ? s : strdup("");
}

static void test_columns_use_min_width_and_padding(void **state)
{
    (void)state;
    struct table t;
    table_init(&t, 3);
    assert_int_equal(table_addf(&t, "NAME", "STATUS", "AGE"), K_OK);
    assert_int_equal(table_addf(&t, "a-rather-long-name", "Running", "5m"), K_OK);
    assert_int_equal(table_addf(&t, "x", "Pending", "10s"), K_OK);
    char *s = render(&t, 0);
    /* col 0: 18 + 3 = 21; col 1: max(7 + 3, 10) = 10; the last column is not padded */
    assert_string_equal(s, "NAME                 STATUS    AGE\n"
                           "a-rather-long-name   Running   5m\n"
                           "x                    Pending   10s\n");
    free(s);
    table_cleanup(&t);
}

static void test_short_cells_still_get_min_width(void **state)
{
    (void)state;
    struct table t;
    table_init(&t, 2);
    assert_int_equal(table_addf(&t, "A", "B"), K_OK);
    char *s = render(&t, 0);
    assert_string_equal(s, "A         B\n");
    free(s);
    table_cleanup(&t);
}

static void test_no_trailing_spaces_and_empty_last_cell(void **state)
{
    (void)state;
    struct table t;
    table_init(&t, 2);
    assert_int_equal(table_addf(&t, "KEY", ""), K_OK);
    char *s = render(&t, 0);
    assert_string_equal(s, "KEY       \n"); /* padding belongs to column 0, nothing after */
    free(s);
    table_cleanup(&t);
}

static void test_utf8_counts_code_points(void **state)
{
    (void)state;
    assert_int_equal(table_text_width("abc"), 3);
    assert_int_equal(table_text_width("\xc3\xa9t\xc3\xa9"), 3); /* été */
    assert_int_equal(table_text_width("\xe2\x9c\x93 ok"), 4);   /* check mark */
    struct table t;
    table_init(&t, 2);
    assert_int_equal(table_addf(&t, "caf\xc3\xa9-node-long", "x"), K_OK);
    assert_int_equal(table_addf(&t, "n", "y"), K_OK);
    char *s = render(&t, 0);
    /* 14 code points + 3 = 17 columns, so the second row pads "n" with 16 spaces */
    assert_string_equal(s, "caf\xc3\xa9-node-long   x\nn                y\n");
    free(s);
    table_cleanup(&t);
}

static void test_control_characters_are_escaped(void **state)
{
    (void)state;
    struct table t;
    table_init(&t, 2);
    assert_int_equal(table_addf(&t, "a\tb", "line1\nline2\r"), K_OK);
    /* an annotation with an ESC colour sequence, DEL, a C1 CSI (U+009B), an OSC (U+009D) ended
     * by ST (U+009C), a byte that is not UTF-8, and a valid é that must pass */
    assert_int_equal(table_addf(&t, "\x1b[31mred\x7f",
                                "\xc2\x9b"
                                "2J\xc2\x9d"
                                "0;x\xc2\x9c\xff\xc3\xa9"),
                     K_OK);
    char *s = render(&t, 0);
    assert_string_equal(s, "a\\x09b            line1\\x0aline2\\x0d\n"
                           "\\x1b[31mred\\x7f   \\u009b2J\\u009d0;x\\u009c\\xff\xc3\xa9\n");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        assert_true(*p == '\n' || (*p >= 0x20 && *p != 0x7f));
        assert_false(*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f);
    }
    free(s);
    table_cleanup(&t);
}

static void test_indent_and_null_cells(void **state)
{
    (void)state;
    struct table t;
    table_init(&t, 3);
    const char *row[] = {"N", NULL, "z"};
    assert_int_equal(table_add_row(&t, row), K_OK);
    char *s = render(&t, 2);
    assert_string_equal(s, "  N                   z\n");
    free(s);
    table_cleanup(&t);
}

static void test_many_rows_grow(void **state)
{
    (void)state;
    struct table t;
    table_init(&t, 2);
    char name[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof(name), "pod-%d", i);
        assert_int_equal(table_addf(&t, name, "v"), K_OK);
    }
    assert_int_equal(t.nrows, 1000);
    char *s = render(&t, 0);
    /* widest cell "pod-999" (7) + 3 = 10 */
    assert_non_null(strstr(s, "pod-999   v\n"));
    assert_non_null(strstr(s, "pod-0     v\n"));
    free(s);
    table_cleanup(&t);
}

static void test_empty_table_renders_nothing(void **state)
{
    (void)state;
    struct table t;
    table_init(&t, 4);
    char *s = render(&t, 0);
    assert_string_equal(s, "");
    free(s);
    table_cleanup(&t);
}

static void test_print_to_stream(void **state)
{
    (void)state;
    struct table t;
    table_init(&t, 2);
    assert_int_equal(table_addf(&t, "A", "B"), K_OK);
    char *mem = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&mem, &len);
    assert_non_null(f);
    assert_int_equal(table_print(&t, 1, f), K_OK);
    fclose(f);
    assert_string_equal(mem, " A         B\n");
    free(mem);
    table_cleanup(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns_use_min_width_and_padding),
        cmocka_unit_test(test_short_cells_still_get_min_width),
        cmocka_unit_test(test_no_trailing_spaces_and_empty_last_cell),
        cmocka_unit_test(test_utf8_counts_code_points),
        cmocka_unit_test(test_control_characters_are_escaped),
        cmocka_unit_test(test_indent_and_null_cells),
        cmocka_unit_test(test_many_rows_grow),
        cmocka_unit_test(test_empty_table_renders_nothing),
        cmocka_unit_test(test_print_to_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
