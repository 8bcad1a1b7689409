/*
 * fuzz_workload.c - libFuzzer target for a Kueue Workload read from the network: the projection
 * (core/kube/project_workload.c), the store (core/cache/workload_store.c) and the queue word's
 * detail (core/classify/queue.c).
 *
 * The input is a Workload in JSON. Besides the sanitizers, the target checks what the headers
 * promise: at most WORKLOAD_MAX_OWNERS owners, every kept string at most WORKLOAD_MAX_TEXT bytes
 * of valid UTF-8, the Workload found again by each owner's uid once stored, and a detail within
 * its buffer, terminated, valid UTF-8.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fuzz_input.h"

#include "cache/workload_store.h"
#include "classify/queue.h"
#include "kube/project_workload.h"
#include "util/result.h"
#include "util/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_workload: %s\n", what);
        abort();
    }
}

static void check_text(const char *s, size_t cap, const char *what)
{
    if (!s)
        return;
    size_t n = strnlen(s, cap + 1);
    check(n <= cap, what);
    struct utf8_stream st;
    utf8_stream_init(&st);
    check(utf8_stream_valid_prefix(&st, s, n) == n && utf8_stream_complete(&st), what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    json_object *obj = fuzz_json(data, size);
    struct kworkload w;
    int rc = project_workload(obj, &w);
    json_object_put(obj);
    if (rc != K_OK)
        return 0;
    check(w.n_owners <= WORKLOAD_MAX_OWNERS, "owners past the bound");
    const char *texts[] = {w.ns,
                           w.name,
                           w.uid,
                           w.queue_name,
                           w.cluster_queue,
                           w.quota_reserved.reason,
                           w.quota_reserved.message,
                           w.admitted.reason,
                           w.admitted.message};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        check_text(texts[i], WORKLOAD_MAX_TEXT, "a kept text past the bound or not UTF-8");
    char detail[1024];
    struct line l = {.buf = detail, .cap = sizeof(detail)};
    bool waits = queue_kueue_waiting(&w, &l);
    line_finish(&l);
    if (waits)
        check_text(detail, sizeof(detail) - 1, "the detail past its buffer or not UTF-8");
    char *owners[WORKLOAD_MAX_OWNERS];
    size_t n = w.n_owners;
    for (size_t i = 0; i < n; i++)
        owners[i] = w.owners[i].uid ? strdup(w.owners[i].uid) : NULL;
    struct workload_store *ws = workload_store_new();
    if (ws && workload_store_upsert(ws, &w, NULL) == K_OK) {
        workload_store_read_lock(ws);
        for (size_t i = 0; i < n; i++)
            if (owners[i] && *owners[i])
                check(workload_store_for_pod(ws, owners[i], NULL) != NULL,
                      "a stored Workload not found by its owner's uid");
        workload_store_read_unlock(ws);
    } else {
        workload_cleanup(&w);
    }
    workload_store_free(ws);
    for (size_t i = 0; i < n; i++)
        free(owners[i]);
    return 0;
}
