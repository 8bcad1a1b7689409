/* Tests for cli/jsonpath.c: kubectl's JSONPath subset, its printing and its refusals. */
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

#include "jsonpath.h"
#include "util/result.h"

/* kubernetes/website jsonpath.md's example input, shortened. */
static const char DOC[] =
    "{\"kind\":\"List\",\"items\":["
    "{\"kind\":\"None\",\"metadata\":{\"name\":\"127.0.0.1\",\"labels\":{\"app.kubernetes.io/"
    "name\":\"a\"}},\"status\":{\"capacity\":{\"cpu\":\"4\"},\"addresses\":[{\"type\":"
    "\"LegacyHostIP\",\"address\":\"127.0.0.1\"}]},\"n\":10},"
    "{\"kind\":\"None\",\"metadata\":{\"name\":\"127.0.0.2\"},\"status\":{\"capacity\":{\"cpu\":"
    "\"8\"},\"addresses\":[{\"type\":\"LegacyHostIP\",\"address\":\"127.0.0.2\"},{\"type\":"
    "\"another\",\"address\":\"127.0.0.3\"}]},\"n\":2}],"
    "\"users\":[{\"name\":\"myself\",\"user\":{}},{\"name\":\"e2e\",\"user\":{\"username\":"
    "\"admin\",\"password\":\"secret\"}}]}";

/* The text of template t on DOC (asserts it parses and runs). */
static char *eval(const char *t, bool as_json)
{
    json_object *doc = json_tokener_parse(DOC);
    assert_non_null(doc);
    struct jsonpath *jp = NULL;
    char err[256];
    int rc = jsonpath_parse(t, false, &jp, err, sizeof(err));
    if (rc)
        fail_msg("%s: %s", t, err);
    struct buf b;
    buf_init(&b, 1u << 20);
    assert_int_equal(jsonpath_print(jp, doc, as_json, &b, err, sizeof(err)), K_OK);
    jsonpath_free(jp);
    json_object_put(doc);
    char *s = buf_take(&b);
    return s ? s : strdup("");
}

static void expect(const char *t, const char *want)
{
    char *got = eval(t, false);
    if (strcmp(got, want) != 0)
        fail_msg("%s: got \"%s\", want \"%s\"", t, got, want);
    free(got);
}

static void test_kubectl_doc_table(void **state)
{
    (void)state;
    /* the rows of kubectl's JSONPath documentation */
    expect("kind is {.kind}", "kind is List");
    expect("{\"{\"}", "{");
    expect("{.kind}", "List");
    expect("{['kind']}", "List");
    expect("{$.kind}", "List");
    expect("{..name}", "127.0.0.1 127.0.0.2 myself e2e");
    expect("{.items[*].metadata.name}", "127.0.0.1 127.0.0.2");
    expect("{.users[0].name}", "myself");
    expect("{.users[-1].name}", "e2e");
    expect("{.users[0:1].name}", "myself");
    expect("{.items[*]['metadata.name','kind']}", "None None"); /* no such key: no result */
    expect("{.items[*].status.capacity}", "{\"cpu\":\"4\"} {\"cpu\":\"8\"}");
    expect("{.users[?(@.name==\"e2e\")].user.password}", "secret");
    expect("{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}",
           "[127.0.0.1, {\"cpu\":\"4\"}] [127.0.0.2, {\"cpu\":\"8\"}] ");
    expect("{range .users[*]}{.name}{\"\\t\"}{end}", "myself\te2e\t");
}

static void test_fields_indices_filters(void **state)
{
    (void)state;
    expect("{.items[0].metadata.labels['app.kubernetes.io/name']}", "a");
    /* kubectl's escaped dot: one name with dots in it */
    expect("{.items[0].metadata.labels.app\\.kubernetes\\.io/name}", "a");
    expect("{.items[*].metadata.labels.app\\.kubernetes\\.io/name}", "a");
    expect("{.items[1].metadata.labels}", ""); /* missing: nothing, as kubectl allows it */
    expect("{.items[5].kind}", "");            /* out of range: nothing */
    expect("{.items[*].n}", "10 2");
    expect("{.items[?(@.n > 5)].metadata.name}", "127.0.0.1");
    expect("{.items[?(@.n <= 5)].metadata.name}", "127.0.0.2");
    expect("{.items[?(@.n != 10)].metadata.name}", "127.0.0.2");
    expect("{.items[?(@.metadata.labels)].metadata.name}", "127.0.0.1");
    expect("{.items[*].status.addresses[?(@.type==\"another\")].address}", "127.0.0.3");
    expect("{.users[*].user.*}", "admin secret");
    expect("{.users[0,1].name}", "myself e2e");
    expect("{.users[::1].name}", "myself e2e");
    expect("{range .items[*]}{range .status.addresses[*]}{.address};{end}{end}",
           "127.0.0.1;127.0.0.2;127.0.0.3;");
    expect("{range .items[*]}{$.kind}{end}", "ListList");
    expect("{@.kind}", "List");
}

static void test_as_json(void **state)
{
    (void)state;
    char *s = eval("{.items[*].metadata.name}", true);
    json_object *o = json_tokener_parse(s);
    free(s);
    assert_non_null(o);
    assert_int_equal(json_object_array_length(o), 2);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(o, 1)), "127.0.0.2");
    json_object_put(o);
}

