/*
 * fuzz_admission.c - libFuzzer target for the AdmissionReview handler (webhook/admission.c).
 *
 * The input is the HTTP body; the snapshot is fixed (SNAPSHOT below, built once the way the unit
 * tests build theirs, tests/unit/webhook/wh_testutil.h) and holds something for every check: a
 * tainted GPU node, a cordoned one, one with allocatable 0, one without GPUs, qGPU and AMD nodes,
 * a RuntimeClass with scheduling constraints, quotas (partly used, bare keys, scoped), a
 * namespace labelled for qGPU, and for the DRA checks (webhook/warnings_dra.c) two DeviceClasses,
 * a ResourceSlice of two GPUs on lab-node-1 (no AMD driver publishes), a ResourceClaim and a
 * ResourceClaimTemplate in gpu-triage. Besides the sanitizers, the target checks what admission.h
 * promises: K_OK with a valid AdmissionReview that allows, echoes the request uid and carries
 * the warnings within their limits as clean UTF-8, or K_EPARSE with no response and a reason;
 * and that cutting the members the checks do not read changes nothing: the same input through
 * admission_handle_ex(ADMISSION_PARSE_FULL) gives the same status, response bytes, warnings,
 * reasons and identity.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "admission.h"
#include "model/gpu.h"
#include "util/result.h"
#include "wh_testutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* clang-format off */
static const char SNAPSHOT[] =
    "{\"nodes\":["
    "{\"metadata\":{\"name\":\"lab-node-0\",\"labels\":{\"kubernetes.io/hostname\":\"lab-node-0\","
    "\"gpu\":\"a100\",\"nvidia.com/gpu.product\":\"NVIDIA-A100-SXM4-40GB\"}},"
    "\"spec\":{\"taints\":[{\"key\":\"nvidia.com/gpu\",\"value\":\"present\","
    "\"effect\":\"NoSchedule\"}]},"
    "\"status\":{\"capacity\":{\"cpu\":\"32\",\"nvidia.com/gpu\":\"2\"},"
    "\"allocatable\":{\"cpu\":\"32\",\"nvidia.com/gpu\":\"2\"}}},"
    "{\"metadata\":{\"name\":\"lab-node-1\",\"labels\":{\"kubernetes.io/hostname\":\"lab-node-1\"}},"
    "\"spec\":{},\"status\":{\"capacity\":{\"cpu\":\"32\"},\"allocatable\":{\"cpu\":\"32\"}}},"
    "{\"metadata\":{\"name\":\"lab-node-2\",\"labels\":{\"kubernetes.io/hostname\":\"lab-node-2\","
    "\"gpu\":\"a100\"}},\"spec\":{},"
    "\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"4\"},\"allocatable\":{\"nvidia.com/gpu\":\"0\"}}},"
    "{\"metadata\":{\"name\":\"gpu-cordoned\",\"labels\":{\"gpu\":\"h100\"}},"
    "\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":\"node.kubernetes.io/unschedulable\","
    "\"effect\":\"NoSchedule\"}]},"
    "\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"8\",\"nvidia.com/mig-1g.5gb\":\"7\"},"
    "\"allocatable\":{\"nvidia.com/gpu\":\"8\",\"nvidia.com/mig-1g.5gb\":\"7\"}}},"
    "{\"metadata\":{\"name\":\"qgpu-node\",\"labels\":{\"qgpu\":\"true\"}},\"spec\":{},"
    "\"status\":{\"capacity\":{\"tke.cloud.tencent.com/qgpu-core\":\"200\","
    "\"tke.cloud.tencent.com/qgpu-memory\":\"80\"},"
    "\"allocatable\":{\"tke.cloud.tencent.com/qgpu-core\":\"200\","
    "\"tke.cloud.tencent.com/qgpu-memory\":\"80\"}}},"
    "{\"metadata\":{\"name\":\"amd-node\"},"
    "\"spec\":{\"taints\":[{\"key\":\"amd.com/gpu\",\"effect\":\"NoExecute\"}]},"
    "\"status\":{\"capacity\":{\"amd.com/gpu\":\"1\"},\"allocatable\":{\"amd.com/gpu\":\"1\"}}}"
    "],\"runtimeClasses\":["
    "{\"metadata\":{\"name\":\"nvidia\"},\"handler\":\"nvidia\","
    "\"scheduling\":{\"nodeSelector\":{\"gpu\":\"a100\"},"
    "\"tolerations\":[{\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\","
    "\"effect\":\"NoSchedule\"}]}},"
    "{\"metadata\":{\"name\":\"plain\"},\"handler\":\"runc\"}"
    "],\"resourceQuotas\":["
    "{\"metadata\":{\"name\":\"q\",\"namespace\":\"gpu-quota\"},"
    "\"spec\":{\"hard\":{\"requests.nvidia.com/gpu\":\"4\"}},"
    "\"status\":{\"hard\":{\"requests.nvidia.com/gpu\":\"4\"},"
    "\"used\":{\"requests.nvidia.com/gpu\":\"3\"}}},"
    "{\"metadata\":{\"name\":\"bare\",\"namespace\":\"gpu-triage\"},"
    "\"spec\":{\"hard\":{\"nvidia.com/gpu\":\"2\",\"limits.nvidia.com/gpu\":\"2\"}}},"
    "{\"metadata\":{\"name\":\"forecast\",\"namespace\":\"gpu-triage\"},"
    "\"spec\":{\"hard\":{\"requests.nvidia.com/gpu\":\"1\"}}},"
    "{\"metadata\":{\"name\":\"scoped\",\"namespace\":\"other\"},"
    "\"spec\":{\"hard\":{\"requests.nvidia.com/gpu\":\"1\"},\"scopes\":[\"Terminating\"]},"
    "\"status\":{\"hard\":{\"requests.nvidia.com/gpu\":\"1\"},\"used\":{}}}"
    "],\"namespaces\":["
    "{\"metadata\":{\"name\":\"gpu-triage\","
    "\"labels\":{\"kubernetes.io/metadata.name\":\"gpu-triage\"}}},"
    "{\"metadata\":{\"name\":\"gpu-quota\","
    "\"labels\":{\"kubernetes.io/metadata.name\":\"gpu-quota\"}}},"
    "{\"metadata\":{\"name\":\"qgpu\",\"labels\":{\"kubernetes.io/metadata.name\":\"qgpu\","
    "\"tke.cloud.tencent.com/qgpu-schedule-policy\":\"fixed-share\"}}}"
    "],\"deviceClasses\":["
    "{\"metadata\":{\"name\":\"gpu.nvidia.com\"},\"spec\":{\"selectors\":[{\"cel\":{\"expression\":"
    "\"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'\"}}]}},"
    "{\"metadata\":{\"name\":\"gpu.amd.com\"},\"spec\":{\"selectors\":[{\"cel\":{\"expression\":"
    "\"device.driver == 'gpu.amd.com'\"}}]}}"
    "],\"resourceSlices\":["
    "{\"metadata\":{\"name\":\"lab-node-1-gpu.nvidia.com\"},\"spec\":{\"driver\":\"gpu.nvidia.com\","
    "\"nodeName\":\"lab-node-1\",\"pool\":{\"name\":\"lab-node-1\",\"generation\":1,"
    "\"resourceSliceCount\":1},\"devices\":["
    "{\"name\":\"gpu-0\",\"attributes\":{\"type\":{\"string\":\"gpu\"},"
    "\"productName\":{\"string\":\"NVIDIA A100-SXM4-40GB\"},\"index\":{\"int\":0}},"
    "\"capacity\":{\"memory\":{\"value\":\"40Gi\"}}},"
    "{\"name\":\"gpu-1\",\"attributes\":{\"type\":{\"string\":\"gpu\"},"
    "\"productName\":{\"string\":\"NVIDIA A100-SXM4-40GB\"},\"index\":{\"int\":1}},"
    "\"capacity\":{\"memory\":{\"value\":\"40Gi\"}}}]}}"
    "],\"resourceClaims\":["
    "{\"metadata\":{\"name\":\"shared-gpu\",\"namespace\":\"gpu-triage\"},\"spec\":{\"devices\":"
    "{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\","
    "\"allocationMode\":\"ExactCount\",\"count\":1}}]}}}"
    "],\"resourceClaimTemplates\":["
    "{\"metadata\":{\"name\":\"amd-gpu\",\"namespace\":\"gpu-triage\"},\"spec\":{\"spec\":"
    "{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
    "\"gpu.amd.com\",\"allocationMode\":\"ExactCount\",\"count\":1}}]}}}}"
    "]}";
