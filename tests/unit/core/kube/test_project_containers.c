/*
 * test_project_containers.c - spec containers and the kubelet's statuses into the model
 * (core/kube/project_containers.c): matching by name and kind, the GPU marks (resources, claims,
 * extended resources a DeviceClass may serve), and the bounds on hostile pods.
 */
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

#include "gpus.h"
#include "kube/project.h"
#include "model/containers.h"
#include "util/result.h"

static void test_match_and_marks(void **state)
{
    (void)state;
    json_object *pod = json_tokener_parse(
        "{\"metadata\":{\"namespace\":\"a\",\"name\":\"p\"},\"spec\":{\"nodeName\":\"n\","
        "\"initContainers\":[{\"name\":\"setup\"}],\"containers\":[{\"name\":\"setup\","
        "\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\"}}},{\"name\":\"ext\","
        "\"resources\":{\"limits\":{\"deviceclass.resource.kubernetes.io/gpu\":\"1\"}}}]},"
        "\"status\":{\"initContainerStatuses\":[{\"name\":\"setup\",\"state\":{\"terminated\":"
        "{\"reason\":\"Completed\",\"exitCode\":0}}}],\"containerStatuses\":[{\"name\":\"ext\","
        "\"state\":{\"waiting\":{\"reason\":\"ErrImagePull\",\"message\":\"m\"}},"
        "\"restartCount\":-4},{\"name\":\"setup\",\"state\":{\"running\":{}},\"started\":true}]}}");
    struct kpod p;
    assert_int_equal(project_pod(pod, &test_gpus, &p), K_OK);
    json_object_put(pod);
    const struct pod_containers *cs = p.containers;
    assert_int_equal(cs->n, 3);
    assert_true(cs->items[0].init && cs->items[0].terminated);
    assert_string_equal(cs->items[0].term_reason, "Completed");
    assert_false(cs->items[0].gpu_resource);
    assert_true(cs->items[1].gpu_resource && cs->items[1].running && cs->items[1].started);
    assert_true(cs->items[2].gpu_resource); /* a DeviceClass's implicit name (KEP-5004) */
    assert_string_equal(cs->items[2].waiting_reason, "ErrImagePull");
    assert_int_equal(cs->items[2].restarts, 0);
    pod_cleanup(&p);
}

static void test_bounds(void **state)
{
    (void)state;
    json_object *pod = json_object_new_object();
    json_object *meta = json_object_new_object();
    json_object_object_add(meta, "name", json_object_new_string("many"));
    json_object_object_add(pod, "metadata", meta);
    json_object *spec = json_object_new_object(), *ctrs = json_object_new_array();
    json_object *status = json_object_new_object(), *sts = json_object_new_array();
    char long_msg[5000];
    memset(long_msg, 'x', sizeof(long_msg) - 1);
    long_msg[sizeof(long_msg) - 1] = '\0';
    for (int i = 0; i < 1000; i++) {
        char name[32];
        snprintf(name, sizeof(name), "c%d", i);
        json_object *c = json_object_new_object();
        json_object_object_add(c, "name", json_object_new_string(name));
        json_object_array_add(ctrs, c);
        json_object *s = json_object_new_object(), *st = json_object_new_object(),
                    *w = json_object_new_object();
        json_object_object_add(s, "name", json_object_new_string(name));
        json_object_object_add(w, "message", json_object_new_string(long_msg));
        json_object_object_add(st, "waiting", w);
        json_object_object_add(s, "state", st);
        json_object_array_add(sts, s);
    }
    json_object_object_add(spec, "containers", ctrs);
    json_object_object_add(pod, "spec", spec);
    json_object_object_add(status, "containerStatuses", sts);
    json_object_object_add(pod, "status", status);
    struct kpod p;
    assert_int_equal(project_pod(pod, &test_gpus, &p), K_OK);
    json_object_put(pod);
    assert_int_equal(p.containers->n, POD_CONTAINERS_MAX);
    assert_int_equal(p.containers->total, 1000);
    assert_int_equal(strlen(p.containers->items[0].waiting_message), CONTAINER_MESSAGE_MAX);
    pod_cleanup(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match_and_marks),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
