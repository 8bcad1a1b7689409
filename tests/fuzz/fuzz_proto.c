/*
 * fuzz_proto.c - libFuzzer target for the protobuf reader (core/kube/proto.c) and the usage
 * projection of a Pod (core/kube/project_proto.c).
 *
 * The input is a LIST response body as the API server sends it in protobuf ("k8s\0", then a
 * runtime.Unknown around a PodList or NodeList). Every item is projected with
 * project_pod_usage_proto and with project_node_proto; the
 * Status reader and a raw walk of the body with pb_next run on it too. Checks, beyond the
 * sanitizers: a projected pod has a name; a GPU request is above zero; a walk with pb_next reads
 * at most one field per byte; and the items, resourceVersion and continue are the same when the
 * body is read twice. A difference aborts.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/project.h"
#include "kube/proto.h"
#include "model/gpu.h"
#include "util/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct gpu_set gpus;

struct seen {
    size_t items;
    uint64_t sum; /* of the item lengths and of what projected */
};

static int on_item(void *ctx, const uint8_t *bytes, size_t len)
{
    struct seen *s = ctx;
    s->items++;
    s->sum += len;
    struct kpod p;
    int rc = project_pod_usage_proto(bytes, len, &gpus, &p);
    if (rc == K_OK) {
        if (!p.name)
            abort();
        for (size_t i = 0; i < p.gpu_requests.n; i++) {
            if (p.gpu_requests.items[i].value <= 0)
                abort();
            s->sum += (uint64_t)p.gpu_requests.items[i].value;
        }
        pod_cleanup(&p);
    } else if (rc != K_EPARSE && rc != K_ETOOBIG && rc != K_ENOMEM) {
        abort();
    }
    struct knode n;
    rc = project_node_proto(bytes, len, &gpus, &n);
    if (rc == K_OK) {
        if (!n.name)
            abort();
        for (size_t i = 0; i < n.n_taints; i++)
            if (!n.taints[i].key || !n.taints[i].value || !n.taints[i].effect)
                abort();
        s->sum += n.labels.n + n.n_taints + n.capacity.n + n.allocatable.n;
        node_cleanup(&n);
    } else if (rc != K_EPARSE && rc != K_ETOOBIG && rc != K_ENOMEM) {
        abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!gpus.n && gpu_set_parse(&gpus, GPU_SET_DEFAULT) != K_OK)
        abort();
    struct seen a = {0}, b = {0};
    char rv1[128], cont1[128], rv2[128], cont2[128];
    int r1 = kube_proto_list(data, size, on_item, &a, rv1, cont1, sizeof(rv1));
    int r2 = kube_proto_list(data, size, on_item, &b, rv2, cont2, sizeof(rv2));
    if (r1 != r2 || a.items != b.items || a.sum != b.sum)
        abort();
    if (r1 == K_OK && (strcmp(rv1, rv2) != 0 || strcmp(cont1, cont2) != 0))
        abort();
    char msg[64];
    if (kube_proto_status_message(data, size, msg, sizeof(msg)) && strlen(msg) >= sizeof(msg))
        abort();
    struct pb_reader r;
    struct pb_field f;
    pb_reader_init(&r, data, size);
    size_t fields = 0;
    while (pb_next(&r, &f))
        if (++fields > size)
            abort();
    return 0;
}
