/* Tests for core/kube/json.c: typed field reads that treat anything unexpected as absent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "kube/json.h"
#include "util/result.h"

static void test_getters(void **state)
{
    (void)state;
    json_object *o = json_tokener_parse(
        "{\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"7\",\"annotations\":"
        "{\"gputri/cause\":\"taint\",\"n\":1}},\"spec\":{\"replicas\":3,\"big\":"
        "99999999999999999999,\"f\":1.5,\"nul\":null,\"s\":\"x\",\"a\":[1]}}");
    assert_non_null(o);
    json_object *spec = kube_json_get(o, "spec", json_type_object);
    assert_non_null(spec);
    assert_null(kube_json_get(o, "spec", json_type_array));
    assert_non_null(kube_json_field(spec, "a"));
    assert_null(kube_json_field(spec, "nul"));
    assert_null(kube_json_field(spec, "missing"));
    assert_string_equal(kube_json_str(spec, "s"), "x");
    assert_null(kube_json_str(spec, "replicas"));
    assert_int_equal(kube_json_int(spec, "replicas", -1), 3);
    assert_int_equal(kube_json_int(spec, "big", -1), INT64_MAX);
    assert_int_equal(kube_json_int(spec, "f", -1), -1);
    assert_int_equal(kube_json_int(spec, "s", -1), -1);
    assert_string_equal(kube_json_meta_str(o, "name"), "p");
    assert_string_equal(kube_json_meta_str(o, "resourceVersion"), "7");
    assert_null(kube_json_meta_str(o, "namespace"));
    assert_string_equal(kube_json_annotation(o, "gputri/cause"), "taint");
    assert_null(kube_json_annotation(o, "n"));
    assert_null(kube_json_annotation(spec, "gputri/cause"));
    /* not an object, or NULL: absent */
    json_object *arr = kube_json_get(spec, "a", json_type_array);
    assert_null(kube_json_field(arr, "x"));
    assert_null(kube_json_str(NULL, "x"));
    assert_null(kube_json_meta_str(arr, "name"));
    assert_int_equal(kube_json_int(NULL, "x", 5), 5);
    json_object_put(o);
}

static void test_dup_opt(void **state)
{
    (void)state;
    char *out = (char *)"untouched";
    assert_int_equal(kube_json_dup_opt(NULL, &out), K_OK);
    assert_null(out);
    const char *src = "gpu-claim";
    assert_int_equal(kube_json_dup_opt(src, &out), K_OK);
    assert_string_equal(out, "gpu-claim");
    assert_ptr_not_equal(out, src);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_getters),
        cmocka_unit_test(test_dup_opt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
