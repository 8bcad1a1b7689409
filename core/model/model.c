/* model.c - helpers and cleanup for the compact object projections. */
#include "model.h"

#include <stdlib.h>
#include <string.h>

#include "model/containers.h"
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
    /* the GPU requests' entries after the four, aligned, then their names */
    struct resource_list *req = &p->gpu_requests;
    size_t items_at = 0;
    if (req->n) {
        items_at = (total + _Alignof(struct resource_amount) - 1) &
                   ~(_Alignof(struct resource_amount) - 1);
        total = items_at + req->n * sizeof(*req->items);
        for (size_t i = 0; i < req->n; i++)
            total += strlen(req->items[i].name) + 1;
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
    if (req->n) {
        struct resource_amount *items = (struct resource_amount *)(void *)(block + items_at);
        at = (char *)(items + req->n);
        for (size_t i = 0; i < req->n; i++) {
            size_t n = strlen(req->items[i].name) + 1;
            memcpy(at, req->items[i].name, n);
            items[i] = (struct resource_amount){.name = at, .value = req->items[i].value};
            at += n;
        }
        size_t n = req->n;
        resource_list_cleanup(req);
        req->items = items;
        req->n = n;
    }
    p->packed = block;
    return K_OK;
}

bool model_str_equal(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool kvs_equal(const struct kv_list *a, const struct kv_list *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (!model_str_equal(a->items[i].key, b->items[i].key) ||
            !model_str_equal(a->items[i].value, b->items[i].value))
            return false;
    return true;
}

static bool amounts_equal(const struct resource_list *a, const struct resource_list *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (!model_str_equal(a->items[i].name, b->items[i].name) ||
            a->items[i].value != b->items[i].value)
            return false;
    return true;
}

static bool requirements_equal(const struct selector_requirement *a,
                               const struct selector_requirement *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!model_str_equal(a[i].key, b[i].key) || a[i].op != b[i].op ||
            a[i].n_values != b[i].n_values)
            return false;
        for (size_t j = 0; j < a[i].n_values; j++)
            if (!model_str_equal(a[i].values[j], b[i].values[j]))
                return false;
    }
    return true;
}

static bool affinity_equal(const struct node_affinity *a, const struct node_affinity *b)
{
    if (a->present != b->present || a->n_terms != b->n_terms)
        return false;
    for (size_t i = 0; i < a->n_terms; i++) {
        const struct selector_term *x = &a->terms[i], *y = &b->terms[i];
        if (x->n_exprs != y->n_exprs || x->n_fields != y->n_fields ||
            !requirements_equal(x->exprs, y->exprs, x->n_exprs) ||
            !requirements_equal(x->fields, y->fields, x->n_fields))
            return false;
    }
    return true;
}

static bool tolerations_equal(const struct kpod *a, const struct kpod *b)
{
    if (a->n_tolerations != b->n_tolerations)
        return false;
    for (size_t i = 0; i < a->n_tolerations; i++) {
        const struct toleration *x = &a->tolerations[i], *y = &b->tolerations[i];
        if (!model_str_equal(x->key, y->key) || !model_str_equal(x->op, y->op) ||
            !model_str_equal(x->value, y->value) || !model_str_equal(x->effect, y->effect))
            return false;
    }
    return true;
}

static bool claims_equal(const struct kpod *a, const struct kpod *b)
{
    if (a->n_claims != b->n_claims || a->n_claim_statuses != b->n_claim_statuses)
        return false;
    for (size_t i = 0; i < a->n_claims; i++) {
        const struct pod_claim_ref *x = &a->claims[i], *y = &b->claims[i];
        if (!model_str_equal(x->name, y->name) || !model_str_equal(x->claim_name, y->claim_name) ||
            !model_str_equal(x->template_name, y->template_name))
            return false;
    }
    for (size_t i = 0; i < a->n_claim_statuses; i++) {
        const struct pod_claim_status *x = &a->claim_statuses[i], *y = &b->claim_statuses[i];
        if (!model_str_equal(x->name, y->name) || !model_str_equal(x->claim_name, y->claim_name))
            return false;
    }
    return true;
}

