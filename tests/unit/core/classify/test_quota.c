/*
 * test_quota.c - core/classify/quota.c: quota refusals read from the Events the real control
 * plane wrote (tests/fixtures/quota: kube-controller-manager 1.37.2's resourceclaim, job,
 * statefulset and replicaset controllers, from the e2e cluster), the GPU keys, whether a refusal
 * still holds, the ladder's quota-exceeded step, and hostile messages.
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

#include "classify/classify.h"
#include "classify/quota.h"
#include "gpus.h"
#include "kube/project.h"
#include "objects.h"
#include "util/result.h"

static struct kevent event_of(const char *file)
{
    char rel[256];
    snprintf(rel, sizeof(rel), "quota/%s", file);
    json_object *o = test_load_json(FIXTURES_DIR, rel);
    assert_non_null(o);
    struct kevent ev;
    assert_int_equal(project_event(o, &ev), K_OK);
    json_object_put(o);
    return ev;
}

static struct gpu_set dra_classes;

static int setup(void **state)
{
    (void)state;
    test_gpus_setup(NULL);
    return gpu_set_parse(&dra_classes, DRA_GPU_SET_DEFAULT) == K_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    gpu_set_cleanup(&dra_classes);
    return test_gpus_teardown(NULL);
}

static void test_claim_refused(void **state)
{
    (void)state;
    struct kevent ev = event_of("claim-refused.json");
    struct quota_refusal q;
    assert_true(quota_claim_event(&ev, &q));
    assert_string_equal(q.quota, "gpu-quota");
    assert_string_equal(q.pod_claim, "gpu");
    assert_string_equal(q.key, "gpu.qsnap.deviceclass.resource.k8s.io/devices");
    assert_string_equal(q.requested, "1");
    assert_string_equal(q.used, "0");
    assert_string_equal(q.limited, "0");
    assert_int_equal(q.n_keys, 1);
    assert_true(q.at > 0);
    /* the same refusal is no owner's */
    struct quota_owner o;
    assert_false(quota_owner_event(&ev, &test_gpus, &dra_classes, &o));

    /* client-go's aggregate of similar Events */
    ev = event_of("claim-refused-combined.json");
    assert_true(quota_claim_event(&ev, &q));
    assert_string_equal(q.pod_claim, "gpu");
    assert_int_equal(q.count, 4);

    char detail[1024];
    struct line l = {.buf = detail, .cap = sizeof(detail)};
    quota_put_claim(&l, &q);
    line_finish(&l);
    assert_string_equal(detail,
                        "ResourceQuota gpu-quota refuses the ResourceClaim of pod claim gpu: "
                        "gpu.qsnap.deviceclass.resource.k8s.io/devices requested 1, used 0 of "
                        "limit 0; kube-controller-manager retries creating it "
                        "(FailedResourceClaimCreation, 4 times): raise the quota's spec.hard "
                        "gpu.qsnap.deviceclass.resource.k8s.io/devices or free claims it counts "
                        "in the namespace");
}

static void test_owners_refused(void **state)
{
    (void)state;
    struct quota_owner o;
    struct kevent ev = event_of("job-refused.json");
    struct quota_refusal q;
    assert_false(quota_claim_event(&ev, &q));
    assert_true(quota_owner_event(&ev, &test_gpus, &dra_classes, &o));
    assert_int_equal(o.kind, QUOTA_OWNER_JOB);
    assert_string_equal(o.name, "job");
    assert_string_equal(o.ns, "qsnap");
    assert_string_equal(o.q.key, "requests.nvidia.com/gpu");
    assert_string_equal(o.q.requested, "2");
    assert_string_equal(o.q.used, "0");
    assert_string_equal(o.q.limited, "1");
    assert_string_equal(quota_owner_api_version(o.kind), "batch/v1");
    char detail[1024];
    struct line l = {.buf = detail, .cap = sizeof(detail)};
    quota_put_owner(&l, &o);
    line_finish(&l);
    assert_string_equal(detail, "ResourceQuota gpu-quota refuses the GPU pods of Job job: "
                                "requests.nvidia.com/gpu requested 2, used 0 of limit 1; no pod "
                                "exists, the Job controller retries (FailedCreate): raise the "
                                "quota's spec.hard requests.nvidia.com/gpu or lower the "
                                "replicas' GPU requests");

    ev = event_of("statefulset-refused.json");
    assert_true(quota_owner_event(&ev, &test_gpus, &dra_classes, &o));
    assert_int_equal(o.kind, QUOTA_OWNER_STATEFULSET);
    assert_string_equal(o.name, "sts");
    assert_string_equal(quota_owner_api_version(o.kind), "apps/v1");

    /* two keys exceeded: the GPU one is reported, the other counted */
    ev = event_of("replicaset-refused-two-keys.json");
    assert_true(quota_owner_event(&ev, &test_gpus, &dra_classes, &o));
    assert_int_equal(o.kind, QUOTA_OWNER_REPLICASET);
    assert_string_equal(o.q.key, "requests.nvidia.com/gpu");
    assert_string_equal(o.q.requested, "2");
    assert_string_equal(o.q.limited, "1");
    assert_int_equal(o.q.n_keys, 2);

    /* CPU only: not gputri's */
    ev = event_of("replicaset-refused-cpu.json");
    assert_false(quota_owner_event(&ev, &test_gpus, &dra_classes, &o));

    /* an Event naming an owner of another namespace is refused */
    ev = event_of("job-refused.json");
    snprintf(ev.obj_ns, sizeof(ev.obj_ns), "other");
    assert_false(quota_owner_event(&ev, &test_gpus, &dra_classes, &o));
    /* a DaemonSet, a Normal Event: not read */
    ev = event_of("job-refused.json");
    snprintf(ev.obj_kind, sizeof(ev.obj_kind), "DaemonSet");
    assert_false(quota_owner_event(&ev, &test_gpus, &dra_classes, &o));
    ev = event_of("job-refused.json");
    snprintf(ev.type, sizeof(ev.type), "Normal");
    assert_false(quota_owner_event(&ev, &test_gpus, &dra_classes, &o));
}