/* clang-format on */

static struct gpu_set gpus;
static struct owned_snapshot snapshot;

static void fail(const char *what, const struct admission_result *r)
{
    fprintf(stderr, "admission: %s\nresponse: %s\nerror: %s\n", what,
            r->response ? r->response : "(null)", r->error);
    abort();
}

static void setup(void)
{
    json_object *s = json_tokener_parse(SNAPSHOT);
    if (!s || gpu_set_parse(&gpus, GPU_SET_DEFAULT) != K_OK ||
        owned_snapshot_build(&snapshot, s, &gpus) != K_OK || snapshot.n_nodes != 6 ||
        snapshot.n_rcs != 2 || snapshot.n_quotas != 4 || snapshot.n_nss != 3 ||
        dra_store_count(snapshot.dra, DRA_KIND_CLASS) != 2 ||
        dra_store_count(snapshot.dra, DRA_KIND_SLICE) != 1 ||
        dra_store_count(snapshot.dra, DRA_KIND_CLAIM) != 1 ||
        dra_store_count(snapshot.dra, DRA_KIND_TEMPLATE) != 1) {
        fprintf(stderr, "fuzz_admission: the fixed snapshot does not build\n");
        abort();
    }
    json_object_put(s);
}

static bool terminated(const char *s, size_t cap)
{
    return strnlen(s, cap) < cap;
}

