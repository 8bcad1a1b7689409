/* test_project.c - core/kube/project.c: API JSON to model.h projections. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "gpus.h"
#include "kube/project.h"
#include "model/gpu.h"
#include "util/result.h"

static int pod_from(const char *text, struct kpod *out)
{
    json_object *o = json_tokener_parse(text);
    assert_non_null(o);
    int rc = project_pod(o, &test_gpus, out);
    json_object_put(o);
    return rc;
}

static int64_t gpu_of(const struct kpod *p, const char *name)
{
    return resource_list_get(&p->gpu_requests, name);
}

static void test_metadata_status(void **state)
{
    (void)state;
    struct kpod p;
    assert_int_equal(
        pod_from("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u-1\","
                 "\"deletionTimestamp\":\"2025-06-02T09:30:00Z\",\"annotations\":"
                 "{\"gputri/cause\":\"taint\",\"gputri/detail\":\"node x\",\"other\":\"y\"}},"
                 "\"spec\":{\"nodeName\":\"n1\",\"schedulerName\":\"volcano\","
                 "\"runtimeClassName\":\"nvidia\",\"containers\":[{\"name\":\"c\"}]},"
                 "\"status\":{\"phase\":\"Running\",\"conditions\":["
                 "{\"type\":\"Ready\",\"status\":\"True\"},"
                 "{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\","
                 "\"message\":\"0/1 nodes are available\"}]}}",
                 &p),
        K_OK);
    assert_string_equal(p.ns, "ns");
    assert_string_equal(p.name, "p");
    assert_string_equal(p.uid, "u-1");
    assert_string_equal(p.cause, "taint");
    assert_string_equal(p.detail, "node x");
    assert_true(p.deleting);
    assert_string_equal(p.node_name, "n1");
    assert_string_equal(p.scheduler_name, "volcano");
    assert_string_equal(p.runtime_class, "nvidia");
    assert_int_equal(p.phase, POD_PHASE_RUNNING);
    assert_int_equal(p.scheduled.status, COND_FALSE);
    assert_string_equal(p.scheduled.reason, "Unschedulable");
    assert_string_equal(p.scheduled.message, "0/1 nodes are available");
    assert_int_equal(p.gpu_requests.n, 0);
    pod_cleanup(&p);

    /* absent things stay NULL / zero; deletionTimestamp null is not deleting */
    assert_int_equal(pod_from("{\"metadata\":{\"name\":\"q\",\"deletionTimestamp\":null},"
                              "\"status\":{\"phase\":\"Succeeded\"}}",
                              &p),
                     K_OK);
    assert_null(p.ns);
    assert_null(p.cause);
    assert_null(p.node_name);
    assert_false(p.deleting);
    assert_int_equal(p.scheduled.status, COND_ABSENT);
    assert_true(pod_is_terminal(&p));
    pod_cleanup(&p);

    /* no name: K_EPARSE and a clean struct */
    assert_int_equal(pod_from("{\"metadata\":{\"namespace\":\"ns\"}}", &p), K_EPARSE);
    assert_null(p.ns);
}