static bool gates_equal(const struct kpod *a, const struct kpod *b)
{
    if (a->n_scheduling_gates != b->n_scheduling_gates ||
        !a->scheduling_gates != !b->scheduling_gates)
        return false;
    size_t n = a->n_scheduling_gates < POD_MAX_SCHEDULING_GATES ? a->n_scheduling_gates
                                                                : POD_MAX_SCHEDULING_GATES;
    for (size_t i = 0; a->scheduling_gates && i < n; i++)
        if (!model_str_equal(a->scheduling_gates[i], b->scheduling_gates[i]))
            return false;
    return true;
}

/* A field added to struct kpod must be compared in pod_equal() (a field it misses would let the
 * store keep an old value): this fails to build until the size below is updated with it. */
_Static_assert(sizeof(void *) != 8 || sizeof(struct kpod) == 296,
               "struct kpod changed: compare the new field in pod_equal(), then update the size");

bool pod_equal(const struct kpod *a, const struct kpod *b)
{
    return model_str_equal(a->ns, b->ns) && model_str_equal(a->name, b->name) &&
           model_str_equal(a->uid, b->uid) && model_str_equal(a->node_name, b->node_name) &&
           model_str_equal(a->scheduler_name, b->scheduler_name) &&
           model_str_equal(a->runtime_class, b->runtime_class) && a->phase == b->phase &&
           a->deleting == b->deleting && amounts_equal(&a->gpu_requests, &b->gpu_requests) &&
           kvs_equal(&a->node_selector, &b->node_selector) &&
           affinity_equal(&a->affinity, &b->affinity) && tolerations_equal(a, b) &&
           a->scheduled.status == b->scheduled.status &&
           model_str_equal(a->scheduled.reason, b->scheduled.reason) &&
           model_str_equal(a->scheduled.message, b->scheduled.message) &&
           model_str_equal(a->cause, b->cause) && model_str_equal(a->detail, b->detail) &&
           claims_equal(a, b) && a->created == b->created &&
           model_str_equal(a->owner_uid, b->owner_uid) &&
           model_str_equal(a->failed_reason, b->failed_reason) &&
           model_str_equal(a->failed_message, b->failed_message) && gates_equal(a, b) &&
           model_str_equal(a->nominated_node, b->nominated_node) &&
           a->pvc_volumes == b->pvc_volumes &&
           model_str_equal(a->vendor_resource, b->vendor_resource) &&
           pod_ext_equal(a->ext, b->ext) && pod_gang_equal(a->gang, b->gang) &&
           pod_containers_equal(a->containers, b->containers);
}

bool pod_equal_but_scheduled_message(const struct kpod *a, const struct kpod *b)
{
    struct kpod same = *b; /* a shallow view for the comparison; owns nothing */
    same.scheduled.message = a->scheduled.message;
    return pod_equal(a, &same);
}

void pod_cleanup(struct kpod *p)
{
    if (!p)
        return;
    if (p->packed) {
        free(p->packed); /* the names and the GPU requests with them (pod_pack_names) */
    } else {
        free(p->ns);
        free(p->name);
        free(p->uid);
        free(p->node_name);
        resource_list_cleanup(&p->gpu_requests);
    }
    free(p->scheduler_name);
    free(p->runtime_class);
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
    pod_ext_free(p->ext);
    pod_gang_free(p->gang);
    pod_containers_free(p->containers);
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

enum cond_status cond_status_parse(const char *s)
{
    if (!s)
        return COND_ABSENT;
    if (strcmp(s, "True") == 0)
        return COND_TRUE;
    if (strcmp(s, "False") == 0)
        return COND_FALSE;
    return COND_UNKNOWN;
}
