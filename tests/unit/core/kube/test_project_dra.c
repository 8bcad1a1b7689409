/* test_project_dra.c - core/kube/project_dra.c: resource.k8s.io/v1 JSON to model/dra.h. */
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

static void test_class(void **state)
{
    (void)state;
    json_object *o = parse("{\"metadata\":{\"name\":\"gpu.nvidia.com\"},\"spec\":{\"selectors\":["
                           "{\"cel\":{\"expression\":\"device.attributes['gpu.nvidia.com'].type "
                           "== 'gpu'\"}},"
                           "{\"cel\":{\"expression\":\"device.driver == 'gpu.nvidia.com'\"}}]}}");
    struct dra_class c;
    assert_int_equal(project_dra_class(o, &c), K_OK);
    assert_string_equal(c.name, "gpu.nvidia.com");
    assert_int_equal(c.n_selectors, 2);
    assert_string_equal(c.driver, "gpu.nvidia.com");
    dra_class_cleanup(&c);
    json_object_put(o);

    o = parse("{\"metadata\":{},\"spec\":{}}");
    assert_int_equal(project_dra_class(o, &c), K_EPARSE);
    json_object_put(o);
    o = parse("{\"metadata\":{\"name\":\"c\"},\"spec\":{\"selectors\":[{\"cel\":{}}]}}");
    assert_int_equal(project_dra_class(o, &c), K_EPARSE);
    json_object_put(o);
}

static void test_slice(void **state)
{
    (void)state;
    json_object *o = parse(
        "{\"metadata\":{\"name\":\"s1\"},\"spec\":{\"driver\":\"gpu.example.com\","
        "\"pool\":{\"name\":\"n1\",\"generation\":3,\"resourceSliceCount\":2},"
        "\"nodeName\":\"n1\",\"devices\":[{\"name\":\"gpu-0\",\"attributes\":{"
        "\"productName\":{\"string\":\"NVIDIA A100\"},\"index\":{\"int\":0},"
        "\"mig\":{\"bool\":true},\"driverVersion\":{\"version\":\"550.54.15\"},"
        "\"resource.kubernetes.io/pcieRoot\":{\"string\":\"pci0\"},\"future\":{\"list\":[1]}},"
        "\"capacity\":{\"memory\":{\"value\":\"40Gi\"}}}]}}");
    struct dra_slice s;
    assert_int_equal(project_dra_slice(o, &s), K_OK);
    json_object_put(o);
    assert_string_equal(s.driver, "gpu.example.com");
    assert_string_equal(s.pool, "n1");
    assert_int_equal(s.generation, 3);
    assert_int_equal(s.slice_count, 2);
    assert_string_equal(s.node_name, "n1");
    assert_false(s.all_nodes);
    assert_false(s.nodes.present);
    assert_int_equal(s.n_devices, 1);
    const struct dra_device *d = &s.devices[0];
    assert_string_equal(d->name, "gpu-0");
    const struct dra_attribute *a = dra_device_attribute(d, "gpu.example.com/productName");
    assert_non_null(a);
    assert_int_equal(a->kind, DRA_ATTR_STRING);
    assert_string_equal(a->s, "NVIDIA A100");
    a = dra_device_attribute(d, "gpu.example.com/index");
    assert_int_equal(a->kind, DRA_ATTR_INT);
    assert_int_equal(a->i, 0);
    a = dra_device_attribute(d, "gpu.example.com/mig");
    assert_int_equal(a->kind, DRA_ATTR_BOOL);
    assert_true(a->b);
    a = dra_device_attribute(d, "gpu.example.com/driverVersion");
    assert_int_equal(a->kind, DRA_ATTR_VERSION);
    assert_string_equal(a->s, "550.54.15");
    assert_non_null(dra_device_attribute(d, "resource.kubernetes.io/pcieRoot"));
    assert_int_equal(dra_device_attribute(d, "gpu.example.com/future")->kind, DRA_ATTR_OTHER);
    assert_string_equal(dra_device_capacity(d, "gpu.example.com/memory")->value, "40Gi");
    dra_slice_cleanup(&s);

    o = parse("{\"metadata\":{\"name\":\"s2\"},\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":"
              "\"p\",\"generation\":1,\"resourceSliceCount\":1},\"nodeSelector\":{"
              "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"rack\",\"operator\":"
              "\"In\",\"values\":[\"r1\"]}]}]}}}");
    assert_int_equal(project_dra_slice(o, &s), K_OK);
    json_object_put(o);
    assert_true(s.nodes.present);
    assert_int_equal(s.nodes.n_terms, 1);
    assert_int_equal(s.n_devices, 0);
    dra_slice_cleanup(&s);

    o = parse("{\"metadata\":{\"name\":\"s3\"},\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":"
              "\"p\"},\"allNodes\":true}}");
    assert_int_equal(project_dra_slice(o, &s), K_OK);
    json_object_put(o);
    assert_true(s.all_nodes);
    dra_slice_cleanup(&s);

    /* no driver; no pool name */
    o = parse("{\"metadata\":{\"name\":\"s\"},\"spec\":{\"pool\":{\"name\":\"p\"}}}");
    assert_int_equal(project_dra_slice(o, &s), K_EPARSE);
    json_object_put(o);
    o = parse("{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d\",\"pool\":{}}}");
    assert_int_equal(project_dra_slice(o, &s), K_EPARSE);
    json_object_put(o);
}

