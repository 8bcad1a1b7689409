/* Tests for cli/answer.c: when gputri-controller wrote its answer (managedFields), the resource a
 * 403 names, and which annotations stand for a live classification. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "answer.h"
#include "util/result.h"

static json_object *pod_with(const char *managed_fields)
{
    char text[4096];
    snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"p\",\"managedFields\":%s}}",
             managed_fields);
    json_object *o = json_tokener_parse(text);
    assert_non_null(o);
    return o;
}

static void test_written_from_managed_fields(void **state)
{
    (void)state;
    static const struct {
        const char *mf;
        int64_t want;
    } cases[] = {
        /* the controller's entry owning the annotation */
        {"[{\"manager\":\"gputri-controller\",\"time\":\"2026-12-06T10:05:00Z\",\"fieldsV1\":"
         "{\"f:metadata\":{\"f:annotations\":{\"f:gputri/cause\":{}}}}}]",
         1796551500},
        /* another manager owns it, or the controller's entry owns something else */
        {"[{\"manager\":\"kubectl\",\"time\":\"2026-12-06T10:05:00Z\",\"fieldsV1\":"
         "{\"f:metadata\":{\"f:annotations\":{\"f:gputri/cause\":{}}}}},"
         "{\"manager\":\"gputri-controller\",\"time\":\"2026-12-06T10:06:00Z\",\"fieldsV1\":"
         "{\"f:metadata\":{\"f:labels\":{}}}}]",
         0},
        /* two entries (operations): the newest */
        {"[{\"manager\":\"gputri-controller\",\"time\":\"2026-12-06T10:05:00Z\",\"fieldsV1\":"
         "{\"f:metadata\":{\"f:annotations\":{\"f:gputri/cause\":{}}}}},"
         "{\"manager\":\"gputri-controller\",\"time\":\"2026-12-06T10:07:00Z\",\"fieldsV1\":"
         "{\"f:metadata\":{\"f:annotations\":{\"f:gputri/cause\":{}}}}}]",
         1796551620},
        /* malformed: a bad time, wrong types, not an array */
        {"[{\"manager\":\"gputri-controller\",\"time\":\"yesterday\",\"fieldsV1\":"
         "{\"f:metadata\":{\"f:annotations\":{\"f:gputri/cause\":{}}}}}]",
         0},
        {"[7,\"x\",{\"manager\":[],\"fieldsV1\":3}]", 0},
        {"{}", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *pod = pod_with(cases[i].mf);
        int64_t got =
            answer_written_from_managed_fields(pod, POD_ANNOTATION_MANAGER, POD_ANNOTATION_CAUSE);
        if (got != cases[i].want)
            fail_msg("case %zu: %lld, want %lld", i, (long long)got, (long long)cases[i].want);
        json_object_put(pod);
    }
    assert_int_equal(answer_written_from_managed_fields(NULL, "m", "k"), 0);
}

/* Past ANSWER_MANAGED_FIELDS_MAX entries nothing more is looked at. */
static void test_managed_fields_bound(void **state)
{
    (void)state;
    json_object *arr = json_object_new_array();
    for (int i = 0; i < ANSWER_MANAGED_FIELDS_MAX; i++)
        json_object_array_add(arr, json_tokener_parse("{\"manager\":\"other\"}"));
    json_object_array_add(
        arr, json_tokener_parse("{\"manager\":\"gputri-controller\",\"time\":"
                                "\"2026-12-06T10:05:00Z\",\"fieldsV1\":{\"f:metadata\":"
                                "{\"f:annotations\":{\"f:gputri/cause\":{}}}}}"));
    json_object *meta = json_object_new_object();
    json_object_object_add(meta, "managedFields", arr);
    json_object *pod = json_object_new_object();
    json_object_object_add(pod, "metadata", meta);
    assert_int_equal(
        answer_written_from_managed_fields(pod, POD_ANNOTATION_MANAGER, POD_ANNOTATION_CAUSE), 0);
    json_object_put(pod);
}

