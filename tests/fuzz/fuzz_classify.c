/*
 * fuzz_classify.c - libFuzzer target for the Pod/Node projection (core/kube/project.c) and the
 * classifier (core/classify/classify.c).
 *
 * The input is JSON in the shape of tests/fixtures/classify: {"nodes": [Node...], "pods":
 * [Pod...]}. Every node and pod is projected with the default GPU set, then every projected pod
 * is classified against the projected nodes, usage summed over the other bound, non-terminal
 * pods; an optional "events": [{"reason", "message"}...] are the kubelet's Events on every bound
 * pod (the after-placement steps, classify/placement.h). (project_pod_spec, the webhook's entry,
 * is reached through fuzz_admission.) Besides the
 * sanitizers, the target checks what classify.h promises: K_OK, a known cause, a NUL-terminated
 * detail without control characters (and with its UTF-8 sequences whole when the input's are),
 * verdicts and counts that add up to the candidates, a deciding node among the inputs, and the same
 * answer on a second call.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "classify/classify.h"
#include "classify/placement.h"
#include "kube/project.h"
#include "model/gpu.h"
#include "util/result.h"

#define MAX_OBJECTS 64 /* nodes and pods taken from one input; the rest are ignored */
#define JSON_DEPTH 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct world {
    struct knode nodes[MAX_OBJECTS];
    size_t n_nodes;
    struct kpod pods[MAX_OBJECTS];
    size_t n_pods;
    size_t target;
    struct placement_event events[PLACEMENT_MAX_EVENTS];
    struct placement_facts placement;
};

static struct gpu_set gpus;
static bool input_utf8; /* the input is UTF-8 and escapes nothing with \u */

/* Every multi-byte sequence whole: a lead byte followed by its continuation bytes. */
static bool utf8_whole(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t k = c < 0x80                ? 0
                   : c >= 0xC2 && c < 0xE0 ? 1
                   : c >= 0xE0 && c < 0xF0 ? 2
                   : c >= 0xF0 && c < 0xF5 ? 3
                                           : SIZE_MAX;
        if (k == SIZE_MAX || n - i - 1 < k)
            return false;
        for (size_t j = 1; j <= k; j++)
            if ((s[i + j] & 0xC0) != 0x80)
                return false;
        i += k + 1;
    }
    return true;
}

static int64_t usage(void *ctx, const char *node, const char *resource)
{
    const struct world *w = ctx;
    int64_t sum = 0;
    for (size_t i = 0; i < w->n_pods; i++) {
        const struct kpod *p = &w->pods[i];
        if (i == w->target || !p->node_name || strcmp(p->node_name, node) != 0 ||
            pod_is_terminal(p))
            continue;
        if (__builtin_add_overflow(sum, resource_list_get(&p->gpu_requests, resource), &sum))
            sum = INT64_MAX;
    }
    return sum;
}

static void fail(const char *what, const struct classify_result *r)
{
    fprintf(stderr, "classify: %s (cause %d, detail \"%s\")\n", what, (int)r->cause, r->detail);
    abort();
}

