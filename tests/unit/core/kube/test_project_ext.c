/* test_project_ext.c - core/kube/project_ext.c: extended resources served by DRA (KEP-5004)
 * from JSON: a DeviceClass's extendedResourceName, a pod's per-container requests and its
 * status.extendedResourceClaimStatus. */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "gpus.h"
#include "kube/project.h"
#include "model/dra.h"
#include "util/result.h"

static json_object *parse(const char *text)
{
    json_object *o = json_tokener_parse(text);
    assert_non_null(o);
    return o;
}

/* project_pod() of `o` succeeds and keeps `n_requests` extended-resource requests in p->ext. */
static void project_with_ext(json_object *o, struct kpod *p, size_t n_requests)
{
    assert_int_equal(project_pod(o, &test_gpus, p), K_OK);
    assert_non_null(p->ext);
    assert_int_equal(p->ext->n_requests, n_requests);
}

static void test_class(void **state)
{
    (void)state;
    json_object *o =
        parse("{\"metadata\":{\"name\":\"gpu.nvidia.com\",\"creationTimestamp\":\"2026-12-06T08:00:"
              "00Z\"},"
              "\"spec\":{\"extendedResourceName\":\"nvidia.com/gpu\",\"selectors\":[{\"cel\":{"
              "\"expression\":\"device.driver == 'gpu.nvidia.com'\"}}]}}");
    struct dra_class c;
    assert_int_equal(project_dra_class(o, &c), K_OK);
    assert_string_equal(c.extended_resource_name, "nvidia.com/gpu");
    assert_true(c.created > 0);
    dra_class_cleanup(&c);
    json_object_put(o);
    o = parse(
        "{\"metadata\":{\"name\":\"mig.nvidia.com\"},\"spec\":{\"extendedResourceName\":\"\"}}");
    assert_int_equal(project_dra_class(o, &c), K_OK);
    assert_null(c.extended_resource_name);
    assert_int_equal(c.created, 0);
    dra_class_cleanup(&c);
    json_object_put(o);
}

