/*
 * test_project_dra_binding.c - core/kube/project_dra_binding.c: binding conditions (KEP-5007) of
 * devices, allocation results and a claim's status.devices, through the DRA projections.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "kube/project.h"
#include "model/dra.h"
#include "util/result.h"

static json_object *parse(const char *text)
{
    json_object *o = json_tokener_parse(text);
    assert_non_null(o);
    return o;
}

/* A device as the 1.37.2 API server returns it (tests/fixtures/dra/recorded-binding-*). */
static void test_slice_device(void **state)
{
    (void)state;
    json_object *o = parse(
        "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"gpu.nvidia.com\",\"pool\":{"
        "\"name\":\"n\",\"generation\":1,\"resourceSliceCount\":1},\"nodeName\":\"n\","
        "\"devices\":[{\"name\":\"gpu-0\",\"bindsToNode\":true,"
        "\"bindingConditions\":[\"gpu.nvidia.com/attached\",\"gpu.nvidia.com/healthy\"],"
        "\"bindingFailureConditions\":[\"gpu.nvidia.com/attach-failed\"]},{\"name\":\"gpu-1\"}]}}");
    struct dra_slice s;
    assert_int_equal(project_dra_slice(o, &s), K_OK);
    assert_int_equal(s.n_devices, 2);
    const struct dra_binding *b = &s.devices[0].binding;
    assert_true(b->binds_to_node);
    assert_int_equal(b->n_conditions, 2);
    assert_string_equal(b->conditions[1], "gpu.nvidia.com/healthy");
    assert_int_equal(b->n_failure_conditions, 1);
    assert_string_equal(b->failure_conditions[0], "gpu.nvidia.com/attach-failed");
    assert_false(s.devices[1].binding.binds_to_node);
    assert_int_equal(s.devices[1].binding.n_conditions, 0);
    dra_slice_cleanup(&s);
    json_object_put(o);

    /* above BindingConditionsMaxSize (4), or not strings */
    o = parse(
        "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":\"p\"},"
        "\"devices\":[{\"name\":\"g\",\"bindingConditions\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}]}}");
    assert_int_equal(project_dra_slice(o, &s), K_ETOOBIG);
    json_object_put(o);
    o = parse("{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":\"p\"},"
              "\"devices\":[{\"name\":\"g\",\"bindingFailureConditions\":[1]}]}}");
    assert_int_equal(project_dra_slice(o, &s), K_EPARSE);
    json_object_put(o);
    o = parse("{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":\"p\"},"
              "\"devices\":[{\"name\":\"g\",\"bindingConditions\":\"a\"}]}}");
    assert_int_equal(project_dra_slice(o, &s), K_EPARSE);
    json_object_put(o);
}

static const char *const claim_json =
    "{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"uid\":\"u\"},\"spec\":{\"devices\":{"
    "\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\"}}]}},"
    "\"status\":{\"allocation\":{\"allocationTimestamp\":\"2026-12-06T09:00:00Z\",\"devices\":{"
    "\"results\":[{\"request\":\"gpu\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"n\","
    "\"device\":\"gpu-0\",\"bindsToNode\":true,\"bindingConditions\":[\"attached\"],"
    "\"bindingFailureConditions\":[\"failed\"]}]}},"
    "\"devices\":[{\"driver\":\"gpu.nvidia.com\",\"pool\":\"n\",\"device\":\"gpu-0\","
    "\"conditions\":[{\"type\":\"attached\",\"status\":\"False\",\"reason\":\"Attaching\","
    "\"message\":\"in progress\",\"lastTransitionTime\":\"2026-12-06T09:00:01Z\"},"
    "{\"type\":\"failed\",\"status\":\"True\",\"reason\":\"FabricDown\"}]}]}}";

static void test_claim(void **state)
{
    (void)state;
    json_object *o = parse(claim_json);
    struct dra_claim c;
    assert_int_equal(project_dra_claim(o, &c), K_OK);
    assert_true(c.allocated);
    assert_int_equal(c.allocation_timestamp, 1796547600); /* 2026-12-06T09:00:00Z */
    assert_int_equal(c.n_results, 1);
    assert_true(c.results[0].binding.binds_to_node);
    assert_string_equal(c.results[0].binding.conditions[0], "attached");
    assert_string_equal(c.results[0].binding.failure_conditions[0], "failed");
    assert_int_equal(c.n_device_statuses, 1);
    const struct dra_device_status *s = dra_claim_device_status(&c, &c.results[0]);
    assert_ptr_equal(s, &c.device_statuses[0]);
    assert_null(s->share_id);
    const struct dra_condition *a = dra_device_condition(s, "attached");
    assert_non_null(a);
    assert_int_equal(a->status, COND_FALSE);
    assert_string_equal(a->reason, "Attaching");
    assert_string_equal(a->message, "in progress");
    const struct dra_condition *f = dra_device_condition(s, "failed");
    assert_int_equal(f->status, COND_TRUE);
    assert_null(f->message);
    assert_null(dra_device_condition(s, "other"));
    dra_claim_cleanup(&c);
    json_object_put(o);
}

static void test_claim_rejects(void **state)
{
    (void)state;
    struct dra_claim c;
    /* a device entry without pool */
    json_object *o = parse("{\"metadata\":{\"name\":\"c\"},\"status\":{\"devices\":[{\"driver\":"
                           "\"d\",\"device\":\"g\"}]}}");
    assert_int_equal(project_dra_claim(o, &c), K_EPARSE);
    json_object_put(o);
    /* a condition without type */
    o = parse("{\"metadata\":{\"name\":\"c\"},\"status\":{\"devices\":[{\"driver\":\"d\","
              "\"pool\":\"p\",\"device\":\"g\",\"conditions\":[{\"status\":\"True\"}]}]}}");
    assert_int_equal(project_dra_claim(o, &c), K_EPARSE);
    json_object_put(o);
    /* more than AllocatedDeviceStatusMaxConditions (8) */
    char buf[2048];
    int len = snprintf(buf, sizeof(buf),
                       "{\"metadata\":{\"name\":\"c\"},\"status\":{\"devices\":[{\"driver\":\"d\","
                       "\"pool\":\"p\",\"device\":\"g\",\"conditions\":[");
    for (int i = 0; i < 9; i++)
        len +=
            snprintf(buf + len, sizeof(buf) - (size_t)len, "%s{\"type\":\"t%d\"}", i ? "," : "", i);
    snprintf(buf + len, sizeof(buf) - (size_t)len, "]}]}}");
    o = parse(buf);
    assert_int_equal(project_dra_claim(o, &c), K_ETOOBIG);
    json_object_put(o);
    /* no status, an unparsable timestamp: nothing */
    o = parse("{\"metadata\":{\"name\":\"c\"},\"status\":{\"allocation\":{"
              "\"allocationTimestamp\":\"yesterday\",\"devices\":{\"results\":[]}}}}");
    assert_int_equal(project_dra_claim(o, &c), K_OK);
    assert_int_equal(c.allocation_timestamp, 0);
    assert_int_equal(c.n_device_statuses, 0);
    dra_claim_cleanup(&c);
    json_object_put(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slice_device),
        cmocka_unit_test(test_claim),
        cmocka_unit_test(test_claim_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
