/*
 * fuzz_gang.c - libFuzzer target for the gang objects read from the network: a KAI or Volcano
 * PodGroup, an upstream PodGroup or Workload (core/kube/project_gang.c project_gang_group, every
 * kind), a pod's link to its group (project_pod_gang), an Event on the group (the gang store,
 * core/cache/gang_store.c) and the gang word's detail (core/classify/gang.c).
 *
 * The input is one JSON object read as each kind of group and as a pod (its metadata and spec);
 * its "reason" and "message" members, when strings, are an Event on the group. Besides the
 * sanitizers, the target checks what the headers promise: minMember / minCount and the kept
 * sub-groups' minimums within [0, GANG_MAX_MIN], at most GANG_MAX_SUBGROUPS sub-groups kept,
 * every kept string terminated within its field, the group found again in the store, and a
 * detail within its buffer, terminated.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fuzz_input.h"

#include "cache/gang_store.h"
#include "classify/gang.h"
#include "classify/line.h"
#include "kube/json.h"
#include "kube/project_gang.h"
#include "util/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_gang: %s\n", what);
        abort();
    }
}

#define ENDS(f) check(memchr((f), '\0', sizeof(f)) != NULL, "a kept string not terminated: " #f)

static void check_group(const struct gang_group *g)
{
    ENDS(g->ns);
    ENDS(g->name);
    ENDS(g->uid);
    ENDS(g->queue);
    ENDS(g->phase);
    ENDS(g->queue_reason);
    ENDS(g->queue_message);
    check(g->min >= 0 && g->min <= GANG_MAX_MIN, "minMember past its clamp");
    size_t kept = g->n_subs < GANG_MAX_SUBGROUPS ? g->n_subs : GANG_MAX_SUBGROUPS;
    for (size_t i = 0; i < kept; i++) {
        ENDS(g->subs[i].name);
        check(g->subs[i].min >= 0 && g->subs[i].min <= GANG_MAX_MIN, "a sub-group past the clamp");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    json_object *obj = fuzz_json(data, size);
    if (!obj)
        return 0;
    struct pod_gang *link = NULL;
    json_object *meta = kube_json_get(obj, "metadata", json_type_object);
    json_object *spec = kube_json_get(obj, "spec", json_type_object);
    if (project_pod_gang(meta, spec, &link) != K_OK)
        link = NULL;
    const char *reason = kube_json_str(obj, "reason");
    const char *message = kube_json_str(obj, "message");
    struct gang_store *s = gang_store_new();
    for (int k = 1; s && k < GANG_KIND_COUNT; k++) {
        struct gang_group g;
        if (project_gang_group(obj, (enum gang_kind)k, &g) != K_OK)
            continue;
        check_group(&g);
        check(gang_store_put(s, &g, NULL) == K_OK, "a group refused by an empty store");
        gang_store_set_read(s, (enum gang_kind)k, true);
        if (reason || message)
            (void)gang_store_event(s, (enum gang_kind)k, g.ns, g.name, reason, message,
                                   kube_json_int(obj, "at", 0));
        /* a pod of the group, or the input's own link */
        struct pod_gang own = {.kind = (enum gang_kind)k, .name = g.name};
        struct kpod pod = {.ns = g.ns, .name = "p", .gang = link ? link : &own};
        struct gang_facts f;
        memset(&f, 0, sizeof(f));
        if (gang_store_facts(s, &pod, &f)) {
            if (pod.gang == &own)
                check(f.found, "a stored group not found again");
            f.exist = (size_t)kube_json_int(obj, "exist", 0);
            f.gated = (size_t)kube_json_int(obj, "gated", 0);
            char detail[1024];
            struct line l = {.buf = detail, .cap = sizeof(detail)};
            (void)gang_word(&pod, &f, &l);
            line_finish(&l);
            check(memchr(detail, '\0', sizeof(detail)) != NULL, "the detail past its buffer");
        }
    }
    gang_store_free(s);
    pod_gang_free(link);
    json_object_put(obj);
    return 0;
}
