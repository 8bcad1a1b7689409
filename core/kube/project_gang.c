/* project_gang.c - gang objects and a pod's gang link from JSON (kube/project_gang.h). */
#include "kube/project_gang.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "util/result.h"

/* A link name: set, and short enough to be a name the API server accepts. */
static const char *link_name(const char *s)
{
    return s && *s && strlen(s) < GANG_NAME_MAX ? s : NULL;
}

int project_pod_gang(json_object *meta, json_object *spec, struct pod_gang **out)
{
    *out = NULL;
    enum gang_kind kind = GANG_NONE;
    const char *name = NULL, *sub = NULL, *replica = NULL;
    json_object *sg = kube_json_get(spec, "schedulingGroup", json_type_object);
    json_object *wr = kube_json_get(spec, "workloadRef", json_type_object);
    json_object *ann = kube_json_get(meta, "annotations", json_type_object);
    if ((name = link_name(kube_json_str(sg, "podGroupName")))) {
        kind = GANG_PODGROUP;
    } else if ((name = link_name(kube_json_str(wr, "name")))) {
        kind = GANG_WORKLOAD;
        sub = link_name(kube_json_str(wr, "podGroup"));
        replica = link_name(kube_json_str(wr, "podGroupReplicaKey"));
    } else if ((name = link_name(kube_json_str(ann, "pod-group-name")))) {
        kind = GANG_KAI;
    } else if ((name = link_name(kube_json_str(ann, "scheduling.k8s.io/group-name"))) ||
               (name = link_name(kube_json_str(ann, "scheduling.volcano.sh/group-name")))) {
        kind = GANG_VOLCANO;
    } else {
        return K_OK;
    }
    struct pod_gang *g = calloc(1, sizeof(*g));
    if (!g || !(g->name = strdup(name)) || (sub && !(g->sub = strdup(sub))) ||
        (replica && !(g->replica = strdup(replica)))) {
        pod_gang_free(g);
        return K_ENOMEM;
    }
    g->kind = kind;
    *out = g;
    return K_OK;
}

static void copy(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

static int64_t clamp_min(int64_t v)
{
    return v < 0 ? 0 : v > GANG_MAX_MIN ? GANG_MAX_MIN : v;
}

/* KAI status.schedulingConditions[].reasons[]: the first queue reason (gang.h). */
static void kai_queue_reason(json_object *status, struct gang_group *out)
{
    static const char *const queue_reasons[] = {"NonPreemptibleOverQuota", "OverLimit",
                                                "QueueDoesNotExist"};
    json_object *conds = kube_json_get(status, "schedulingConditions", json_type_array);
    size_t n = conds ? json_object_array_length(conds) : 0;
    for (size_t i = 0; i < n && i < 64; i++) {
        json_object *reasons =
            kube_json_get(json_object_array_get_idx(conds, i), "reasons", json_type_array);
        size_t m = reasons ? json_object_array_length(reasons) : 0;
        for (size_t j = 0; j < m && j < 64; j++) {
            json_object *r = json_object_array_get_idx(reasons, j);
            const char *reason = kube_json_str(r, "reason");
            for (size_t q = 0; reason && q < sizeof(queue_reasons) / sizeof(*queue_reasons); q++)
                if (strcmp(reason, queue_reasons[q]) == 0) {
                    copy(out->queue_reason, sizeof(out->queue_reason), reason);
                    copy(out->queue_message, sizeof(out->queue_message),
                         kube_json_str(r, "message"));
                    return;
                }
        }
    }
}

/* spec.subGroups[] (KAI) or spec.podGroups[] (1.35 Workload): counted, the first kept. */
static void subs(json_object *list, enum gang_kind k, struct gang_group *out)
{
    size_t n = list ? json_object_array_length(list) : 0;
    out->n_subs = n;
    for (size_t i = 0; i < n && i < GANG_MAX_SUBGROUPS; i++) {
        json_object *s = json_object_array_get_idx(list, i);
        copy(out->subs[i].name, sizeof(out->subs[i].name), kube_json_str(s, "name"));
        if (k == GANG_KAI) {
            out->subs[i].min = clamp_min(kube_json_int(s, "minMember", 0));
        } else {
            json_object *gang = kube_json_get(kube_json_get(s, "policy", json_type_object), "gang",
                                              json_type_object);
            out->subs[i].min = gang ? clamp_min(kube_json_int(gang, "minCount", 0)) : 0;
        }
    }
}

int project_gang_group(json_object *obj, enum gang_kind k, struct gang_group *out)
{
    memset(out, 0, sizeof(*out));
    json_object *meta = kube_json_get(obj, "metadata", json_type_object);
    const char *name = kube_json_str(meta, "name");
    if (!name || (int)k <= 0 || k >= GANG_KIND_COUNT)
        return K_EPARSE;
    out->kind = k;
    copy(out->ns, sizeof(out->ns), kube_json_str(meta, "namespace"));
    copy(out->name, sizeof(out->name), name);
    copy(out->uid, sizeof(out->uid), kube_json_str(meta, "uid"));
    json_object *spec = kube_json_get(obj, "spec", json_type_object);
    json_object *status = kube_json_get(obj, "status", json_type_object);
    switch (k) {
    case GANG_KAI:
        out->min = clamp_min(kube_json_int(spec, "minMember", 0));
        out->gang = true;
        copy(out->queue, sizeof(out->queue), kube_json_str(spec, "queue"));
        subs(kube_json_get(spec, "subGroups", json_type_array), k, out);
        kai_queue_reason(status, out);
        break;
    case GANG_VOLCANO:
        out->min = clamp_min(kube_json_int(spec, "minMember", 0));
        out->gang = true;
        copy(out->queue, sizeof(out->queue), kube_json_str(spec, "queue"));
        copy(out->phase, sizeof(out->phase), kube_json_str(status, "phase"));
        break;
    case GANG_WORKLOAD:
        subs(kube_json_get(spec, "podGroups", json_type_array), k, out);
        out->gang = true;
        break;
    case GANG_PODGROUP: {
        json_object *gang = kube_json_get(kube_json_get(spec, "schedulingPolicy", json_type_object),
                                          "gang", json_type_object);
        out->gang = gang != NULL;
        out->min = gang ? clamp_min(kube_json_int(gang, "minCount", 0)) : 0;
        break;
    }
    default:
        break;
    }
    return K_OK;
}