static void test_special_claim(void **state)
{
    (void)state;
    json_object *o =
        parse("{\"metadata\":{\"name\":\"p-extended-resources-abcde\",\"namespace\":\"ns\","
              "\"annotations\":{\"resource.kubernetes.io/extended-resource-claim\":\"true\"},"
              "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"p\",\"uid\":"
              "\"u1\","
              "\"controller\":true}]},\"spec\":{\"devices\":{\"requests\":[{\"name\":"
              "\"container-0-request-0\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\","
              "\"allocationMode\":\"ExactCount\",\"count\":1}}]}}}");
    struct dra_claim c;
    assert_int_equal(project_dra_claim(o, &c), K_OK);
    assert_true(c.extended);
    assert_string_equal(c.owner_pod_name, "p");
    assert_string_equal(c.owner_pod_uid, "u1");
    dra_claim_cleanup(&c);
    json_object_put(o);

    /* the API server does not validate an ownerReference's name: any user of the namespace
     * writes one; a name that is no pod name is not kept (the uid is) */
    static const char *const bad[] = {"Upgrade now; run curl x | sh", "p\\n", "-p", "p.", "P"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_object *claim = parse(
            "{\"metadata\":{\"name\":\"fake\",\"namespace\":\"ns\",\"annotations\":{"
            "\"resource.kubernetes.io/extended-resource-claim\":\"true\"},\"ownerReferences\":[{"
            "\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"uid\":\"u2\",\"controller\":true}]},"
            "\"spec\":{}}");
        json_object *ref = json_object_array_get_idx(
            json_object_object_get(json_object_object_get(claim, "metadata"), "ownerReferences"),
            0);
        json_object_object_add(ref, "name", json_object_new_string(bad[i]));
        assert_int_equal(project_dra_claim(claim, &c), K_OK);
        assert_true(c.extended);
        assert_null(c.owner_pod_name);
        assert_string_equal(c.owner_pod_uid, "u2");
        dra_claim_cleanup(&c);
        json_object_put(claim);
    }
    char long_name[300];
    memset(long_name, 'a', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = 0;
    json_object *claim = parse("{\"metadata\":{\"name\":\"fake\",\"ownerReferences\":[{"
                               "\"kind\":\"Pod\",\"uid\":\"u3\",\"controller\":true}]}}");
    json_object_object_add(
        json_object_array_get_idx(
            json_object_object_get(json_object_object_get(claim, "metadata"), "ownerReferences"),
            0),
        "name", json_object_new_string(long_name));
    assert_int_equal(project_dra_claim(claim, &c), K_OK);
    assert_null(c.owner_pod_name);
    dra_claim_cleanup(&c);
    json_object_put(claim);
}

/* Init container 0 (not a sidecar) asks 3, sidecar 1 asks 1, main 2 asks 2 (and cpu, memory),
 * main 3 asks through limits only; the implicit class name is kept too, amd.com/foo is not. */
static void test_pod(void **state)
{
    (void)state;
    json_object *o = parse(
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u1\"},\"spec\":{"
        "\"initContainers\":[{\"name\":\"init\",\"resources\":{\"requests\":{\"nvidia.com/"
        "gpu\":\"3\"}}},"
        "{\"name\":\"side\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{"
        "\"nvidia.com/gpu\":\"1\"}}}],"
        "\"containers\":[{\"name\":\"main\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":"
        "\"1Gi\","
        "\"nvidia.com/gpu\":\"2\",\"example.com/foo\":\"1\"}}},"
        "{\"name\":\"lim\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\",\"cpu\":\"2\"},"
        "\"requests\":{\"cpu\":\"1\",\"deviceclass.resource.kubernetes.io/"
        "gpu.nvidia.com\":\"1\"}}}]},"
        "\"status\":{\"extendedResourceClaimStatus\":{\"resourceClaimName\":\"p-extended-resources-"
        "x\","
        "\"requestMappings\":[{\"containerName\":\"main\",\"resourceName\":\"nvidia.com/gpu\","
        "\"requestName\":\"container-2-request-3\"}]}}}");
    struct kpod p;
    project_with_ext(o, &p, 5);
    const struct pod_ext_request *r = p.ext->requests;
    /* sorted by resource, then container */
    assert_string_equal(r[0].resource, "deviceclass.resource.kubernetes.io/gpu.nvidia.com");
    assert_int_equal(r[0].container, 3);
    assert_int_equal(r[0].index, 1); /* cpu < deviceclass... < nvidia.com/gpu */
    assert_string_equal(r[1].resource, "nvidia.com/gpu");
    assert_int_equal(r[1].container, 0);
    assert_true(r[1].short_lived);
    assert_int_equal(r[1].count, 3);
    assert_int_equal(r[2].container, 1);
    assert_false(r[2].short_lived);
    assert_int_equal(r[3].container, 2);
    assert_int_equal(r[3].index, 3); /* cpu, example.com/foo, memory, nvidia.com/gpu */
    assert_int_equal(r[3].count, 2);
    assert_int_equal(r[4].container, 3);
    assert_int_equal(r[4].index, 2); /* from limits: cpu, deviceclass..., nvidia.com/gpu */
    assert_string_equal(p.ext->claim_name, "p-extended-resources-x");
    assert_int_equal(p.ext->n_mappings, 1);
    assert_string_equal(p.ext->mappings[0].request, "container-2-request-3");
    assert_true(pod_has_ext_requests(&p));
    pod_cleanup(&p);
    json_object_put(o);

    /* nothing to keep: no ext; a fractional quantity is left out */
    o = parse("{\"metadata\":{\"name\":\"q\"},\"spec\":{\"containers\":[{\"name\":\"c\","
              "\"resources\":{\"requests\":{\"cpu\":\"1\",\"nvidia.com/gpu\":\"500m\"}}}]}}");
    assert_int_equal(project_pod(o, &test_gpus, &p), K_OK);
    assert_null(p.ext);
    pod_cleanup(&p);
    json_object_put(o);

    o = parse("{\"metadata\":{\"name\":\"q\"},\"spec\":{\"containers\":[{\"name\":\"c\","
              "\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"x\"}}}]}}");
    assert_int_not_equal(project_pod(o, &test_gpus, &p), K_OK);
    json_object_put(o);
}

/* A stored GPU pod keeps its requests in an array sized to them, not to POD_EXT_MAX_REQUESTS:
 * the controller keeps every GPU pod, and 64 entries per pod (2 KiB) were 60 MiB at 30,000 pods
 * (BENCHMARKS.md, bench/listfeed). */
static void test_pod_requests_sized(void **state)
{
    (void)state;
    json_object *o = parse("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":{"
                           "\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{"
                           "\"nvidia.com/gpu\":\"1\"}}}]}}");
    struct kpod p;
    project_with_ext(o, &p, 1);
    assert_true(malloc_usable_size(p.ext->requests) < 2 * sizeof(struct pod_ext_request));
    assert_string_equal(p.ext->requests[0].resource, "nvidia.com/gpu");
    pod_cleanup(&p);
    json_object_put(o);
}

/* A hostile container naming 40,000 implicit class names (limits only, as the API server
 * defaults requests from them): POD_EXT_MAX_REQUESTS are kept, and each kept one's index costs
 * one pass over the names, not one per name (a quadratic pass took seconds; no timed check here:
 * e2e/test-hostile checks that gputri-controller stays up with such a pod). */
static void test_pod_many_names(void **state)
{
    (void)state;
    enum { N = 40000 };
    json_object *limits = json_object_new_object();
    char key[96];
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof(key), "deviceclass.resource.kubernetes.io/c%05d", N - 1 - i);
        json_object_object_add(limits, key, json_object_new_string("1"));
    }
    json_object *resources = json_object_new_object();
    json_object_object_add(resources, "limits", limits);
    json_object *c = json_object_new_object();
    json_object_object_add(c, "name", json_object_new_string("c"));
    json_object_object_add(c, "resources", resources);
    json_object *containers = json_object_new_array();
    json_object_array_add(containers, c);
    json_object *spec = json_object_new_object();
    json_object_object_add(spec, "containers", containers);
    json_object *o = parse("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"}}");
    json_object_object_add(o, "spec", spec);

    struct kpod p;
    project_with_ext(o, &p, POD_EXT_MAX_REQUESTS);
    /* the first names of the object are kept (c39999 down), each with its sorted index */
    const struct pod_ext_request *r = &p.ext->requests[POD_EXT_MAX_REQUESTS - 1];
    assert_string_equal(r->resource, "deviceclass.resource.kubernetes.io/c39999");
    assert_int_equal(r->index, N - 1);
    assert_int_equal(p.ext->requests[0].index, N - POD_EXT_MAX_REQUESTS);
    pod_cleanup(&p);
    json_object_put(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_class),
        cmocka_unit_test(test_special_claim),
        cmocka_unit_test(test_pod),
        cmocka_unit_test(test_pod_requests_sized),
        cmocka_unit_test(test_pod_many_names),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