static void test_slice_caps(void **state)
{
    (void)state;
    /* 129 devices: above ResourceSliceMaxDevices */
    json_object *o = parse("{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d\","
                           "\"pool\":{\"name\":\"p\"},\"allNodes\":true,\"devices\":[]}}");
    json_object *devs = json_object_object_get(json_object_object_get(o, "spec"), "devices");
    for (int i = 0; i < DRA_MAX_DEVICES_PER_SLICE + 1; i++) {
        char name[32];
        snprintf(name, sizeof(name), "gpu-%d", i);
        json_object *d = json_object_new_object();
        json_object_object_add(d, "name", json_object_new_string(name));
        json_object_array_add(devs, d);
    }
    struct dra_slice s;
    assert_int_equal(project_dra_slice(o, &s), K_ETOOBIG);
    json_object_array_del_idx(devs, 0, 1);
    assert_int_equal(project_dra_slice(o, &s), K_OK);
    assert_int_equal(s.n_devices, DRA_MAX_DEVICES_PER_SLICE);
    dra_slice_cleanup(&s);
    json_object_put(o);

    /* 33 attributes and capacities on one device */
    o = parse("{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":"
              "\"p\"},\"allNodes\":true,\"devices\":[{\"name\":\"g\",\"attributes\":{},"
              "\"capacity\":{\"c\":{\"value\":\"1\"}}}]}}");
    json_object *attrs = json_object_object_get(
        json_object_array_get_idx(
            json_object_object_get(json_object_object_get(o, "spec"), "devices"), 0),
        "attributes");
    for (int i = 0; i < DRA_MAX_ATTRS_PER_DEVICE; i++) {
        char name[32];
        snprintf(name, sizeof(name), "a%d", i);
        json_object *v = json_object_new_object();
        json_object_object_add(v, "int", json_object_new_int(i));
        json_object_object_add(attrs, name, v);
    }
    assert_int_equal(project_dra_slice(o, &s), K_ETOOBIG);
    json_object_put(o);
}