/* request.uid of the body when an ordinary JSON parse finds one, else NULL. */
static char *request_uid(const uint8_t *data, size_t size)
{
    char *uid = NULL;
    struct json_tokener *tok = json_tokener_new_ex(ADMISSION_MAX_DEPTH);
    if (!tok)
        return NULL;
    json_object *root = json_tokener_parse_ex(tok, (const char *)data, (int)size), *req, *v;
    if (root && json_object_object_get_ex(root, "request", &req) &&
        json_object_object_get_ex(req, "uid", &v) && json_object_is_type(v, json_type_string))
        uid = strdup(json_object_get_string(v));
    json_object_put(root);
    json_tokener_free(tok);
    return uid;
}

static void check_response(const struct admission_result *r, const uint8_t *data, size_t size)
{
    if (!r->response || strlen(r->response) != r->response_len)
        fail("K_OK without a response of response_len bytes", r);
    json_object *root = json_tokener_parse(r->response), *v, *resp, *ws;
    if (!root)
        fail("the response is not JSON", r);
    if (!json_object_object_get_ex(root, "apiVersion", &v) ||
        strcmp(json_object_get_string(v), "admission.k8s.io/v1") != 0 ||
        !json_object_object_get_ex(root, "kind", &v) ||
        strcmp(json_object_get_string(v), "AdmissionReview") != 0 ||
        !json_object_object_get_ex(root, "response", &resp))
        fail("the response is not an AdmissionReview v1", r);
    if (!json_object_object_get_ex(resp, "allowed", &v) || !json_object_get_boolean(v))
        fail("the response does not allow", r);
    if (json_object_object_get_ex(resp, "patch", &v))
        fail("the response patches", r);
    if (!json_object_object_get_ex(resp, "uid", &v) || !json_object_is_type(v, json_type_string) ||
        json_object_get_string_len(v) == 0)
        fail("the response has no uid", r);
    char *uid = request_uid(data, size);
    if (uid && strcmp(uid, json_object_get_string(v)) != 0)
        fail("the response uid is not the request uid", r);
    free(uid);

    size_t n = 0, total = 0;
    if (json_object_object_get_ex(resp, "warnings", &ws)) {
        if (!json_object_is_type(ws, json_type_array))
            fail("warnings is not an array", r);
        n = json_object_array_length(ws);
        if (n == 0)
            fail("an empty warnings array", r);
    }
    if (n != r->warnings.n || n > WARN_MAX_ITEMS)
        fail("warning count", r);
    for (size_t i = 0; i < n; i++) {
        const char *w = json_object_get_string(json_object_array_get_idx(ws, i));
        if (!w || strlen(w) > WARN_ITEM_MAX || !clean_utf8(w))
            fail("a warning too long or not clean UTF-8", r);
        if (strcmp(w, r->warnings.items[i].text) != 0 || !r->warnings.items[i].reason)
            fail("a warning differs from the list, or has no reason", r);
        total += strlen(w);
    }
    if (total > WARN_TOTAL_MAX)
        fail("warnings above the total budget", r);
    json_object_put(root);
}

