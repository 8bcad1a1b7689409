/* Tests for cli/printer.c: every -o format, --sort-by, --no-headers, --show-labels, AGE. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <yaml.h>

#include "printer.h"
#include "util/result.h"

static const char LIST[] =
    "{\"apiVersion\":\"x.io/v1\",\"kind\":\"ThingList\",\"metadata\":{},\"items\":["
    "{\"apiVersion\":\"x.io/v1\",\"kind\":\"Thing\",\"metadata\":{\"name\":\"node-10\","
    "\"namespace\":\"b\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\",\"labels\":{\"z\":\"1\","
    "\"a\":\"2\"}},\"spec\":{\"n\":3,\"flag\":true,\"word\":\"yes\",\"note\":\"node x: y\"}},"
    "{\"apiVersion\":\"x.io/v1\",\"kind\":\"Thing\",\"metadata\":{\"name\":\"node-2\","
    "\"namespace\":\"a\",\"creationTimestamp\":\"2026-01-01T01:00:00Z\"},\"spec\":{\"n\":12}},"
    "{\"apiVersion\":\"x.io/v1\",\"kind\":\"Thing\",\"metadata\":{\"name\":\"node-1\","
    "\"namespace\":\"a\"},\"spec\":{\"n\":-1,\"word\":\"\"}}]}";

#define T0 1767225600 /* 2026-01-01T00:00:00Z */

static int twice_cell(json_object *item, struct buf *out)
{
    json_object *spec, *n;
    int64_t v =
        json_object_object_get_ex(item, "spec", &spec) && json_object_object_get_ex(spec, "n", &n)
            ? json_object_get_int64(n)
            : 0;
    return buf_printf(out, "%lld", (long long)(2 * v));
}

static const struct printer_column cols[] = {
    {"NAMESPACE", ".metadata.namespace", PRINTER_CELL_TEXT, PRINTER_COL_NAMESPACE, NULL},
    {"NAME", ".metadata.name", PRINTER_CELL_TEXT, 0, NULL},
    {"N", "spec.n", PRINTER_CELL_TEXT, 0, NULL},
    {"AGE", ".metadata.creationTimestamp", PRINTER_CELL_AGE, 0, NULL},
    {"TWICE", NULL, PRINTER_CELL_TEXT, PRINTER_COL_WIDE, twice_cell},
};
static const struct printer_table table = {cols, sizeof(cols) / sizeof(cols[0]), NULL};

/* LIST printed with -o o (and the other settings given). */
static char *print(const char *o, const char *sort_by, bool all_ns, bool no_headers, bool labels)
{
    struct printer p;
    char err[256];
    int rc = printer_parse(o, &p, err, sizeof(err));
    if (rc)
        fail_msg("%s: %s", o, err);
    if (sort_by)
        assert_int_equal(printer_set_sort_by(&p, sort_by, err, sizeof(err)), K_OK);
    p.all_namespaces = all_ns;
    p.no_headers = no_headers;
    p.show_labels = labels;
    p.now = T0 + 2 * 3600 + 5;
    json_object *list = json_tokener_parse(LIST);
    struct buf b;
    buf_init(&b, 1u << 20);
    rc = printer_print_list(&p, list, &table, &b, err, sizeof(err));
    if (rc)
        fail_msg("%s: %s", o, err);
    json_object_put(list);
    printer_cleanup(&p);
    char *s = buf_take(&b);
    return s ? s : strdup("");
}

static void test_tables(void **state)
{
    (void)state;
    char *s = print("", NULL, false, false, false);
    assert_string_equal(s, "NAME      N         AGE\n"
                           "node-10   3         120m\n"
                           "node-2    12        60m\n"
                           "node-1    -1        <unknown>\n");
    free(s);
    s = print("wide", NULL, true, true, true);
    assert_string_equal(s, "b         node-10   3         120m        6         a=2,z=1\n"
                           "a         node-2    12        60m         24        <none>\n"
                           "a         node-1    -1        <unknown>   -2        <none>\n");
    free(s);
    s = print("custom-columns=NAME:metadata.name,WORD:{.spec.word},LABELS:.metadata.labels", NULL,
              false, false, false);
    assert_string_equal(s, "NAME      WORD      LABELS\n"
                           "node-10   yes       {\"z\":\"1\",\"a\":\"2\"}\n"
                           "node-2    <none>    <none>\n"
                           "node-1              <none>\n");
    free(s);
}

static void test_sort_by(void **state)
{
    (void)state;
    char *s = print("name", ".metadata.name", false, false, false);
    assert_string_equal(s, "thing/node-1\nthing/node-2\nthing/node-10\n"); /* natural order */
    free(s);
    s = print("name", "{.spec.n}", false, false, false);
    assert_string_equal(s, "thing/node-1\nthing/node-10\nthing/node-2\n"); /* by value */
    free(s);
    s = print("name", ".metadata.creationTimestamp", false, false, false);
    assert_string_equal(s, "thing/node-1\nthing/node-10\nthing/node-2\n"); /* missing first */
    free(s);
    s = print("jsonpath={.items[*].metadata.name}", ".metadata.namespace", false, false, false);
    assert_string_equal(s, "node-2 node-1 node-10"); /* stable among equals */
    free(s);

    struct printer p;
    char err[256];
    assert_int_equal(printer_parse("json", &p, err, sizeof(err)), K_OK);
    assert_int_equal(printer_set_sort_by(&p, ".nope", err, sizeof(err)), K_OK);
    json_object *list = json_tokener_parse(LIST);
    struct buf b;
    buf_init(&b, 1u << 20);
    assert_int_equal(printer_print_list(&p, list, &table, &b, err, sizeof(err)), K_EINVAL);
    assert_non_null(strstr(err, "couldn't find any field"));
    buf_cleanup(&b);
    json_object_put(list);
    printer_cleanup(&p);
}