static const char *claim_json =
    "{\"metadata\":{\"name\":\"pod-g-abcde\",\"namespace\":\"ns\",\"uid\":\"c-1\","
    "\"annotations\":{\"resource.kubernetes.io/pod-claim-name\":\"g\"},"
    "\"ownerReferences\":[{\"kind\":\"Pod\",\"name\":\"pod\",\"uid\":\"p-1\",\"controller\":true}]}"
    ","
    "\"spec\":{\"devices\":{\"requests\":["
    "{\"name\":\"g\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\",\"count\":2,"
    "\"selectors\":[{\"cel\":{\"expression\":\"device.attributes['gpu.nvidia.com'].productName "
    "== 'H100'\"}}]}},"
    "{\"name\":\"all\",\"exactly\":{\"deviceClassName\":\"c\",\"allocationMode\":\"All\"}},"
    "{\"name\":\"alt\",\"firstAvailable\":[{\"name\":\"big\",\"deviceClassName\":\"a\"},"
    "{\"name\":\"small\",\"deviceClassName\":\"b\",\"count\":3}]}],"
    "\"constraints\":[{\"requests\":[\"g\",\"all\"],\"matchAttribute\":"
    "\"resource.kubernetes.io/pcieRoot\"}]}},"
    "\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"g\",\"driver\":"
    "\"gpu.nvidia.com\",\"pool\":\"n1\",\"device\":\"gpu-0\"}]},\"nodeSelector\":{"
    "\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
    "\"values\":[\"n1\"]}]}]}},\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"pod\","
    "\"uid\":\"p-1\"}]}}";

static void test_claim(void **state)
{
    (void)state;
    json_object *o = parse(claim_json);
    struct dra_claim c;
    assert_int_equal(project_dra_claim(o, &c), K_OK);
    json_object_put(o);
    assert_string_equal(c.ns, "ns");
    assert_string_equal(c.name, "pod-g-abcde");
    assert_string_equal(c.uid, "c-1");
    assert_string_equal(c.owner_pod_uid, "p-1");
    assert_string_equal(c.pod_claim_name, "g");
    assert_false(c.deleting);
    assert_int_equal(c.spec.n_requests, 3);
    const struct dra_request *r = &c.spec.requests[0];
    assert_string_equal(r->name, "g");
    assert_true(r->has_exactly);
    assert_string_equal(r->exactly.class_name, "gpu.nvidia.com");
    assert_int_equal(r->exactly.mode, DRA_MODE_EXACT_COUNT);
    assert_int_equal(r->exactly.count, 2);
    assert_int_equal(r->exactly.n_selectors, 1);
    r = &c.spec.requests[1];
    assert_int_equal(r->exactly.mode, DRA_MODE_ALL);
    r = &c.spec.requests[2];
    assert_false(r->has_exactly);
    assert_int_equal(r->n_first_available, 2);
    assert_string_equal(r->first_available[0].name, "big");
    assert_int_equal(r->first_available[0].count, 1);
    assert_string_equal(r->first_available[1].class_name, "b");
    assert_int_equal(r->first_available[1].count, 3);
    assert_int_equal(c.spec.n_constraints, 1);
    assert_int_equal(c.spec.constraints[0].n_requests, 2);
    assert_string_equal(c.spec.constraints[0].match_attribute, "resource.kubernetes.io/pcieRoot");
    assert_true(c.allocated);
    assert_int_equal(c.n_results, 1);
    assert_string_equal(c.results[0].device, "gpu-0");
    assert_true(c.alloc_nodes.present);
    assert_int_equal(c.alloc_nodes.n_terms, 1);
    assert_int_equal(c.n_reserved_for, 1);
    assert_string_equal(c.reserved_for[0].name, "pod");
    dra_claim_cleanup(&c);

    /* a request with neither exactly nor firstAvailable; a bad allocationMode; count 0 */
    const char *bad[] = {
        "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"g\"}]}}}",
        "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"g\","
        "\"exactly\":{\"deviceClassName\":\"x\",\"allocationMode\":\"Some\"}}]}}}",
        "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"g\","
        "\"exactly\":{\"deviceClassName\":\"x\",\"count\":0}}]}}}",
        "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"devices\":{\"requests\":{}}}}",
        "{\"metadata\":{},\"spec\":{}}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        o = parse(bad[i]);
        assert_int_equal(project_dra_claim(o, &c), K_EPARSE);
        json_object_put(o);
    }
    /* deleting */
    o = parse("{\"metadata\":{\"name\":\"c\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"}}");
    assert_int_equal(project_dra_claim(o, &c), K_OK);
    assert_true(c.deleting);
    assert_false(c.allocated);
    dra_claim_cleanup(&c);
    json_object_put(o);
}