static void test_forbidden_resource(void **state)
{
    (void)state;
    char out[64];
    answer_forbidden_resource("nodes is forbidden: User \"u\" cannot list resource \"nodes\" in "
                              "API group \"\" at the cluster scope",
                              out, sizeof(out));
    assert_string_equal(out, "nodes");
    answer_forbidden_resource("resourceslices.resource.k8s.io is forbidden: User \"u\" cannot "
                              "list resource \"resourceslices\" in API group \"resource.k8s.io\"",
                              out, sizeof(out));
    assert_string_equal(out, "resourceslices");
    answer_forbidden_resource("access denied", out, sizeof(out));
    assert_string_equal(out, "");
    answer_forbidden_resource("cannot list resource \"unterminated", out, sizeof(out));
    assert_string_equal(out, "");
    answer_forbidden_resource(NULL, out, sizeof(out));
    assert_string_equal(out, "");
    /* a terminal escape in the name is escaped, never passed */
    answer_forbidden_resource("cannot list resource \"a\x1b[2Jb\"", out, sizeof(out));
    assert_string_equal(out, "a\\x1b[2Jb");
}

/* An unbound pod's answer is never one only a bound pod can have (forged, or stale). */
static void test_usable_unbound(void **state)
{
    (void)state;
    struct kpod p;
    memset(&p, 0, sizeof(p));
    assert_false(pod_annotation_usable(&p));
    static const struct {
        const char *cause;
        bool usable;
    } cases[] = {
        {"exhausted", true},
        {"taint", true},
        {"gang-waiting", true},
        {"ok", false},
        {"node-rejected", false},
        {"runtime-missing", false},
        {"image-pull-failed", false},
        {"container-start-failed", false},
        {"", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        p.cause = (char *)cases[i].cause;
        if (pod_annotation_usable(&p) != cases[i].usable)
            fail_msg("%s: want usable=%d", cases[i].cause, cases[i].usable);
    }
}

/* The answer from a pod as the API server returns it: the word, its detail, when it was written;
 * none for a stale word, a word not on the ladder, or another pod. */
static void test_from_object(void **state)
{
    (void)state;
#define POD_FMT                                                                                    \
    "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\",\"uid\":\"u\",\"annotations\":"            \
    "{\"gputri/cause\":\"%s\",\"gputri/detail\":\"no node has a free GPU\"},"                      \
    "\"managedFields\":[{\"manager\":\"gputri-controller\",\"operation\":\"Apply\","               \
    "\"time\":\"2026-12-06T10:05:00Z\",\"fieldsV1\":{\"f:metadata\":{\"f:annotations\":"           \
    "{\"f:gputri/cause\":{},\"f:gputri/detail\":{}}}}}]},"                                         \
    "\"spec\":{%s\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":"                       \
    "{\"nvidia.com/gpu\":\"1\"}}}]},\"status\":{\"phase\":\"Pending\"}}"
    static const struct {
        const char *cause, *spec, *name, *want;
        int64_t written;
    } cases[] = {
        {"exhausted", "", "p", "exhausted", 1796551500},
        {"exhausted", "\"nodeName\":\"n\",", "p", "", 0}, /* bound since: stale */
        {"no-such-word", "", "p", "", 0},
        {"exhausted", "", "other", "", 0},
    };
    struct gpu_set gpus;
    assert_int_equal(gpu_set_parse(&gpus, GPU_SET_DEFAULT), K_OK);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[2048];
        snprintf(text, sizeof(text), POD_FMT, cases[i].cause, cases[i].spec);
        json_object *pod = json_tokener_parse(text);
        assert_non_null(pod);
        struct pod_answer a;
        assert_int_equal(pod_answer_from_object(&gpus, "ns", cases[i].name, pod, &a), K_OK);
        if (strcmp(a.cause, cases[i].want) != 0 || a.written != cases[i].written)
            fail_msg("case %zu: cause \"%s\" written %lld", i, a.cause, (long long)a.written);
        if (*a.cause)
            assert_string_equal(a.detail, "no node has a free GPU");
        json_object_put(pod);
    }
    gpu_set_cleanup(&gpus);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_written_from_managed_fields),
        cmocka_unit_test(test_from_object),
        cmocka_unit_test(test_managed_fields_bound),
        cmocka_unit_test(test_forbidden_resource),
        cmocka_unit_test(test_usable_unbound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
