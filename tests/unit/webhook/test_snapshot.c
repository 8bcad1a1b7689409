/* Tests for webhook/snapshot.c: projection errors are reported as what they are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "model/model.h"
#include "snapshot.h"
#include "util/result.h"

/* A quota naming more GPU keys than a resource list holds is K_ETOOBIG, not out of memory. */
static void test_quota_too_many_keys(void **state)
{
    (void)state;
    struct gpu_set gpus = {0};
    assert_int_equal(gpu_set_parse(&gpus, "example.com/*"), K_OK);
    for (int n = RESOURCE_LIST_MAX; n <= RESOURCE_LIST_MAX + 1; n++) {
        json_object *hard = json_object_new_object();
        for (int i = 0; i < n; i++) {
            char key[64];
            snprintf(key, sizeof(key), "requests.example.com/gpu-%d", i);
            json_object_object_add(hard, key, json_object_new_string("1"));
        }
        json_object *spec = json_object_new_object(), *meta = json_object_new_object();
        json_object_object_add(spec, "hard", hard);
        json_object_object_add(meta, "name", json_object_new_string("q"));
        json_object_object_add(meta, "namespace", json_object_new_string("ns"));
        json_object *obj = json_object_new_object();
        json_object_object_add(obj, "metadata", meta);
        json_object_object_add(obj, "spec", spec);
        struct wh_quota q;
        int rc = wh_project_quota(obj, &gpus, &q);
        if (n <= RESOURCE_LIST_MAX) {
            assert_int_equal(rc, K_OK);
            assert_int_equal(q.hard.n, (size_t)n);
        } else {
            assert_int_equal(rc, K_ETOOBIG);
            assert_null(q.name); /* cleaned up */
        }
        wh_quota_cleanup(&q);
        json_object_put(obj);
    }
    gpu_set_cleanup(&gpus);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quota_too_many_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