static void test_claim_caps(void **state)
{
    (void)state;
    json_object *o =
        parse("{\"metadata\":{\"name\":\"c\"},\"spec\":{\"devices\":{\"requests\":[]}}}");
    json_object *reqs = json_object_object_get(
        json_object_object_get(json_object_object_get(o, "spec"), "devices"), "requests");
    for (int i = 0; i < DRA_MAX_REQUESTS + 1; i++) {
        char name[16];
        snprintf(name, sizeof(name), "r%d", i);
        json_object *r = json_object_new_object();
        json_object_object_add(r, "name", json_object_new_string(name));
        json_object *e = json_object_new_object();
        json_object_object_add(e, "deviceClassName", json_object_new_string("x"));
        json_object_object_add(r, "exactly", e);
        json_object_array_add(reqs, r);
    }
    struct dra_claim c;
    assert_int_equal(project_dra_claim(o, &c), K_ETOOBIG);
    json_object_put(o);
}

static void test_template(void **state)
{
    (void)state;
    json_object *o = parse("{\"metadata\":{\"name\":\"t\",\"namespace\":\"ns\"},\"spec\":{"
                           "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"g\",\"exactly\":{"
                           "\"deviceClassName\":\"gpu.example.com\"}}]}}}}");
    struct dra_template t;
    assert_int_equal(project_dra_template(o, &t), K_OK);
    json_object_put(o);
    assert_string_equal(t.ns, "ns");
    assert_string_equal(t.name, "t");
    assert_int_equal(t.spec.n_requests, 1);
    assert_int_equal(t.spec.requests[0].exactly.count, 1);
    dra_template_cleanup(&t);
}

static void test_pod_claims(void **state)
{
    (void)state;
    json_object *o = parse(
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":{\"containers\":[{\"name\":"
        "\"c\",\"resources\":{\"claims\":[{\"name\":\"g\"}]}}],\"resourceClaims\":["
        "{\"name\":\"g\",\"resourceClaimTemplateName\":\"t\"},"
        "{\"name\":\"s\",\"resourceClaimName\":\"shared\"}]},"
        "\"status\":{\"resourceClaimStatuses\":[{\"name\":\"g\",\"resourceClaimName\":"
        "\"p-g-xyz\"}]}}");
    struct kpod p;
    assert_int_equal(project_pod(o, &test_gpus, &p), K_OK);
    json_object_put(o);
    assert_int_equal(p.n_claims, 2);
    assert_string_equal(p.claims[0].name, "g");
    assert_string_equal(p.claims[0].template_name, "t");
    assert_null(p.claims[0].claim_name);
    assert_string_equal(p.claims[1].claim_name, "shared");
    assert_int_equal(p.n_claim_statuses, 1);
    assert_string_equal(p.claim_statuses[0].claim_name, "p-g-xyz");
    pod_cleanup(&p);

    o = parse("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"resourceClaims\":[{}]}}");
    assert_int_equal(project_pod(o, &test_gpus, &p), K_EPARSE);
    json_object_put(o);
}

/* 1.37: sharedCounters, consumesCounters, allowMultipleAllocations, requestPolicy,
 * capacity.requests, shareID, consumedCapacity; bounded like the API. */