static void test_gpu_keys(void **state)
{
    (void)state;
    assert_true(quota_key_is_gpu("requests.nvidia.com/gpu", &test_gpus, &dra_classes));
    assert_true(quota_key_is_gpu("limits.nvidia.com/gpu", &test_gpus, &dra_classes));
    assert_true(quota_key_is_gpu("nvidia.com/gpu", &test_gpus, &dra_classes));
    assert_false(quota_key_is_gpu("requests.cpu", &test_gpus, &dra_classes));
    assert_false(
        quota_key_is_gpu("count/resourceclaims.resource.k8s.io", &test_gpus, &dra_classes));
    assert_true(quota_key_is_gpu("gpu.nvidia.com.deviceclass.resource.k8s.io/devices", &test_gpus,
                                 &dra_classes));
    assert_false(
        quota_key_is_gpu("dranet.deviceclass.resource.k8s.io/devices", &test_gpus, &dra_classes));
    assert_false(
        quota_key_is_gpu(".deviceclass.resource.k8s.io/devices", &test_gpus, &dra_classes));
    assert_true(quota_key_is_gpu("requests.deviceclass.resource.kubernetes.io/gpu.nvidia.com",
                                 &test_gpus, &dra_classes));
    assert_false(
        quota_key_is_gpu("gpu.nvidia.com.deviceclass.resource.k8s.io/devices", &test_gpus, NULL));
    assert_false(quota_key_is_gpu("", &test_gpus, &dra_classes));
    assert_false(quota_key_is_gpu(NULL, &test_gpus, &dra_classes));
}

static void test_parse_hostile(void **state)
{
    (void)state;
    struct quota_refusal q;
    assert_false(quota_parse(NULL, NULL, NULL, &q));
    assert_false(quota_parse("", NULL, NULL, &q));
    assert_false(quota_parse("exceeded quota: q", NULL, NULL, &q));
    assert_false(quota_parse("exceeded quota: q, requested: a=1", NULL, NULL, &q));
    assert_false(quota_parse("exceeded quota: q, requested: a=1, used: a=1", NULL, NULL, &q));
    assert_false(
        quota_parse("exceeded quota: , requested: a=1, used: a=0, limited: a=0", NULL, NULL, &q));
    assert_false(quota_parse("exceeded quota: q, requested: , used: , limited: ", NULL, NULL, &q));
    assert_true(
        quota_parse("exceeded quota: q, requested: a, used: , limited: \n", NULL, NULL, &q));
    assert_string_equal(q.key, "a");
    assert_string_equal(q.requested, "");
    assert_string_equal(q.used, "");
    /* a value longer than its buffer is cut */
    assert_true(
        quota_parse("exceeded quota: q, requested: a=123456789012345678901234567890123456789"
                    "0123456789, used: a=1, limited: a=2",
                    NULL, NULL, &q));
    assert_int_equal(strlen(q.requested), QUOTA_VALUE_MAX - 1);
    assert_string_equal(q.limited, "2");

    /* thousands of keys: counted, the first QUOTA_KEYS_SCANNED looked at */
    size_t cap = 200000;
    char *m = malloc(cap);
    assert_non_null(m);
    size_t n = (size_t)snprintf(m, cap, "exceeded quota: q, requested: ");
    for (int i = 0; i < 500 && n + 32 < cap; i++)
        n += (size_t)snprintf(m + n, cap - n, "%sk%d=1", i ? "," : "", i);
    snprintf(m + n, cap - n, ", used: k0=1, limited: k0=1");
    assert_true(n < QUOTA_MESSAGE_SCAN);
    assert_true(quota_parse(m, NULL, NULL, &q));
    assert_string_equal(q.key, "k0");
    assert_int_equal(q.n_keys, 500);
    assert_string_equal(q.limited, "1");
    /* the refusal after 5000 bytes of text is not read */
    memset(m, 'x', 5000);
    snprintf(m + 5000, cap - 5000, "exceeded quota: q, requested: a=1, used: a=1, limited: a=1");
    assert_false(quota_parse(m, NULL, NULL, &q));
    free(m);
}

