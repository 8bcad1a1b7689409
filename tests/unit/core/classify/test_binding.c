/*
 * test_binding.c - core/classify/binding.c and the words it gives classify(): preempting (victims
 * terminating on the nominated node), binding (a nominated node, no victims, a pod with claims,
 * PVC volumes or binding conditions) and binding-failed (a failure condition True, the binding
 * timeout past, or the scheduler's binding error). The recorded cases from a 1.37.2 control plane
 * are in tests/fixtures/dra/recorded-bind-*.json and hand-bind-*.json (test_dra_ladder.c).
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

#include "classify/binding.h"
#include "classify/classify.h"
#include "gpus.h"
#include "kube/project.h"
#include "model/dra.h"
#include "util/result.h"

#define ALLOCATED_AT 1796547600 /* 2026-12-06T09:00:00Z */

/* A claim ns/c allocated at ALLOCATED_AT with device gpu.nvidia.com/n/gpu-0, whose result lists
 * `conditions` and failure condition "failed"; `devices` is status.devices ("" for none). */
static void load_claim(struct dra_claim *c, const char *conditions, const char *devices)
{
    char buf[2048];
    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"uid\":\"cu\"},\"spec\":{"
             "\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
             "\"gpu.nvidia.com\"}}]}},\"status\":{\"allocation\":{\"allocationTimestamp\":"
             "\"2026-12-06T09:00:00Z\",\"devices\":{\"results\":[{\"request\":\"gpu\","
             "\"driver\":\"gpu.nvidia.com\",\"pool\":\"n\",\"device\":\"gpu-0\","
             "\"bindingConditions\":[%s],\"bindingFailureConditions\":[\"failed\"]}]}},"
             "\"devices\":[%s]}}",
             conditions, devices);
    json_object *o = json_tokener_parse(buf);
    assert_non_null(o);
    assert_int_equal(project_dra_claim(o, c), K_OK);
    json_object_put(o);
}

static const char *const attached_false =
    "{\"driver\":\"gpu.nvidia.com\",\"pool\":\"n\",\"device\":\"gpu-0\",\"conditions\":["
    "{\"type\":\"attached\",\"status\":\"False\"}]}";
static const char *const attached_true =
    "{\"driver\":\"gpu.nvidia.com\",\"pool\":\"n\",\"device\":\"gpu-0\",\"conditions\":["
    "{\"type\":\"attached\",\"status\":\"True\"},{\"type\":\"ready\",\"status\":\"True\"}]}";
static const char *const failed_true =
    "{\"driver\":\"gpu.nvidia.com\",\"pool\":\"n\",\"device\":\"gpu-0\",\"conditions\":["
    "{\"type\":\"attached\",\"status\":\"False\"},{\"type\":\"failed\",\"status\":\"True\","
    "\"reason\":\"AttachFailed\",\"message\":\"fabric port down\"}]}";

static void test_facts(void **state)
{
    (void)state;
    struct dra_claim c;
    const struct dra_claim *claims[] = {&c};
    struct binding_facts f;

    /* no status.devices entry: every condition pending */
    load_claim(&c, "\"attached\",\"ready\"", "");
    binding_facts_of(claims, 1, ALLOCATED_AT + 30, 600, &f);
    assert_int_equal(f.devices, 1);
    assert_int_equal(f.pending, 1);
    assert_string_equal(f.pending_condition, "attached");
    assert_null(f.failed);
    assert_null(f.timed_out_claim);
    assert_int_equal(f.deadline, ALLOCATED_AT + 601);
    /* past the timeout (strictly after allocationTimestamp + timeout, as upstream) */
    binding_facts_of(claims, 1, ALLOCATED_AT + 600, 600, &f);
    assert_null(f.timed_out_claim);
    binding_facts_of(claims, 1, ALLOCATED_AT + 601, 600, &f);
    assert_ptr_equal(f.timed_out_claim, &c);
    assert_int_equal(f.waited, 601);
    /* now unknown: nothing times out */
    binding_facts_of(claims, 1, 0, 600, &f);
    assert_null(f.timed_out_claim);
    dra_claim_cleanup(&c);

    /* one of two True: "ready" pending */
    load_claim(&c, "\"attached\",\"ready\"", attached_false);
    binding_facts_of(claims, 1, ALLOCATED_AT + 1, 600, &f);
    assert_string_equal(f.pending_condition, "attached");
    dra_claim_cleanup(&c);

    /* all True: ready, nothing pending, never timed out */
    load_claim(&c, "\"attached\",\"ready\"", attached_true);
    binding_facts_of(claims, 1, ALLOCATED_AT + 9999, 600, &f);
    assert_int_equal(f.devices, 1);
    assert_int_equal(f.pending, 0);
    assert_null(f.timed_out_claim);
    dra_claim_cleanup(&c);

    /* a failure condition True */
    load_claim(&c, "\"attached\"", failed_true);
    binding_facts_of(claims, 1, ALLOCATED_AT + 1, 600, &f);
    assert_non_null(f.failed);
    assert_string_equal(f.failed->type, "failed");
    assert_ptr_equal(f.failed_claim, &c);
    assert_int_equal(f.pending, 0);
    dra_claim_cleanup(&c);

    /* a result without binding conditions counts for nothing */
    load_claim(&c, "", failed_true);
    binding_facts_of(claims, 1, ALLOCATED_AT + 9999, 600, &f);
    assert_int_equal(f.devices, 0);
    assert_null(f.failed);
    dra_claim_cleanup(&c);

    binding_facts_of(NULL, 0, 0, 600, &f);
    assert_int_equal(f.devices, 0);
}