static void test_relaxed_first_and_cell(void **state)
{
    (void)state;
    json_object *doc = json_tokener_parse(DOC);
    static const char *const forms[] = {"kind", ".kind", "{.kind}", "{kind}"};
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        struct jsonpath *jp;
        char err[256];
        assert_int_equal(jsonpath_parse(forms[i], true, &jp, err, sizeof(err)), K_OK);
        json_object *v;
        bool found;
        assert_int_equal(jsonpath_first(jp, doc, &v, &found), K_OK);
        assert_true(found);
        assert_string_equal(json_object_get_string(v), "List");
        jsonpath_free(jp);
    }
    struct jsonpath *jp;
    char err[256];
    assert_int_equal(jsonpath_parse(".users[*].name", true, &jp, err, sizeof(err)), K_OK);
    struct buf b;
    buf_init(&b, 1024);
    assert_int_equal(jsonpath_cell(jp, doc, &b), K_OK);
    assert_string_equal(buf_cstr(&b), "myself,e2e");
    jsonpath_free(jp);
    assert_int_equal(jsonpath_parse(".nope", true, &jp, err, sizeof(err)), K_OK);
    buf_reset(&b);
    assert_int_equal(jsonpath_cell(jp, doc, &b), K_OK);
    assert_string_equal(buf_cstr(&b), "<none>");
    jsonpath_free(jp);
    buf_cleanup(&b);
    json_object_put(doc);
}

/* Strings reach the text escaped for a terminal; the template's own text does not change. */
static void test_escapes_values(void **state)
{
    (void)state;
    json_object *doc = json_tokener_parse("{\"a\":\"x\\u001b[2J\\u009by\"}");
    struct jsonpath *jp;
    char err[256];
    assert_int_equal(jsonpath_parse("{.a}\n", false, &jp, err, sizeof(err)), K_OK);
    struct buf b;
    buf_init(&b, 1024);
    assert_int_equal(jsonpath_print(jp, doc, false, &b, err, sizeof(err)), K_OK);
    assert_string_equal(buf_cstr(&b), "x\\x1b[2J\\u009by\n");
    buf_cleanup(&b);
    jsonpath_free(jp);
    json_object_put(doc);
}

static void expect_refused(const char *t, const char *needle)
{
    struct jsonpath *jp = NULL;
    char err[256];
    assert_int_equal(jsonpath_parse(t, false, &jp, err, sizeof(err)), K_EINVAL);
    assert_null(jp);
    if (!strstr(err, needle))
        fail_msg("%s: \"%s\" lacks \"%s\"", t, err, needle);
}

static void test_refusals(void **state)
{
    (void)state;
    expect_refused("{.a", "want '}'");
    expect_refused("{range .items[*]}{.a}", "{range} without {end}");
    expect_refused("{end}", "{end} without {range}");
    expect_refused("{.a[?(@.x==1 && @.y==2)]}", "&&, || and =~ are not supported");
    expect_refused("{.a[?(@.x=~/y/)]}", "not supported");
    expect_refused("{len(.a)}", "want a path");
    expect_refused("{.a[x]}", "after '['");
    expect_refused("{\"abc}", "unterminated quoted string");
    struct jsonpath *jp = NULL;
    char err[256];
    assert_int_equal(jsonpath_parse("{a}}", true, &jp, err, sizeof(err)), K_EINVAL);
    char big[JSONPATH_MAX_TEMPLATE + 2];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(jsonpath_parse(big, false, &jp, err, sizeof(err)), K_ETOOBIG);
}

/* Nested ranges multiply: one budget for the whole run ends them (K_ETOOBIG, not minutes of
 * CPU); a slice's step near LONG_MAX ends without overflow. */
static void test_run_budget(void **state)
{
    (void)state;
    json_object *doc = json_object_new_array();
    for (int i = 0; i < 2000; i++)
        json_object_array_add(doc, json_object_new_int(i));
    struct jsonpath *jp = NULL;
    char err[256];
    assert_int_equal(
        jsonpath_parse("{range $[*]}{range $[*]}{@}{end}{end}", false, &jp, err, sizeof(err)),
        K_OK);
    struct buf b;
    buf_init(&b, 1u << 30);
    assert_int_equal(jsonpath_print(jp, doc, false, &b, err, sizeof(err)), K_ETOOBIG);
    assert_non_null(strstr(err, "in all"));
    jsonpath_free(jp);
    buf_reset(&b);
    assert_int_equal(jsonpath_parse("{$[1::9223372036854775807]}", false, &jp, err, sizeof(err)),
                     K_OK);
    assert_int_equal(jsonpath_print(jp, doc, false, &b, err, sizeof(err)), K_OK);
    assert_string_equal(buf_cstr(&b), "1");
    jsonpath_free(jp);
    buf_cleanup(&b);
    json_object_put(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubectl_doc_table), cmocka_unit_test(test_fields_indices_filters),
        cmocka_unit_test(test_as_json),           cmocka_unit_test(test_relaxed_first_and_cell),
        cmocka_unit_test(test_escapes_values),    cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_run_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