static void test_requests(void **state)
{
    (void)state;
    struct kpod p;
    /* limits-only, GPU-only filtering, zero dropped, numbers accepted */
    assert_int_equal(
        pod_from("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":["
                 "{\"name\":\"a\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\","
                 "\"cpu\":\"1\"},\"requests\":{\"cpu\":\"500m\"}}},"
                 "{\"name\":\"b\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":1,"
                 "\"amd.com/gpu\":\"0\"}}},"
                 "{\"name\":\"c\",\"resources\":{\"requests\":{\"nvidia.com/mig-1g.5gb\":\"1\"},"
                 "\"limits\":{\"nvidia.com/mig-1g.5gb\":\"1\"}}}]}}",
                 &p),
        K_OK);
    assert_int_equal(gpu_of(&p, "nvidia.com/gpu"), 3);
    assert_int_equal(gpu_of(&p, "nvidia.com/mig-1g.5gb"), 1);
    assert_int_equal(p.gpu_requests.n, 2);
    pod_cleanup(&p);

    /* a request wins over the limit when both are present */
    assert_int_equal(
        pod_from("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\","
                 "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"4\"},"
                 "\"requests\":{\"nvidia.com/gpu\":\"1\"}}}]}}",
                 &p),
        K_OK);
    assert_int_equal(gpu_of(&p, "nvidia.com/gpu"), 1);
    pod_cleanup(&p);

    /* init containers: max(largest init, sum of app) */
    assert_int_equal(
        pod_from("{\"metadata\":{\"name\":\"p\"},\"spec\":{"
                 "\"initContainers\":[{\"name\":\"i1\",\"resources\":{\"limits\":"
                 "{\"nvidia.com/gpu\":\"4\"}}},{\"name\":\"i2\",\"resources\":{\"limits\":"
                 "{\"nvidia.com/gpu\":\"2\"}}}],"
                 "\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":"
                 "{\"nvidia.com/gpu\":\"1\"}}},{\"name\":\"b\",\"resources\":{\"limits\":"
                 "{\"nvidia.com/gpu\":\"1\"}}}]}}",
                 &p),
        K_OK);
    assert_int_equal(gpu_of(&p, "nvidia.com/gpu"), 4);
    pod_cleanup(&p);

    /* sidecars: s1(1, Always), init(3), s2(2, Always), init(1); app 1
     * reqs = 1 + 1 + 2 = 4; initMax = max(1, 3+1, 1+2, 1+3) = 4 -> 4
     * with the second init at 2: max(.., 2+3=5) = 5 */
    assert_int_equal(
        pod_from("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"initContainers\":["
                 "{\"name\":\"s1\",\"restartPolicy\":\"Always\",\"resources\":{\"limits\":"
                 "{\"nvidia.com/gpu\":\"1\"}}},"
                 "{\"name\":\"i1\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"3\"}}},"
                 "{\"name\":\"s2\",\"restartPolicy\":\"Always\",\"resources\":{\"limits\":"
                 "{\"nvidia.com/gpu\":\"2\"}}},"
                 "{\"name\":\"i2\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\"}}}],"
                 "\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":"
                 "{\"nvidia.com/gpu\":\"1\"}}}]}}",
                 &p),
        K_OK);
    assert_int_equal(gpu_of(&p, "nvidia.com/gpu"), 5);
    pod_cleanup(&p);

    /* sidecar only: app 1 + sidecar 2 = 3 */
    assert_int_equal(
        pod_from("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"initContainers\":["
                 "{\"name\":\"s\",\"restartPolicy\":\"Always\",\"resources\":{\"limits\":"
                 "{\"nvidia.com/gpu\":\"2\"}}}],\"containers\":[{\"name\":\"a\",\"resources\":"
                 "{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}",
                 &p),
        K_OK);
    assert_int_equal(gpu_of(&p, "nvidia.com/gpu"), 3);
    pod_cleanup(&p);

    /* overhead adds (only GPU keys are kept) */
    assert_int_equal(
        pod_from("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"overhead\":{\"cpu\":\"250m\","
                 "\"nvidia.com/gpu\":\"1\"},\"containers\":[{\"name\":\"a\",\"resources\":"
                 "{\"limits\":{\"nvidia.com/gpu\":\"2\"}}}]}}",
                 &p),
        K_OK);
    assert_int_equal(gpu_of(&p, "nvidia.com/gpu"), 3);
    pod_cleanup(&p);

    /* fractions are summed before rounding up, like the scheduler's aggregate Value() */
    assert_int_equal(
        pod_from("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":["
                 "{\"name\":\"a\",\"resources\":{\"limits\":{\"gpu.intel.com/i915\":\"500m\"}}},"
                 "{\"name\":\"b\",\"resources\":{\"limits\":{\"gpu.intel.com/i915\":\"500m\"}}}"
                 "]}}",
                 &p),
        K_OK);
    assert_int_equal(gpu_of(&p, "gpu.intel.com/i915"), 1);
    pod_cleanup(&p);

    /* a GPU quantity that does not parse is K_EPARSE; a bad cpu quantity is ignored */
    assert_int_equal(pod_from("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":["
                              "{\"name\":\"a\",\"resources\":{\"limits\":"
                              "{\"nvidia.com/gpu\":\"two\"}}}]}}",
                              &p),
                     K_EPARSE);
    assert_null(p.name);
    assert_int_equal(pod_from("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":["
                              "{\"name\":\"a\",\"resources\":{\"limits\":"
                              "{\"cpu\":\"lots\"}}}]}}",
                              &p),
                     K_OK);
    pod_cleanup(&p);
}

static void test_selection_and_tolerations(void **state)
{
    (void)state;
    struct kpod p;
    assert_int_equal(
        pod_from(
            "{\"metadata\":{\"name\":\"p\"},\"spec\":{"
            "\"nodeSelector\":{\"kubernetes.io/hostname\":\"lab-node-0\"},"
            "\"tolerations\":[{\"key\":\"nvidia.com/gpu\",\"operator\":\"Equal\","
            "\"value\":\"present\",\"effect\":\"NoSchedule\"},{\"operator\":\"Exists\"}],"
            "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
            "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":"
            "\"In\",\"values\":[\"x\",\"y\"]},{\"key\":\"b\",\"operator\":\"Weird\"}]},"
            "{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"NotIn\","
            "\"values\":[\"n9\"]}]},{}]}}},\"containers\":[]}}",
            &p),
        K_OK);
    assert_int_equal(p.node_selector.n, 1);
    assert_string_equal(kv_list_get(&p.node_selector, "kubernetes.io/hostname"), "lab-node-0");
    assert_int_equal(p.n_tolerations, 2);
    assert_string_equal(p.tolerations[0].op, "Equal");
    assert_string_equal(p.tolerations[1].key, "");
    assert_string_equal(p.tolerations[1].op, "Exists");
    assert_string_equal(p.tolerations[1].effect, "");
    assert_true(p.affinity.present);
    assert_int_equal(p.affinity.n_terms, 3);
    assert_int_equal(p.affinity.terms[0].n_exprs, 2);
    assert_int_equal(p.affinity.terms[0].exprs[0].op, SELECTOR_OP_IN);
    assert_int_equal(p.affinity.terms[0].exprs[0].n_values, 2);
    assert_string_equal(p.affinity.terms[0].exprs[0].values[1], "y");
    assert_int_equal(p.affinity.terms[0].exprs[1].op, SELECTOR_OP_UNKNOWN);
    assert_int_equal(p.affinity.terms[1].n_fields, 1);
    assert_int_equal(p.affinity.terms[1].fields[0].op, SELECTOR_OP_NOT_IN);
    assert_int_equal(p.affinity.terms[2].n_exprs + p.affinity.terms[2].n_fields, 0);
    pod_cleanup(&p);

    /* preferred-only node affinity is not required affinity */
    assert_int_equal(
        pod_from("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"affinity\":{\"nodeAffinity\":"
                 "{\"preferredDuringSchedulingIgnoredDuringExecution\":[]}}}}",
                 &p),
        K_OK);
    assert_false(p.affinity.present);
    pod_cleanup(&p);
}

static void test_pod_spec(void **state)
{
    (void)state;
    json_object *spec = json_tokener_parse(
        "{\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"amd.com/gpu\":\"2\"}}}]}");
    json_object *meta = json_tokener_parse("{\"name\":\"deploy-x\",\"namespace\":\"ml\"}");
    struct kpod p;
    assert_int_equal(project_pod_spec(spec, meta, &test_gpus, &p, NULL), K_OK);
    assert_string_equal(p.name, "deploy-x");
    assert_int_equal(resource_list_get(&p.gpu_requests, "amd.com/gpu"), 2);
    pod_cleanup(&p);
    assert_int_equal(project_pod_spec(spec, NULL, &test_gpus, &p, NULL), K_OK);
    assert_null(p.name);
    pod_cleanup(&p);
    json_object_put(spec);
    json_object_put(meta);
}

/*
 * A spec with `tols` tolerations, `sel` nodeSelector entries and one required node-affinity
 * term holding `exprs` NotIn expressions with `values` values spread over them.
 */
static json_object *capped_spec(size_t tols, size_t sel, size_t exprs, size_t values)
{
    json_object *spec = json_tokener_parse(
        "{\"runtimeClassName\":\"nvidia\",\"containers\":[{\"name\":\"c\",\"resources\":"
        "{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}");
    json_object *ta = json_object_new_array();
    for (size_t i = 0; i < tols; i++) {
        json_object *t = json_object_new_object();
        json_object_object_add(t, "key", json_object_new_string("k"));
        json_object_object_add(t, "operator", json_object_new_string("Exists"));
        json_object_array_add(ta, t);
    }
    json_object_object_add(spec, "tolerations", ta);
    json_object *ns = json_object_new_object();
    for (size_t i = 0; i < sel; i++) {
        char k[32];
        snprintf(k, sizeof(k), "label-%zu", i);
        json_object_object_add(ns, k, json_object_new_string("v"));
    }
    json_object_object_add(spec, "nodeSelector", ns);
    json_object *ea = json_object_new_array();
    for (size_t i = 0; i < exprs; i++) {
        json_object *e = json_object_new_object(), *va = json_object_new_array();
        json_object_object_add(e, "key", json_object_new_string("k"));
        json_object_object_add(e, "operator", json_object_new_string("NotIn"));
        for (size_t j = i; j < values; j += exprs)
            json_object_array_add(va, json_object_new_string("v"));
        json_object_object_add(e, "values", va);
        json_object_array_add(ea, e);
    }
    json_object *term = json_object_new_object(), *terms = json_object_new_array();
    json_object_object_add(term, "matchExpressions", ea);
    json_object_array_add(terms, term);
    json_object *req = json_object_new_object(), *na = json_object_new_object(),
                *aff = json_object_new_object();
    json_object_object_add(req, "nodeSelectorTerms", terms);
    json_object_object_add(na, "requiredDuringSchedulingIgnoredDuringExecution", req);
    json_object_object_add(aff, "nodeAffinity", na);
    json_object_object_add(spec, "affinity", aff);
    return spec;
}

static void test_pod_spec_caps(void **state)
{
    (void)state;
    /* requirements: nodeSelector entries + 1 term + its expressions */
    static const struct {
        size_t tols, sel, exprs, values;
        bool tols_cut, sel_cut;
    } cases[] = {
        {0, 0, 0, 0, false, false},
        {PROJECT_MAX_TOLERATIONS, 0, 1, 1, false, false},
        {PROJECT_MAX_TOLERATIONS + 1, 0, 1, 1, true, false},
        {1, 1, PROJECT_MAX_SELECTOR_REQUIREMENTS - 2, PROJECT_MAX_SELECTOR_VALUES, false, false},
        {1, 2, PROJECT_MAX_SELECTOR_REQUIREMENTS - 2, 1, false, true},
        {1, 0, PROJECT_MAX_SELECTOR_REQUIREMENTS, 1, false, true},
        {1, 0, 4, PROJECT_MAX_SELECTOR_VALUES + 1, false, true},
        {PROJECT_MAX_TOLERATIONS + 1, 0, 4, PROJECT_MAX_SELECTOR_VALUES + 1, true, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *spec =
            capped_spec(cases[i].tols, cases[i].sel, cases[i].exprs, cases[i].values);
        struct kpod p;
        struct project_excess ex = {99, 99, 99};
        assert_int_equal(project_pod_spec(spec, NULL, &test_gpus, &p, &ex), K_OK);
        /* what is never capped */
        assert_int_equal(gpu_of(&p, "nvidia.com/gpu"), 1);
        assert_string_equal(p.runtime_class, "nvidia");
        if (cases[i].tols_cut) {
            assert_int_equal(ex.tolerations, cases[i].tols);
            assert_int_equal(p.n_tolerations, 0);
        } else {
            assert_int_equal(ex.tolerations, 0);
            assert_int_equal(p.n_tolerations, cases[i].tols);
        }
        if (cases[i].sel_cut) {
            assert_int_equal(ex.selector_requirements, cases[i].sel + 1 + cases[i].exprs);
            assert_int_equal(ex.selector_values, cases[i].values);
            assert_int_equal(p.node_selector.n, 0);
            assert_false(p.affinity.present);
            assert_int_equal(p.affinity.n_terms, 0);
        } else {
            assert_int_equal(ex.selector_requirements, 0);
            assert_int_equal(ex.selector_values, 0);
            assert_int_equal(p.node_selector.n, cases[i].sel);
            assert_true(p.affinity.present);
            size_t nv = 0;
            for (size_t e = 0; e < p.affinity.terms[0].n_exprs; e++)
                nv += p.affinity.terms[0].exprs[e].n_values;
            assert_int_equal(nv, cases[i].values);
        }
        pod_cleanup(&p);
        /* without `excess`: no caps */
        assert_int_equal(project_pod_spec(spec, NULL, &test_gpus, &p, NULL), K_OK);
        assert_int_equal(p.n_tolerations, cases[i].tols);
        assert_int_equal(p.node_selector.n, cases[i].sel);
        pod_cleanup(&p);
        json_object_put(spec);
    }
}

static void test_node(void **state)
{
    (void)state;
    json_object *o = json_tokener_parse(
        "{\"metadata\":{\"name\":\"lab-node-2\",\"labels\":{\"kubernetes.io/hostname\":"
        "\"lab-node-2\"}},\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":\"k\","
        "\"effect\":\"NoSchedule\"},{\"key\":\"nvidia.com/gpu\",\"value\":\"present\","
        "\"effect\":\"NoExecute\",\"timeAdded\":\"2025-06-02T09:00:00Z\"}]},"
        "\"status\":{\"capacity\":{\"cpu\":\"8\",\"memory\":\"32Gi\",\"nvidia.com/gpu\":\"4\","
        "\"nvidia.com/gpu.shared\":\"0\"},\"allocatable\":{\"cpu\":\"7800m\","
        "\"nvidia.com/gpu\":\"0\"}}}");
    struct knode n;
    assert_int_equal(project_node(o, &test_gpus, &n), K_OK);
    assert_string_equal(n.name, "lab-node-2");
    assert_string_equal(kv_list_get(&n.labels, "kubernetes.io/hostname"), "lab-node-2");
    assert_true(n.unschedulable);
    assert_int_equal(n.n_taints, 2);
    assert_string_equal(n.taints[0].value, "");
    assert_string_equal(n.taints[1].effect, "NoExecute");
    assert_int_equal(n.capacity.n, 2); /* cpu and memory dropped, the zero kept */
    assert_int_equal(resource_list_get(&n.capacity, "nvidia.com/gpu"), 4);
    assert_int_equal(n.allocatable.n, 1);
    assert_int_equal(resource_list_get(&n.allocatable, "nvidia.com/gpu"), 0);
    node_cleanup(&n);
    json_object_put(o);

    o = json_tokener_parse("{\"metadata\":{}}");
    assert_int_equal(project_node(o, &test_gpus, &n), K_EPARSE);
    assert_null(n.name);
    json_object_put(o);
    o = json_tokener_parse("{\"metadata\":{\"name\":\"x\"},\"status\":{\"capacity\":"
                           "{\"nvidia.com/gpu\":\"4x\"}}}");
    assert_int_equal(project_node(o, &test_gpus, &n), K_EPARSE);
    assert_null(n.name);
    json_object_put(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metadata_status),
        cmocka_unit_test(test_requests),
        cmocka_unit_test(test_selection_and_tolerations),
        cmocka_unit_test(test_pod_spec),
        cmocka_unit_test(test_pod_spec_caps),
        cmocka_unit_test(test_node),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