static struct kpod claim_pod(const char *extra_status, const char *node)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u\"},\"spec\":{%s%s%s"
             "\"containers\":[{\"name\":\"c\"}],\"resourceClaims\":[{\"name\":\"gpu\","
             "\"resourceClaimTemplateName\":\"t\"},{\"name\":\"direct\",\"resourceClaimName\":"
             "\"c\"}]},\"status\":{\"phase\":\"Pending\"%s}}",
             node ? "\"nodeName\":\"" : "", node ? node : "", node ? "\"," : "",
             extra_status ? extra_status : "");
    json_object *o = json_tokener_parse(text);
    assert_non_null(o);
    struct kpod pod;
    assert_int_equal(project_pod(o, &test_gpus, &pod), K_OK);
    json_object_put(o);
    return pod;
}

static void test_claim_current_and_ladder(void **state)
{
    (void)state;
    struct kevent ev = event_of("claim-refused.json");
    struct quota_refusal q;
    assert_true(quota_claim_event(&ev, &q));

    struct kpod pod = claim_pod(NULL, NULL);
    assert_true(quota_claim_current(&pod, &q));
    struct dra_view view = {.gpu_classes = &dra_classes};
    struct classify_input in = {.pod = &pod, .dra = &view, .quota = &q};
    struct classify_result res = {0};
    assert_int_equal(classify(&in, &res), K_OK);
    assert_int_equal(res.cause, CAUSE_QUOTA_EXCEEDED);
    assert_non_null(strstr(res.detail, "ResourceQuota gpu-quota refuses the ResourceClaim"));
    assert_string_equal(cause_word(res.cause), "quota-exceeded");
    assert_string_equal(cause_event_reason(res.cause), "GPUQuotaExceeded");
    assert_true(cause_is_blocking(res.cause));
    /* without the refusal the ladder goes on */
    in.quota = NULL;
    assert_int_equal(classify(&in, &res), K_OK);
    assert_int_equal(res.cause, CAUSE_DRA_TEMPLATE_MISSING);
    pod_cleanup(&pod);

    /* the claim created (status.resourceClaimStatuses): the refusal no longer holds */
    pod = claim_pod(",\"resourceClaimStatuses\":[{\"name\":\"gpu\",\"resourceClaimName\":"
                    "\"p-gpu-abcde\"}]",
                    NULL);
    assert_false(quota_claim_current(&pod, &q));
    in.pod = &pod;
    in.quota = &q;
    assert_int_equal(classify(&in, &res), K_OK);
    assert_int_not_equal(res.cause, CAUSE_QUOTA_EXCEEDED);
    pod_cleanup(&pod);

    /* bound: ok whatever an old Event says */
    pod = claim_pod(NULL, "n1");
    assert_false(quota_claim_current(&pod, &q));
    in.pod = &pod;
    assert_int_equal(classify(&in, &res), K_OK);
    assert_int_equal(res.cause, CAUSE_OK);
    pod_cleanup(&pod);

    /* a pod claim of another name, or one naming a claim directly */
    pod = claim_pod(NULL, NULL);
    snprintf(q.pod_claim, sizeof(q.pod_claim), "direct");
    assert_false(quota_claim_current(&pod, &q));
    snprintf(q.pod_claim, sizeof(q.pod_claim), "other");
    assert_false(quota_claim_current(&pod, &q));
    pod_cleanup(&pod);
}

static void test_owner_current(void **state)
{
    (void)state;
    struct quota_owner o = {.q = {.at = 1000}};
    assert_true(quota_owner_current(&o, 1000, 0));
    assert_true(quota_owner_current(&o, 1000 + QUOTA_OWNER_WINDOW, 0));
    assert_false(quota_owner_current(&o, 1001 + QUOTA_OWNER_WINDOW, 0));
    assert_true(quota_owner_current(&o, 0, 0)); /* no clock: age not judged */
    /* a forged date: ahead of the clock by more than the skew, or none at all */
    assert_true(quota_owner_current(&o, 1000 - QUOTA_OWNER_SKEW, 0));
    assert_false(quota_owner_current(&o, 999 - QUOTA_OWNER_SKEW, 0));
    struct quota_owner far = {.q = {.at = 253402300799}}, undated = {.q = {.at = 0}};
    assert_false(quota_owner_current(&far, 1000, 0));
    assert_false(quota_owner_current(&undated, 1000, 0));
    assert_true(quota_owner_current(&undated, 0, 0));
    /* a pod created in the same second as the refusal is one the owner had before it */
    assert_true(quota_owner_current(&o, 1010, 1000));
    assert_false(quota_owner_current(&o, 1010, 1001));
    assert_string_equal(quota_owner_kind_name(QUOTA_OWNER_KINDS), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claim_refused),
        cmocka_unit_test(test_owners_refused),
        cmocka_unit_test(test_gpu_keys),
        cmocka_unit_test(test_parse_hostile),
        cmocka_unit_test(test_claim_current_and_ladder),
        cmocka_unit_test(test_owner_current),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