/* A view that serves one claim ns/c and nothing else. */
static const struct dra_claim *one_claim(void *ctx, const char *ns, const char *name)
{
    const struct dra_claim *c = ctx;
    return strcmp(ns, c->ns) == 0 && strcmp(name, c->name) == 0 ? c : NULL;
}

/* The pod ns/p claiming ns/c, nominated to `nominated` (NULL: none). */
static void load_pod(struct kpod *pod, const char *nominated, const char *extra_spec,
                     const char *scheduled)
{
    char buf[2048];
    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"pu\"},\"spec\":{"
             "\"containers\":[{\"name\":\"c\"}]%s},\"status\":{\"phase\":\"Pending\"%s%s%s%s}}",
             extra_spec, nominated ? ",\"nominatedNodeName\":\"" : "", nominated ? nominated : "",
             nominated ? "\"" : "", scheduled);
    json_object *o = json_tokener_parse(buf);
    assert_non_null(o);
    assert_int_equal(project_pod(o, &test_gpus, pod), K_OK);
    json_object_put(o);
}

static const char *const claim_ref = ",\"resourceClaims\":[{\"name\":\"gpu\","
                                     "\"resourceClaimName\":\"c\"}]";

static enum cause run(const struct kpod *pod, const struct dra_claim *c, int64_t now,
                      const char *const *victims, size_t n_victims, char *detail, size_t len)
{
    struct gpu_set set;
    assert_int_equal(gpu_set_parse(&set, DRA_GPU_SET_DEFAULT), K_OK);
    struct dra_view view = {.gpu_classes = &set, .ctx = (void *)c, .claim = one_claim};
    struct classify_input in = {.pod = pod,
                                .dra = c ? &view : NULL,
                                .now = now,
                                .victims = victims,
                                .n_victims = n_victims,
                                .victims_total = n_victims};
    struct classify_result r = {0};
    assert_int_equal(classify(&in, &r), K_OK);
    snprintf(detail, len, "%s", r.detail);
    gpu_set_cleanup(&set);
    printf("  %-16s %s\n", cause_word(r.cause), r.detail);
    return r.cause;
}

