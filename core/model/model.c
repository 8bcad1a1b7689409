/* model.c - helpers and cleanup for the compact object projections. */
#include "model.h"

#include <stdlib.h>
#include <string.h>

#include "model/dra.h"
#include "util/result.h"

int64_t resource_list_get(const struct resource_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].name, name) == 0)
            return l->items[i].value;
    return 0;
}

int64_t int64_add_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

int64_t int64_sub_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return b < 0 ? INT64_MAX : INT64_MIN;
    return r;
}

int resource_list_add(struct resource_list *l, const char *name, int64_t value)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->items[i].name, name) == 0) {
            l->items[i].value = int64_add_sat(l->items[i].value, value);
            return K_OK;
        }
    }
    if (l->n >= RESOURCE_LIST_MAX)
        return K_ETOOBIG;
    char *copy = strdup(name);
    if (!copy)
        return K_ENOMEM;
    struct resource_amount *items = realloc(l->items, (l->n + 1) * sizeof(*items));
    if (!items) {
        free(copy);
        return K_ENOMEM;
    }
    l->items = items;
    items[l->n].name = copy;
    items[l->n].value = value;
    l->n++;
    return K_OK;
}

void resource_list_cleanup(struct resource_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i].name);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

const char *kv_list_get(const struct kv_list *l, const char *key)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].key, key) == 0)
            return l->items[i].value;
    return NULL;
}

void kv_list_cleanup(struct kv_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].key);
        free(l->items[i].value);
    }
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

static void requirements_cleanup(struct selector_requirement *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(r[i].key);
        for (size_t j = 0; j < r[i].n_values; j++)
            free(r[i].values[j]);
        free(r[i].values);
    }
    free(r);
}

void node_affinity_cleanup(struct node_affinity *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n_terms; i++) {
        requirements_cleanup(a->terms[i].exprs, a->terms[i].n_exprs);
        requirements_cleanup(a->terms[i].fields, a->terms[i].n_fields);
    }
    free(a->terms);
    memset(a, 0, sizeof(*a));
}

void tolerations_free(struct toleration *t, size_t n)
{
    for (size_t i = 0; t && i < n; i++) {
        free(t[i].key);
        free(t[i].op);
        free(t[i].value);
        free(t[i].effect);
    }
    free(t);
}

int pod_pack_names(struct kpod *p)
{
    if (p->packed)
        return K_OK;
    char **fields[] = {&p->ns, &p->name, &p->uid, &p->node_name};
    size_t len[4], total = 0;
    for (size_t i = 0; i < 4; i++) {
        len[i] = *fields[i] ? strlen(*fields[i]) + 1 : 0;
        total += len[i];
    }
    char *block = malloc(total ? total : 1);
    if (!block)
        return K_ENOMEM;
    char *at = block;
    for (size_t i = 0; i < 4; i++) {
        if (!*fields[i])
            continue;
        memcpy(at, *fields[i], len[i]);
        free(*fields[i]);
        *fields[i] = at;
        at += len[i];
    }
    p->packed = block;
    return K_OK;
}

void pod_cleanup(struct kpod *p)
{
    if (!p)
        return;
    if (p->packed) {
        free(p->packed);
    } else {
        free(p->ns);
        free(p->name);
        free(p->uid);
        free(p->node_name);
    }
    free(p->scheduler_name);
    free(p->runtime_class);
    resource_list_cleanup(&p->gpu_requests);
    kv_list_cleanup(&p->node_selector);
    node_affinity_cleanup(&p->affinity);
    tolerations_free(p->tolerations, p->n_tolerations);
    free(p->scheduled.reason);
    free(p->scheduled.message);
    free(p->cause);
    free(p->detail);
    pod_claim_refs_free(p->claims, p->n_claims);
    pod_claim_statuses_free(p->claim_statuses, p->n_claim_statuses);
    free(p->owner_uid);
    free(p->failed_reason);
    free(p->failed_message);
    size_t gates = p->n_scheduling_gates < POD_MAX_SCHEDULING_GATES ? p->n_scheduling_gates
                                                                    : POD_MAX_SCHEDULING_GATES;
    for (size_t i = 0; p->scheduling_gates && i < gates; i++)
        free(p->scheduling_gates[i]);
    free(p->scheduling_gates);
    free(p->nominated_node);
    memset(p, 0, sizeof(*p));
}

void node_cleanup(struct knode *n)
{
    if (!n)
        return;
    free(n->name);
    kv_list_cleanup(&n->labels);
    for (size_t i = 0; i < n->n_taints; i++) {
        free(n->taints[i].key);
        free(n->taints[i].value);
        free(n->taints[i].effect);
    }
    free(n->taints);
    resource_list_cleanup(&n->capacity);
    resource_list_cleanup(&n->allocatable);
    memset(n, 0, sizeof(*n));
}

bool pod_is_terminal(const struct kpod *p)
{
    return p->phase == POD_PHASE_SUCCEEDED || p->phase == POD_PHASE_FAILED;
}

/* status.reason values of the kubelet's pod admission (model.h pod_rejected_by_kubelet). */
static const char *const admission_reasons[] = {
    "UnexpectedAdmissionError",
    "TopologyAffinityError",
    "UnknownReason",
    "UnexpectedPredicateFailureType",
    "InvalidNodeInfo",
    "NodeAffinity",
    "NodeName",
    "NodePorts",
    "TaintToleration",
    "PodOSSelectorNodeLabelDoesNotMatch",
    "PodOSNotSupported",
    "InitContainerRestartPolicyForbidden",
    "SupplementalGroupsPolicyNotSupported",
    "PodFeatureUnsupported",
    "SysctlForbidden",
    "AppArmor",
    "NodeShutdown",
    "VolumeAttachmentLimitExceeded",
};

bool pod_rejected_by_kubelet(const struct kpod *pod)
{
    if (!pod || !pod->node_name || pod->phase != POD_PHASE_FAILED || !pod->failed_reason)
        return false;
    const char *r = pod->failed_reason;
    if (strncmp(r, "OutOf", 5) == 0 && r[5])
        return true; /* OutOf<resource>: lifecycle.InsufficientResourcePrefix */
    if (strcmp(r, "Evicted") == 0)
        return pod->failed_message &&
               strncmp(pod->failed_message, "The node had condition", 22) == 0;
    for (size_t i = 0; i < sizeof(admission_reasons) / sizeof(admission_reasons[0]); i++)
        if (strcmp(r, admission_reasons[i]) == 0)
            return true;
    return false;
}