static void test_counters_capacity(void **state)
{
    (void)state;
    json_object *o =
        parse("{\"metadata\":{\"name\":\"c\"},\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":\"p\","
              "\"generation\":1,\"resourceSliceCount\":2},\"nodeName\":\"n\",\"sharedCounters\":[{"
              "\"name\":\"gpu-0-counters\",\"counters\":{\"memory\":{\"value\":\"40Gi\"}}}]}}");
    struct dra_slice s;
    assert_int_equal(project_dra_slice(o, &s), K_OK);
    assert_int_equal(s.n_devices, 0);
    assert_int_equal(s.n_counter_sets, 1);
    assert_string_equal(s.counter_sets[0].name, "gpu-0-counters");
    assert_string_equal(s.counter_sets[0].counters[0].name, "memory");
    assert_string_equal(s.counter_sets[0].counters[0].value, "40Gi");
    dra_slice_cleanup(&s);
    json_object_put(o);

    o = parse("{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":"
              "\"p\"},\"nodeName\":\"n\",\"devices\":[{\"name\":\"v\",\"allowMultipleAllocations\":"
              "true,\"capacity\":{\"memory\":{\"value\":\"40Gi\",\"requestPolicy\":{\"default\":"
              "\"8Gi\",\"validRange\":{\"min\":\"4Gi\",\"max\":\"40Gi\",\"step\":\"4Gi\"}}},"
              "\"cores\":{\"value\":8,\"requestPolicy\":{\"default\":\"1\",\"validValues\":[\"1\","
              "\"2\",\"4\"]}}},\"consumesCounters\":[{\"counterSet\":\"cs\",\"counters\":{"
              "\"memory\":{\"value\":\"5Gi\"}}}]}]}}");
    assert_int_equal(project_dra_slice(o, &s), K_OK);
    const struct dra_device *d = &s.devices[0];
    assert_true(d->allow_multiple);
    assert_int_equal(d->n_consumes, 1);
    assert_string_equal(d->consumes[0].counter_set, "cs");
    assert_string_equal(d->consumes[0].counters[0].value, "5Gi");
    const struct dra_capacity *m = dra_device_capacity(d, "d/memory");
    assert_non_null(m);
    assert_true(m->has_policy);
    assert_string_equal(m->policy_default, "8Gi");
    assert_string_equal(m->range_min, "4Gi");
    assert_string_equal(m->range_max, "40Gi");
    assert_string_equal(m->range_step, "4Gi");
    const struct dra_capacity *k = dra_device_capacity(d, "d/cores");
    assert_non_null(k);
    assert_int_equal(k->n_valid_values, 3);
    assert_string_equal(k->valid_values[2], "4");
    dra_slice_cleanup(&s);
    json_object_put(o);

    /* too many counter sets, consumptions or valid values: not a valid object */
    char big[4096];
    int n = snprintf(big, sizeof(big),
                     "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"driver\":\"d\",\"pool\":{"
                     "\"name\":\"p\"},\"nodeName\":\"n\",\"sharedCounters\":[");
    for (int i = 0; i <= DRA_MAX_COUNTER_SETS; i++)
        n += snprintf(big + n, sizeof(big) - (size_t)n, "%s{\"name\":\"s%d\"}", i ? "," : "", i);
    snprintf(big + n, sizeof(big) - (size_t)n, "]}}");
    o = parse(big);
    assert_int_equal(project_dra_slice(o, &s), K_ETOOBIG);
    json_object_put(o);
    o = parse("{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":"
              "\"p\"},\"nodeName\":\"n\",\"devices\":[{\"name\":\"v\",\"consumesCounters\":["
              "{\"counterSet\":\"a\"},{\"counterSet\":\"b\"},{\"counterSet\":\"c\"}]}]}}");
    assert_int_equal(project_dra_slice(o, &s), K_ETOOBIG);
    json_object_put(o);
    o = parse("{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":"
              "\"p\"},\"nodeName\":\"n\",\"devices\":[{\"name\":\"v\",\"consumesCounters\":["
              "{\"counters\":{}}]}]}}");
    assert_int_equal(project_dra_slice(o, &s), K_EPARSE);
    json_object_put(o);

    o = parse("{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\"},\"spec\":{\"devices\":{"
              "\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":\"g\",\"capacity\":"
              "{\"requests\":{\"memory\":\"9Gi\"}}}},{\"name\":\"f\",\"firstAvailable\":[{\"name\":"
              "\"a\",\"deviceClassName\":\"g\",\"capacity\":{\"requests\":{\"memory\":\"1Gi\"}}}]}"
              "]}},\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"r\","
              "\"driver\":\"d\",\"pool\":\"p\",\"device\":\"v\",\"shareID\":\"u1\","
              "\"consumedCapacity\":{\"memory\":\"12Gi\"}}]}}}}");
    struct dra_claim c;
    assert_int_equal(project_dra_claim(o, &c), K_OK);
    assert_int_equal(c.spec.requests[0].exactly.n_capacity, 1);
    assert_string_equal(c.spec.requests[0].exactly.capacity[0].name, "memory");
    assert_string_equal(c.spec.requests[0].exactly.capacity[0].value, "9Gi");
    assert_string_equal(c.spec.requests[1].first_available[0].capacity[0].value, "1Gi");
    assert_string_equal(c.results[0].share_id, "u1");
    assert_int_equal(c.results[0].n_consumed, 1);
    assert_string_equal(c.results[0].consumed[0].value, "12Gi");
    dra_claim_cleanup(&c);
    json_object_put(o);
    assert_true(dra_qname_is("d", "memory", "d/memory"));
    assert_true(dra_qname_is("d", "d/memory", "d/memory"));
    assert_false(dra_qname_is("d", "x/memory", "d/memory"));
    assert_false(dra_qname_is("e", "memory", "d/memory"));
}

