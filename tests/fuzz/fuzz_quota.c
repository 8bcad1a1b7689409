/*
 * fuzz_quota.c - libFuzzer target for the quota refusals (core/classify/quota.c) and the Event
 * projection (core/kube/project_event.c).
 *
 * The first byte picks the input's shape. 0x80 and above: the rest is a core/v1 Event in JSON,
 * projected by project_event and read both as a pod's claim refused (quota_claim_event) and as an
 * owner's pods refused (quota_owner_event). Below: the rest is a raw message given to quota_parse
 * (with and without the GPU key test), as many bytes as fit a message buffer of
 * QUOTA_MESSAGE_SCAN + 1 bytes, with a terminator.
 *
 * Besides the sanitizers, the target checks what quota.h promises: every field terminated within
 * its buffer, a refusal with a key and at least one key counted, the same answer twice, the
 * detail lines terminated within their buffers, and a refusal found with the GPU key test is one
 * found without it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fuzz_input.h"

#include "classify/quota.h"
#include "kube/project.h"
#include "model/gpu.h"
#include "util/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_quota: %s\n", what);
        abort();
    }
}

static void check_refusal(const struct quota_refusal *q)
{
    check(memchr(q->quota, 0, sizeof(q->quota)) != NULL, "quota terminated");
    check(memchr(q->key, 0, sizeof(q->key)) != NULL, "key terminated");
    check(memchr(q->requested, 0, sizeof(q->requested)) != NULL, "requested terminated");
    check(memchr(q->used, 0, sizeof(q->used)) != NULL, "used terminated");
    check(memchr(q->limited, 0, sizeof(q->limited)) != NULL, "limited terminated");
    check(memchr(q->pod_claim, 0, sizeof(q->pod_claim)) != NULL, "pod claim terminated");
    check(q->quota[0] != '\0', "a quota name");
    check(q->key[0] != '\0' && q->n_keys >= 1, "a key");
}

static struct gpu_set gpus, classes;

static bool key_is_gpu(void *ctx, const char *key)
{
    (void)ctx;
    return quota_key_is_gpu(key, &gpus, &classes);
}

static void read_event(const uint8_t *data, size_t size)
{
    json_object *obj = fuzz_json(data, size);
    struct kevent ev;
    if (!obj || project_event(obj, &ev) != K_OK) {
        json_object_put(obj);
        return;
    }
    json_object_put(obj);
    struct quota_refusal a, b;
    bool got = quota_claim_event(&ev, &a);
    check(got == quota_claim_event(&ev, &b), "claim: the same answer twice");
    if (got) {
        check_refusal(&a);
        check(memcmp(&a, &b, sizeof(a)) == 0, "claim: the same refusal twice");
        check(a.pod_claim[0] != '\0', "claim: a pod claim");
        struct kpod pod = {.name = "p"};
        check(!quota_claim_current(&pod, &a), "no claims: not current");
        char detail[1024];
        struct line l = {.buf = detail, .cap = sizeof(detail)};
        quota_put_claim(&l, &a);
        line_finish(&l);
        check(memchr(detail, 0, sizeof(detail)) != NULL, "claim detail terminated");
    }
    struct quota_owner o, p;
    got = quota_owner_event(&ev, &gpus, &classes, &o);
    check(got == quota_owner_event(&ev, &gpus, &classes, &p), "owner: the same answer twice");
    if (got) {
        check_refusal(&o.q);
        check(memcmp(&o, &p, sizeof(o)) == 0, "owner: the same refusal twice");
        check(o.kind < QUOTA_OWNER_KINDS, "owner: a known kind");
        check(quota_key_is_gpu(o.q.key, &gpus, &classes), "owner: a GPU key");
        char detail[1024];
        struct line l = {.buf = detail, .cap = sizeof(detail)};
        quota_put_owner(&l, &o);
        line_finish(&l);
        check(memchr(detail, 0, sizeof(detail)) != NULL, "owner detail terminated");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready) {
        check(gpu_set_parse(&gpus, GPU_SET_DEFAULT) == K_OK, "GPU set");
        check(gpu_set_parse(&classes, DRA_GPU_SET_DEFAULT) == K_OK, "class set");
        ready = true;
    }
    if (size < 1)
        return 0;
    if (data[0] >= 0x80) {
        read_event(data + 1, size - 1);
        return 0;
    }
    static char msg[QUOTA_MESSAGE_SCAN + 1];
    size_t n = size - 1 < QUOTA_MESSAGE_SCAN ? size - 1 : QUOTA_MESSAGE_SCAN;
    memcpy(msg, data + 1, n);
    msg[n] = '\0';
    struct quota_refusal any, again, gpu;
    bool got = quota_parse(msg, NULL, NULL, &any);
    check(got == quota_parse(msg, NULL, NULL, &again), "parse: the same answer twice");
    if (got) {
        check_refusal(&any);
        check(memcmp(&any, &again, sizeof(any)) == 0, "parse: the same refusal twice");
    }
    if (quota_parse(msg, key_is_gpu, NULL, &gpu)) {
        check(got, "a GPU refusal is a refusal");
        check_refusal(&gpu);
        check(gpu.n_keys == any.n_keys, "the same keys counted");
        check(strcmp(gpu.quota, any.quota) == 0, "the same quota");
    }
    return 0;
}