/* The pruned answer `a` equals the whole-tree answer to the same input. */
static void check_same_as_full(const struct admission_result *a, int ra, const uint8_t *data,
                               size_t size)
{
    struct admission_result *b = malloc(sizeof(*b));
    if (!b)
        abort();
    int rb = admission_handle_ex((const char *)data, size, &snapshot.snap, ADMISSION_PARSE_FULL, b);
    if (ra == K_ENOMEM || rb == K_ENOMEM)
        goto out;
    bool same = ra == rb && a->warnings.n == b->warnings.n && a->dry_run == b->dry_run &&
                strcmp(a->ns, b->ns) == 0 && strcmp(a->kind, b->kind) == 0 &&
                strcmp(a->api_version, b->api_version) == 0 && strcmp(a->name, b->name) == 0 &&
                strcmp(a->uid, b->uid) == 0 && strcmp(a->operation, b->operation) == 0 &&
                (ra == K_OK ? a->response_len == b->response_len &&
                                  memcmp(a->response, b->response, a->response_len) == 0
                            : strcmp(a->error, b->error) == 0);
    for (size_t i = 0; same && i < a->warnings.n; i++)
        same = strcmp(a->warnings.items[i].text, b->warnings.items[i].text) == 0 &&
               a->warnings.items[i].reason == b->warnings.items[i].reason;
    if (!same) {
        fprintf(stderr, "full tree: %d %s %s\n", rb, b->response ? b->response : "(null)",
                b->error);
        fail("the pruned parse answers differently from the whole tree", a);
    }
out:
    admission_result_cleanup(b);
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready) {
        setup();
        ready = true;
    }
    if (size > INT32_MAX)
        return 0;
    struct admission_result *r = malloc(sizeof(*r));
    if (!r)
        abort();
    int rc = admission_handle((const char *)data, size, &snapshot.snap, r);
    if (!terminated(r->error, sizeof(r->error)) || !terminated(r->ns, sizeof(r->ns)) ||
        !terminated(r->kind, sizeof(r->kind)) ||
        !terminated(r->api_version, sizeof(r->api_version)) ||
        !terminated(r->name, sizeof(r->name)) || !terminated(r->uid, sizeof(r->uid)) ||
        !terminated(r->operation, sizeof(r->operation)))
        fail("a string field is not terminated", r);
    if (rc == K_OK) {
        check_response(r, data, size);
    } else if (rc == K_EPARSE) {
        if (r->response || !r->error[0])
            fail("K_EPARSE with a response or without a reason", r);
    } else if (rc != K_ENOMEM) {
        fprintf(stderr, "admission_handle returned %d\n", rc);
        abort();
    }
    check_same_as_full(r, rc, data, size);
    admission_result_cleanup(r);
    admission_result_cleanup(r);
    free(r);
    return 0;
}