/* devices[].taints[], request tolerations and DeviceTaintRule, as a 1.37 API server serves them */
static void test_taints(void **state)
{
    (void)state;
    json_object *o =
        parse("{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"gpu.nvidia.com\",\"pool\":"
              "{\"name\":\"n0\",\"generation\":1,\"resourceSliceCount\":1},\"nodeName\":\"n0\","
              "\"devices\":[{\"name\":\"gpu-0\",\"taints\":[{\"key\":\"gpu.nvidia.com/xid\","
              "\"value\":\"79\",\"effect\":\"NoSchedule\",\"timeAdded\":\"2026-12-06T08:00:00Z\"},"
              "{\"key\":\"k\",\"effect\":\"None\"},{\"key\":\"f\",\"effect\":\"Future\"}]},"
              "{\"name\":\"gpu-1\"}]}}");
    struct dra_slice s;
    assert_int_equal(project_dra_slice(o, &s), K_OK);
    json_object_put(o);
    assert_int_equal(s.devices[0].n_taints, 3);
    assert_string_equal(s.devices[0].taints[0].key, "gpu.nvidia.com/xid");
    assert_string_equal(s.devices[0].taints[0].value, "79");
    assert_int_equal(s.devices[0].taints[0].effect, DRA_EFFECT_NO_SCHEDULE);
    assert_string_equal(s.devices[0].taints[0].time_added, "2026-12-06T08:00:00Z");
    assert_null(s.devices[0].taints[1].value);
    assert_int_equal(s.devices[0].taints[1].effect, DRA_EFFECT_NONE);
    assert_int_equal(s.devices[0].taints[2].effect, DRA_EFFECT_UNKNOWN);
    assert_int_equal(s.devices[1].n_taints, 0);
    dra_slice_cleanup(&s);

    /* a taint without a key does not pass validation */
    o = parse("{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":"
              "\"p\"},\"devices\":[{\"name\":\"x\",\"taints\":[{\"effect\":\"NoSchedule\"}]}]}}");
    assert_int_equal(project_dra_slice(o, &s), K_EPARSE);
    json_object_put(o);

    o = parse("{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\"},\"spec\":{\"devices\":{"
              "\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"g\","
              "\"tolerations\":[{\"key\":\"gpu.nvidia.com/xid\",\"operator\":\"Exists\","
              "\"effect\":\"NoSchedule\"},{\"key\":\"a\",\"value\":\"b\"},{\"operator\":"
              "\"Exists\"},{\"key\":\"z\",\"operator\":\"Lt\"}]}},{\"name\":\"alt\","
              "\"firstAvailable\":[{\"name\":\"one\",\"deviceClassName\":\"g\","
              "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Equal\",\"value\":\"v\","
              "\"effect\":\"NoExecute\",\"tolerationSeconds\":30}]}]}]}}}");
    struct dra_claim c;
    assert_int_equal(project_dra_claim(o, &c), K_OK);
    json_object_put(o);
    const struct dra_exact *e = &c.spec.requests[0].exactly;
    assert_int_equal(e->n_tolerations, 4);
    assert_string_equal(e->tolerations[0].key, "gpu.nvidia.com/xid");
    assert_int_equal(e->tolerations[0].op, DRA_TOL_EXISTS);
    assert_false(e->tolerations[0].any_effect);
    assert_int_equal(e->tolerations[0].effect, DRA_EFFECT_NO_SCHEDULE);
    assert_int_equal(e->tolerations[1].op, DRA_TOL_EQUAL);
    assert_string_equal(e->tolerations[1].value, "b");
    assert_true(e->tolerations[1].any_effect);
    assert_null(e->tolerations[2].key);
    assert_int_equal(e->tolerations[3].op, DRA_TOL_OTHER);
    const struct dra_exact *sub = &c.spec.requests[1].first_available[0];
    assert_int_equal(sub->n_tolerations, 1);
    assert_int_equal(sub->tolerations[0].effect, DRA_EFFECT_NO_EXECUTE);
    dra_claim_cleanup(&c);

    o = parse("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceTaintRule\","
              "\"metadata\":{\"name\":\"r\"},\"spec\":{\"deviceSelector\":{\"driver\":"
              "\"gpu.nvidia.com\",\"pool\":\"n0\"},\"taint\":{\"key\":\"maint\",\"value\":"
              "\"true\",\"effect\":\"NoExecute\"}}}");
    struct dra_taint_rule r;
    assert_int_equal(project_dra_taint_rule(o, &r), K_OK);
    json_object_put(o);
    assert_string_equal(r.name, "r");
    assert_true(r.has_selector);
    assert_string_equal(r.driver, "gpu.nvidia.com");
    assert_string_equal(r.pool, "n0");
    assert_null(r.device);
    assert_string_equal(r.taint.key, "maint");
    assert_int_equal(r.taint.effect, DRA_EFFECT_NO_EXECUTE);
    dra_taint_rule_cleanup(&r);

    /* no selector: selects nothing; no taint: not valid */
    o = parse("{\"metadata\":{\"name\":\"r\"},\"spec\":{\"taint\":{\"key\":\"k\","
              "\"effect\":\"NoSchedule\"}}}");
    assert_int_equal(project_dra_taint_rule(o, &r), K_OK);
    assert_false(r.has_selector);
    dra_taint_rule_cleanup(&r);
    json_object_put(o);
    o = parse("{\"metadata\":{\"name\":\"r\"},\"spec\":{\"deviceSelector\":{}}}");
    assert_int_equal(project_dra_taint_rule(o, &r), K_EPARSE);
    json_object_put(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_class),      cmocka_unit_test(test_slice),
        cmocka_unit_test(test_slice_caps), cmocka_unit_test(test_claim),
        cmocka_unit_test(test_claim_caps), cmocka_unit_test(test_template),
        cmocka_unit_test(test_pod_claims), cmocka_unit_test(test_counters_capacity),
        cmocka_unit_test(test_taints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
