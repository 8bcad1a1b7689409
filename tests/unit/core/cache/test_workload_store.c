/*
 * test_workload_store.c - core/cache/workload_store.c: a pod finds its Workload by its own uid
 * (pod integration) or its controller owner's (a Job), replacements, removals and a relist.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "cache/workload_store.h"
#include "kube/project_workload.h"
#include "util/result.h"

/* Workload ns/name owned by `kind` with uid `owner`, QuotaReserved `status`. */
static int put(struct workload_store *ws, const char *name, const char *kind, const char *owner,
               const char *status, bool *changed)
{
    char doc[1024];
    snprintf(doc, sizeof(doc),
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"ownerReferences\":[{\"kind\":"
             "\"%s\",\"name\":\"o\",\"uid\":\"%s\"}]},\"status\":{\"conditions\":[{\"type\":"
             "\"QuotaReserved\",\"status\":\"%s\"}]}}",
             name, kind, owner, status);
    json_object *o = json_tokener_parse(doc);
    struct kworkload w;
    assert_int_equal(project_workload(o, &w), K_OK);
    json_object_put(o);
    int rc = workload_store_upsert(ws, &w, changed);
    if (rc != K_OK)
        workload_cleanup(&w);
    return rc;
}

static const char *lookup(struct workload_store *ws, const char *pod_uid, const char *owner_uid)
{
    workload_store_read_lock(ws);
    const struct kworkload *w = workload_store_for_pod(ws, pod_uid, owner_uid);
    const char *name = w ? w->name : NULL;
    workload_store_read_unlock(ws);
    return name;
}

static void test_lookup(void **state)
{
    (void)state;
    struct workload_store *ws = workload_store_new();
    bool changed;
    assert_int_equal(put(ws, "pod-a", "Pod", "pa", "False", &changed), K_OK);
    assert_true(changed);
    assert_int_equal(put(ws, "job-j", "Job", "jj", "False", &changed), K_OK);
    assert_string_equal(lookup(ws, "pa", NULL), "pod-a");
    assert_string_equal(lookup(ws, "px", "jj"), "job-j");
    assert_null(lookup(ws, "px", "jx"));
    assert_null(lookup(ws, NULL, NULL));
    assert_null(workload_store_for_pod(NULL, "pa", NULL));
    workload_store_read_lock(ws);
    assert_int_equal(workload_store_count(ws), 2);
    workload_store_read_unlock(ws);
    workload_store_free(ws);
}

static void test_replace_and_remove(void **state)
{
    (void)state;
    struct workload_store *ws = workload_store_new();
    bool changed;
    assert_int_equal(put(ws, "w", "Pod", "p1", "False", &changed), K_OK);
    assert_int_equal(put(ws, "w", "Pod", "p1", "False", &changed), K_OK);
    assert_false(changed); /* the same */
    assert_int_equal(put(ws, "w", "Pod", "p2", "True", &changed), K_OK);
    assert_true(changed);
    assert_null(lookup(ws, "p1", NULL)); /* the old owner's entry went with it */
    assert_string_equal(lookup(ws, "p2", NULL), "w");
    assert_true(workload_store_remove(ws, "ns", "w"));
    assert_false(workload_store_remove(ws, "ns", "w"));
    assert_null(lookup(ws, "p2", NULL));
    workload_store_free(ws);
}

static void test_relist(void **state)
{
    (void)state;
    struct workload_store *ws = workload_store_new();
    for (int i = 0; i < 5000; i++) {
        char name[32], uid[32];
        snprintf(name, sizeof(name), "w%d", i);
        snprintf(uid, sizeof(uid), "u%d", i);
        assert_int_equal(put(ws, name, "Pod", uid, "False", NULL), K_OK);
    }
    workload_store_sync_begin(ws);
    assert_int_equal(put(ws, "w7", "Pod", "u7", "False", NULL), K_OK);
    assert_int_equal(workload_store_sync_end(ws), 4999);
    assert_string_equal(lookup(ws, "u7", NULL), "w7");
    assert_null(lookup(ws, "u8", NULL));
    workload_store_clear(ws);
    assert_null(lookup(ws, "u7", NULL));
    workload_store_free(ws);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_replace_and_remove),
        cmocka_unit_test(test_relist),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