/* YAML that libyaml reads back into the same scalars: quoted where plain would be another type */
static void test_yaml_and_json(void **state)
{
    (void)state;
    char *s = print("yaml", NULL, false, false, false);
    assert_non_null(strstr(s, "apiVersion: x.io/v1\nkind: ThingList\nmetadata: {}\nitems:\n"));
    assert_non_null(strstr(s, "    word: \"yes\"\n"));
    assert_non_null(strstr(s, "    word: \"\"\n"));
    /* a string libyaml will not write plain is quoted without a "!" tag (kubectl writes 'x') */
    assert_non_null(strstr(s, "    note: 'node x: y'\n"));
    assert_null(strstr(s, "! "));
    assert_non_null(strstr(s, "    flag: true\n"));
    assert_non_null(strstr(s, "    creationTimestamp: \"2026-01-01T00:00:00Z\"\n"));
    yaml_parser_t parser;
    yaml_document_t doc;
    assert_true(yaml_parser_initialize(&parser));
    yaml_parser_set_input_string(&parser, (const unsigned char *)s, strlen(s));
    assert_true(yaml_parser_load(&parser, &doc));
    assert_non_null(yaml_document_get_root_node(&doc));
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    free(s);

    s = print("json", NULL, false, false, false);
    json_object *o = json_tokener_parse(s), *want = json_tokener_parse(LIST);
    assert_true(json_object_equal(o, want));
    json_object_put(o);
    json_object_put(want);
    free(s);

    s = print("jsonpath-as-json={.items[*].spec.n}", NULL, false, false, false);
    o = json_tokener_parse(s);
    assert_int_equal(json_object_array_length(o), 3);
    json_object_put(o);
    free(s);
}

static void test_item_and_header(void **state)
{
    (void)state;
    struct printer p;
    char err[256];
    assert_int_equal(printer_parse("", &p, err, sizeof(err)), K_OK);
    p.now = T0 + 30;
    json_object *list = json_tokener_parse(LIST);
    json_object *item = json_object_array_get_idx(json_object_object_get(list, "items"), 0);
    struct buf b;
    buf_init(&b, 4096);
    assert_int_equal(printer_print_item(&p, item, &table, true, &b, err, sizeof(err)), K_OK);
    assert_string_equal(buf_cstr(&b), "NAME      N         AGE\nnode-10   3         30s\n");
    buf_reset(&b);
    assert_int_equal(printer_print_item(&p, item, &table, false, &b, err, sizeof(err)), K_OK);
    assert_string_equal(buf_cstr(&b), "node-10   3         30s\n");
    buf_cleanup(&b);
    json_object_put(list);
    printer_cleanup(&p);
}

/* A label value cannot carry U+202E (RLO) or U+2028, an annotation can: in no format do they
 * reach the terminal as they are (a bidi terminal would show the rest of a table row reversed). */
static void test_moving_characters(void **state)
{
    (void)state;
    static const char *const formats[] = {"custom-columns=NAME:.metadata.name,NOTE:.spec.note",
                                          "jsonpath={.items[*].spec.note}",
                                          "jsonpath-as-json={.items[*].spec.note}", "json", "yaml"};
    const char doc[] = "{\"kind\":\"ThingList\",\"items\":[{\"metadata\":{\"name\":\"n\"},"
                       "\"spec\":{\"note\":\"ok \\u202edetsuahxe\\u2028x\\u2066y\"}}]}";
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        struct printer p;
        char err[256];
        assert_int_equal(printer_parse(formats[i], &p, err, sizeof(err)), K_OK);
        json_object *list = json_tokener_parse(doc);
        assert_non_null(list);
        struct buf b;
        buf_init(&b, 1u << 20);
        assert_int_equal(printer_print_list(&p, list, &table, &b, err, sizeof(err)), K_OK);
        const char *out = buf_cstr(&b);
        if (strstr(out, "\xe2\x80\xae") || strstr(out, "\xe2\x80\xa8") ||
            strstr(out, "\xe2\x81\xa6"))
            fail_msg("%s: %s", formats[i], out);
        assert_non_null(strstr(out, "\\u202edetsuahxe"));
        buf_cleanup(&b);
        json_object_put(list);
        printer_cleanup(&p);
    }
}

static void test_parse_errors(void **state)
{
    (void)state;
    struct printer p;
    char err[256];
    assert_int_equal(printer_parse("toml", &p, err, sizeof(err)), K_EINVAL);
    assert_non_null(strstr(err, "allowed formats are: custom-columns,json,jsonpath"));
    printer_cleanup(&p);
    assert_int_equal(printer_parse("jsonpath=", &p, err, sizeof(err)), K_EINVAL);
    printer_cleanup(&p);
    assert_int_equal(printer_parse("custom-columns=", &p, err, sizeof(err)), K_EINVAL);
    printer_cleanup(&p);
    assert_int_equal(printer_parse("custom-columns=A:.a,B", &p, err, sizeof(err)), K_EINVAL);
    assert_non_null(strstr(err, "unexpected custom-columns spec: B"));
    printer_cleanup(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables),        cmocka_unit_test(test_sort_by),
        cmocka_unit_test(test_yaml_and_json), cmocka_unit_test(test_item_and_header),
        cmocka_unit_test(test_parse_errors),  cmocka_unit_test(test_moving_characters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
