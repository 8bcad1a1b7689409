/* gang.c - gang kinds and the pod's link (model/gang.h). */
#include "model/gang.h"

#include <stdlib.h>
#include <string.h>

#include "model/model.h"

static const struct {
    const char *name, *group, *version, *resource, *kind;
} kinds[GANG_KIND_COUNT] = {
    [GANG_NONE] = {"", "", "", "", ""},
    [GANG_KAI] = {"KAI PodGroup", "scheduling.run.ai", "v2alpha2", "podgroups", "PodGroup"},
    [GANG_VOLCANO] = {"Volcano PodGroup", "scheduling.volcano.sh", "v1beta1", "podgroups",
                      "PodGroup"},
    [GANG_WORKLOAD] = {"Workload", "scheduling.k8s.io", "v1alpha1", "workloads", "Workload"},
    [GANG_PODGROUP] = {"PodGroup", "scheduling.k8s.io", "v1beta1", "podgroups", "PodGroup"},
};

const char *gang_kind_name(enum gang_kind k)
{
    return (int)k > 0 && k < GANG_KIND_COUNT ? kinds[k].name : "";
}

bool gang_kind_api(enum gang_kind k, const char **group, const char **version,
                   const char **resource)
{
    if ((int)k <= 0 || k >= GANG_KIND_COUNT)
        return false;
    if (group)
        *group = kinds[k].group;
    if (version)
        *version = kinds[k].version;
    if (resource)
        *resource = kinds[k].resource;
    return true;
}

enum gang_kind gang_kind_of_api_version(const char *api_version, const char *kind)
{
    if (!api_version || !kind)
        return GANG_NONE;
    const char *slash = strchr(api_version, '/');
    size_t glen = slash ? (size_t)(slash - api_version) : 0;
    for (int k = 1; k < GANG_KIND_COUNT; k++)
        if (strlen(kinds[k].group) == glen && strncmp(api_version, kinds[k].group, glen) == 0 &&
            strcmp(kind, kinds[k].kind) == 0)
            return (enum gang_kind)k;
    return GANG_NONE;
}

void pod_gang_free(struct pod_gang *g)
{
    if (!g)
        return;
    free(g->name);
    free(g->sub);
    free(g->replica);
    free(g);
}

bool pod_gang_equal(const struct pod_gang *a, const struct pod_gang *b)
{
    if (!a || !b)
        return a == b;
    return a->kind == b->kind && model_str_equal(a->name, b->name) &&
           model_str_equal(a->sub, b->sub) && model_str_equal(a->replica, b->replica);
}

int64_t gang_group_sub_min(const struct gang_group *g, const char *sub)
{
    size_t kept = g->n_subs < GANG_MAX_SUBGROUPS ? g->n_subs : GANG_MAX_SUBGROUPS;
    for (size_t i = 0; sub && i < kept; i++)
        if (strcmp(g->subs[i].name, sub) == 0)
            return g->subs[i].min;
    return -1;
}

bool gang_event_is_queue(const char *reason, const char *message)
{
    (void)reason;
    if (!message)
        return false;
    return strstr(message, "queue resource quota insufficient") || /* Volcano */
           strstr(message, "NonPreemptibleOverQuota") || strstr(message, "OverLimit") ||
           strstr(message, "QueueDoesNotExist") ||
           strstr(message, "Non-preemptible workload is over quota"); /* KAI */
}

bool gang_event_speaks(const char *reason, const char *message)
{
    return gang_event_is_queue(reason, message) ||
           (reason && (strcmp(reason, "NotReady") == 0 || strcmp(reason, "StaleJob") == 0));
}