static void check(const struct world *w, const struct knode *const *ptrs)
{
    struct node_verdict verdicts[MAX_OBJECTS + 1];
    struct classify_input in = {
        .pod = &w->pods[w->target],
        .nodes = ptrs,
        .n_nodes = w->n_nodes,
        .usage = usage,
        .usage_ctx = (void *)w,
        .now = 1764547200, /* 2025-12-01T00:00:00Z, seconds */
        .placement = w->placement.n_events ? &w->placement : NULL,
    };
    struct classify_result r = {.verdicts = verdicts};
    if (classify(&in, &r) != K_OK)
        fail("did not return K_OK", &r);
    /* no DRA view here: the DRA words cannot come out; binding and binding-failed can (PVC
     * volumes, the scheduler's binding error) */
    bool before_nodes = (r.cause >= CAUSE_NODE_REJECTED && r.cause <= CAUSE_PREEMPTING) ||
                        r.cause == CAUSE_BINDING || r.cause == CAUSE_BINDING_FAILED ||
                        (r.cause >= CAUSE_RUNTIME_MISSING && r.cause <= CAUSE_GANG_WAITING);
    /* no autoscaler records here: scaling-up comes only from a candidate still joining, over a
     * per-node word, which ladder_cause keeps; otherwise the two are one */
    enum cause word = r.ladder_cause;
    if (r.cause == CAUSE_SCALING_UP) {
        if (word < CAUSE_LABEL_MISMATCH || word > CAUSE_GPU_FITS)
            fail("scaling-up over a word that is not a per-node one", &r);
    } else if (word != r.cause) {
        fail("ladder_cause differs without an autoscaler's word", &r);
    }
    if (((int)word < CAUSE_NO_REQUEST || word > CAUSE_GPU_FITS) && !before_nodes)
        fail("unknown cause", &r);
    if (cause_from_word(cause_word(r.cause)) != (int)r.cause)
        fail("a cause whose word does not map back", &r);
    size_t len = strnlen(r.detail, sizeof(r.detail));
    if (len == sizeof(r.detail))
        fail("detail not terminated", &r);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)r.detail[i];
        if (c < 0x20 || c == 0x7f)
            fail("control character in the detail", &r);
    }
    if (input_utf8 && !utf8_whole((const unsigned char *)r.detail, len))
        fail("a UTF-8 sequence cut in the detail", &r);
    if (r.n_candidates > w->n_nodes || r.n_verdicts != r.n_candidates)
        fail("more candidates than nodes, or verdicts missing", &r);
    if (before_nodes) {
        if (r.n_candidates != 0)
            fail("a word decided before node filtering with candidates", &r);
    } else if (word >= CAUSE_TAINT) {
        size_t sum = 0;
        for (int c = CAUSE_TAINT; c <= CAUSE_GPU_FITS; c++)
            sum += r.counts[c];
        if (sum != r.n_candidates || r.n_candidates == 0)
            fail("per-outcome counts do not add up to the candidates", &r);
        bool found = false;
        for (size_t i = 0; i < w->n_nodes && !found; i++)
            found = r.closest.node == ptrs[i];
        if (!found || r.closest.step != word)
            fail("the deciding node is not an input node or disagrees with the cause", &r);
    } else if (r.n_candidates != 0 && word == CAUSE_LABEL_MISMATCH) {
        fail("label-mismatch with candidates", &r);
    }
    for (size_t i = 0; i < r.n_verdicts; i++)
        if (verdicts[i].step < CAUSE_TAINT || verdicts[i].step > CAUSE_GPU_FITS)
            fail("a verdict with a step off the per-node ladder", &r);

    struct classify_result again = {.verdicts = NULL};
    if (classify(&in, &again) != K_OK || again.cause != r.cause ||
        strcmp(again.detail, r.detail) != 0 || again.n_candidates != r.n_candidates)
        fail("a second call answers differently", &r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready) {
        if (gpu_set_parse(&gpus, GPU_SET_DEFAULT) != K_OK)
            abort();
        ready = true;
    }
    if (size > INT32_MAX)
        return 0;
    input_utf8 = utf8_whole(data, size) && !memmem(data, size, "\\u", 2);
    struct json_tokener *tok = json_tokener_new_ex(JSON_DEPTH);
    if (!tok)
        return 0;
    json_object *root = json_tokener_parse_ex(tok, (const char *)data, (int)size);
    json_tokener_free(tok);
    if (!root)
        return 0;

    struct world *w = calloc(1, sizeof(*w));
    if (!w)
        abort();
    json_object *nodes = NULL, *pods = NULL, *events = NULL;
    json_object_object_get_ex(root, "nodes", &nodes);
    json_object_object_get_ex(root, "pods", &pods);
    json_object_object_get_ex(root, "events", &events);
    size_t ne = json_object_is_type(events, json_type_array) ? json_object_array_length(events) : 0;
    for (size_t i = 0; i < ne && w->placement.n_events < PLACEMENT_MAX_EVENTS; i++) {
        json_object *e = json_object_array_get_idx(events, i), *reason = NULL, *message = NULL;
        if (!json_object_object_get_ex(e, "reason", &reason) ||
            !json_object_is_type(reason, json_type_string))
            continue;
        json_object_object_get_ex(e, "message", &message);
        w->events[w->placement.n_events++] =
            (struct placement_event){.reason = json_object_get_string(reason),
                                     .message = json_object_is_type(message, json_type_string)
                                                    ? json_object_get_string(message)
                                                    : "",
                                     .at = 1764547100};
    }
    w->placement.events = w->events;
    size_t n = json_object_is_type(nodes, json_type_array) ? json_object_array_length(nodes) : 0;
    for (size_t i = 0; i < n && w->n_nodes < MAX_OBJECTS; i++)
        if (project_node(json_object_array_get_idx(nodes, i), &gpus, &w->nodes[w->n_nodes]) == K_OK)
            w->n_nodes++;
    n = json_object_is_type(pods, json_type_array) ? json_object_array_length(pods) : 0;
    for (size_t i = 0; i < n && w->n_pods < MAX_OBJECTS; i++) {
        if (project_pod(json_object_array_get_idx(pods, i), &gpus, &w->pods[w->n_pods]) == K_OK)
            w->n_pods++;
    }

    const struct knode *ptrs[MAX_OBJECTS + 1];
    for (size_t i = 0; i < w->n_nodes; i++)
        ptrs[i] = &w->nodes[i];
    for (w->target = 0; w->target < w->n_pods; w->target++)
        check(w, ptrs);

    for (size_t i = 0; i < w->n_nodes; i++)
        node_cleanup(&w->nodes[i]);
    for (size_t i = 0; i < w->n_pods; i++)
        pod_cleanup(&w->pods[i]);
    free(w);
    json_object_put(root);
    return 0;
}