static void test_words(void **state)
{
    (void)state;
    char d[1024];
    struct dra_claim c;
    struct kpod pod;

    /* binding: nominated, nothing terminating there, a condition pending */
    load_claim(&c, "\"attached\"", attached_false);
    load_pod(&pod, "n", claim_ref, "");
    assert_int_equal(run(&pod, &c, ALLOCATED_AT + 42, NULL, 0, d, sizeof(d)), CAUSE_BINDING);
    assert_non_null(strstr(d, "nominated node n: the scheduler is binding the pod there"));
    assert_non_null(strstr(d, "waiting for binding condition attached of device "
                              "gpu.nvidia.com/n/gpu-0 of claim ns/c (allocated at "
                              "2026-12-06T09:00:00Z, binding timeout 600 s)"));
    assert_false(cause_is_blocking(CAUSE_BINDING));

    /* preempting stays preempting when pods terminate on the nominated node */
    const char *victims[] = {"ns/low"};
    assert_int_equal(run(&pod, &c, ALLOCATED_AT + 42, victims, 1, d, sizeof(d)), CAUSE_PREEMPTING);
    assert_non_null(strstr(d, "1 still terminating there: ns/low"));

    /* the timeout past: binding-failed */
    assert_int_equal(run(&pod, &c, ALLOCATED_AT + 700, NULL, 0, d, sizeof(d)),
                     CAUSE_BINDING_FAILED);
    assert_non_null(strstr(d, "binding conditions of claim ns/c not all True past the "
                              "scheduler's binding timeout (DynamicResources bindingTimeout; "
                              "allocated at 2026-12-06T09:00:00Z, binding timeout 600 s)"));
    assert_non_null(strstr(d, "still pending: attached"));
    assert_true(cause_is_blocking(CAUSE_BINDING_FAILED));
    pod_cleanup(&pod);
    dra_claim_cleanup(&c);

    /* a failure condition True: binding-failed, with its reason and message */
    load_claim(&c, "\"attached\"", failed_true);
    load_pod(&pod, "n", claim_ref, "");
    assert_int_equal(run(&pod, &c, ALLOCATED_AT + 5, NULL, 0, d, sizeof(d)), CAUSE_BINDING_FAILED);
    assert_non_null(strstr(d, "binding failure condition failed is True on device "
                              "gpu.nvidia.com/n/gpu-0 of claim ns/c (AttachFailed: fabric port "
                              "down)"));
    pod_cleanup(&pod);
    /* also when the scheduler already dropped the nomination */
    load_pod(&pod, NULL, claim_ref, "");
    assert_int_equal(run(&pod, &c, ALLOCATED_AT + 5, NULL, 0, d, sizeof(d)), CAUSE_BINDING_FAILED);
    pod_cleanup(&pod);
    dra_claim_cleanup(&c);

    /* the conditions all True: still binding (the scheduler binds next) */
    load_claim(&c, "\"attached\",\"ready\"", attached_true);
    load_pod(&pod, "n", claim_ref, "");
    assert_int_equal(run(&pod, &c, ALLOCATED_AT + 5, NULL, 0, d, sizeof(d)), CAUSE_BINDING);
    assert_non_null(strstr(d, "binding resource claim gpu"));
    pod_cleanup(&pod);
    dra_claim_cleanup(&c);

    /* PVC volumes, an extended-resource GPU: binding */
    load_pod(&pod, "n",
             ",\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":"
             "\"1\"}}}],\"volumes\":[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":"
             "\"data\"}}]",
             "");
    assert_true(pod.pvc_volumes);
    assert_int_equal(run(&pod, NULL, 0, NULL, 0, d, sizeof(d)), CAUSE_BINDING);
    assert_non_null(strstr(d, "binding PVC volumes"));
    pod_cleanup(&pod);

    /* neither claims nor volumes, nothing terminating: preempting, as before */
    load_pod(&pod, "n",
             ",\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":"
             "\"1\"}}}],\"volumes\":[{\"name\":\"cfg\",\"configMap\":{\"name\":\"x\"}}]",
             "");
    assert_false(pod.pvc_volumes);
    assert_int_equal(run(&pod, NULL, 0, NULL, 0, d, sizeof(d)), CAUSE_PREEMPTING);
    assert_non_null(strstr(d, "no pod is terminating there any more"));
    pod_cleanup(&pod);

    /* the scheduler's binding error in PodScheduled, not nominated again: binding-failed */
    const char *sched = ",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
                        "\"reason\":\"SchedulerError\",\"message\":\"running PreBind plugin "
                        "\\\"DynamicResources\\\": device binding timeout: claim=c\"}]";
    load_claim(&c, "\"attached\",\"ready\"", attached_true);
    load_pod(&pod, NULL, claim_ref, sched);
    assert_true(binding_scheduler_failed(&pod));
    assert_int_equal(run(&pod, &c, 0, NULL, 0, d, sizeof(d)), CAUSE_BINDING_FAILED);
    assert_non_null(strstr(d, "the scheduler's last attempt to bind the pod failed: running "
                              "PreBind plugin \"DynamicResources\": device binding timeout"));
    pod_cleanup(&pod);
    /* nominated again: a new attempt, binding, and the detail says the last one failed */
    load_pod(&pod, "n", claim_ref, sched);
    assert_int_equal(run(&pod, &c, 0, NULL, 0, d, sizeof(d)), CAUSE_BINDING);
    assert_non_null(strstr(d, "the previous attempt failed: running PreBind plugin"));
    pod_cleanup(&pod);
    dra_claim_cleanup(&c);
}

static void test_ladder(void **state)
{
    (void)state;
    assert_string_equal(cause_word(CAUSE_BINDING), "binding");
    assert_string_equal(cause_word(CAUSE_BINDING_FAILED), "binding-failed");
    assert_int_equal(cause_from_word("binding-failed"), CAUSE_BINDING_FAILED);
    assert_string_equal(cause_event_reason(CAUSE_BINDING), "GPUBinding");
    assert_string_equal(cause_event_reason(CAUSE_BINDING_FAILED), "DeviceBindingFailed");
    assert_true(cause_rank(CAUSE_PREEMPTING) < cause_rank(CAUSE_BINDING_FAILED));
    assert_true(cause_rank(CAUSE_BINDING_FAILED) < cause_rank(CAUSE_BINDING));
    assert_true(cause_rank(CAUSE_BINDING) < cause_rank(CAUSE_NO_SCHEDULER));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_facts),
        cmocka_unit_test(test_words),
        cmocka_unit_test(test_ladder),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
