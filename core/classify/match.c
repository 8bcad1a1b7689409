/* match.c - taints against tolerations, and node selection, as the default scheduler does them. */
#include "match.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *str_or_empty(const char *s)
{
    return s ? s : "";
}

bool toleration_tolerates_taint(const struct toleration *tol, const struct taint *taint)
{
    const char *t_effect = str_or_empty(tol->effect);
    const char *t_key = str_or_empty(tol->key);
    const char *op = str_or_empty(tol->op);
    if (*t_effect && strcmp(t_effect, str_or_empty(taint->effect)) != 0)
        return false;
    if (*t_key && strcmp(t_key, str_or_empty(taint->key)) != 0)
        return false;
    if (*op == '\0' || strcmp(op, "Equal") == 0)
        return strcmp(str_or_empty(tol->value), str_or_empty(taint->value)) == 0;
    if (strcmp(op, "Exists") == 0)
        return true;
    return false;
}

bool tolerations_tolerate_taint(const struct toleration *tols, size_t n, const struct taint *taint)
{
    for (size_t i = 0; i < n; i++)
        if (toleration_tolerates_taint(&tols[i], taint))
            return true;
    return false;
}

bool taint_blocks_scheduling(const struct taint *taint)
{
    const char *effect = str_or_empty(taint->effect);
    return strcmp(effect, "NoSchedule") == 0 || strcmp(effect, "NoExecute") == 0;
}

static const struct node_condition_taint node_condition_taints[] = {
    {"node.kubernetes.io/not-ready", "is not ready", "the node controller", "fix the node", false},
    {"node.kubernetes.io/unreachable", "is unreachable", "the node controller", "fix the node",
     false},
    {"node.kubernetes.io/memory-pressure", "has memory pressure", "the node controller",
     "fix the node", false},
    {"node.kubernetes.io/disk-pressure", "has disk pressure", "the node controller", "fix the node",
     false},
    {"node.kubernetes.io/pid-pressure", "has PID pressure", "the node controller", "fix the node",
     false},
    {"node.kubernetes.io/network-unavailable", "has no working network", "the node controller",
     "fix the node", false},
    {TAINT_NODE_UNSCHEDULABLE, "is cordoned", "the node controller", "fix the node", false},
    {"node.kubernetes.io/out-of-service", "is out of service",
     "an administrator after a non-graceful shutdown", "fix the node", false},
    {"node.cloudprovider.kubernetes.io/uninitialized",
     "is not initialized by the cloud controller manager yet", "the kubelet", "fix the node",
     false},
    /* node autoscalers: the node is joining or leaving; the autoscaler adds a node for a pod
     * that fits nowhere else */
    {TAINT_KARPENTER_UNREGISTERED, "is still joining", "Karpenter", "wait for it to register",
     true},
    {"karpenter.sh/disrupted", "is being consolidated or replaced", "Karpenter",
     "wait for another node", true},
    {"karpenter.sh/rebooting", "is rebooting", "Karpenter", "wait for the reboot", true},
    {"ToBeDeletedByClusterAutoscaler", "is being scaled down", "the Cluster Autoscaler",
     "wait for another node", true},
    {"DeletionCandidateOfClusterAutoscaler", "is a scale-down candidate", "the Cluster Autoscaler",
     "wait for another node", true},
};

const struct node_condition_taint *taint_node_condition(const struct taint *taint)
{
    if (!taint || !taint->key)
        return NULL;
    for (size_t i = 0; i < sizeof(node_condition_taints) / sizeof(node_condition_taints[0]); i++)
        if (strcmp(taint->key, node_condition_taints[i].key) == 0)
            return &node_condition_taints[i];
    return NULL;
}

bool taint_is_node_condition(const struct taint *taint)
{
    return taint_node_condition(taint) != NULL;
}

const struct taint *node_first_untolerated_taint(const struct knode *node,
                                                 const struct toleration *tols, size_t n)
{
    for (size_t i = 0; i < node->n_taints; i++) {
        const struct taint *t = &node->taints[i];
        if (taint_blocks_scheduling(t) && !tolerations_tolerate_taint(tols, n, t))
            return t;
    }
    return NULL;
}

bool node_cordon_blocks(const struct knode *node, const struct toleration *tols, size_t n)
{
    if (!node->unschedulable)
        return false;
    struct taint cordon = {
        .key = (char *)TAINT_NODE_UNSCHEDULABLE,
        .value = (char *)"",
        .effect = (char *)"NoSchedule",
    };
    return !tolerations_tolerate_taint(tols, n, &cordon);
}

/* strconv.ParseInt(s, 10, 64): optional sign, digits only, in range. */
static bool parse_int64_strict(const char *s, long long *out)
{
    if (!s || !*s)
        return false;
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (!*p)
        return false;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9')
            return false;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE || !end || *end)
        return false;
    *out = v;
    return true;
}

static bool has_value(const struct selector_requirement *req, const char *value)
{
    for (size_t i = 0; i < req->n_values; i++)
        if (strcmp(str_or_empty(req->values[i]), value) == 0)
            return true;
    return false;
}

bool selector_requirement_valid(const struct selector_requirement *req, bool fields)
{
    if (fields)
        return (req->op == SELECTOR_OP_IN || req->op == SELECTOR_OP_NOT_IN) && req->n_values == 1;
    long long v;
    switch (req->op) {
    case SELECTOR_OP_IN:
    case SELECTOR_OP_NOT_IN:
        return req->n_values > 0;
    case SELECTOR_OP_EXISTS:
    case SELECTOR_OP_DOES_NOT_EXIST:
        return req->n_values == 0;
    case SELECTOR_OP_GT:
    case SELECTOR_OP_LT:
        return req->n_values == 1 && parse_int64_strict(req->values[0], &v);
    case SELECTOR_OP_UNKNOWN:
    default:
        return false;
    }
}

bool selector_requirement_matches_labels(const struct selector_requirement *req,
                                         const struct kv_list *labels)
{
    if (!selector_requirement_valid(req, false))
        return false;
    const char *value = kv_list_get(labels, str_or_empty(req->key));
    long long have, want;
    switch (req->op) {
    case SELECTOR_OP_IN:
        return value && has_value(req, value);
    case SELECTOR_OP_NOT_IN:
        return !value || !has_value(req, value);
    case SELECTOR_OP_EXISTS:
        return value != NULL;
    case SELECTOR_OP_DOES_NOT_EXIST:
        return value == NULL;
    case SELECTOR_OP_GT:
    case SELECTOR_OP_LT:
        if (!value || !parse_int64_strict(value, &have) ||
            !parse_int64_strict(req->values[0], &want))
            return false;
        return req->op == SELECTOR_OP_GT ? have > want : have < want;
    case SELECTOR_OP_UNKNOWN:
    default:
        return false;
    }
}

bool selector_requirement_matches_fields(const struct selector_requirement *req,
                                         const char *node_name)
{
    if (!selector_requirement_valid(req, true))
        return false;
    const char *field =
        strcmp(str_or_empty(req->key), "metadata.name") == 0 ? str_or_empty(node_name) : "";
    bool equal = strcmp(field, str_or_empty(req->values[0])) == 0;
    return req->op == SELECTOR_OP_IN ? equal : !equal;
}

bool selector_term_matches(const struct selector_term *term, const struct knode *node)
{
    if (term->n_exprs == 0 && term->n_fields == 0)
        return false;
    /* any invalid requirement is a parse error of the term: no match */
    for (size_t i = 0; i < term->n_exprs; i++)
        if (!selector_requirement_valid(&term->exprs[i], false))
            return false;
    for (size_t i = 0; i < term->n_fields; i++)
        if (!selector_requirement_valid(&term->fields[i], true))
            return false;
    for (size_t i = 0; i < term->n_exprs; i++)
        if (!selector_requirement_matches_labels(&term->exprs[i], &node->labels))
            return false;
    for (size_t i = 0; i < term->n_fields; i++)
        if (!selector_requirement_matches_fields(&term->fields[i], node->name))
            return false;
    return true;
}

bool node_affinity_matches(const struct node_affinity *aff, const struct knode *node)
{
    if (!aff->present)
        return true;
    for (size_t i = 0; i < aff->n_terms; i++)
        if (selector_term_matches(&aff->terms[i], node))
            return true;
    return false;
}

bool node_selector_matches(const struct kv_list *selector, const struct kv_list *labels)
{
    for (size_t i = 0; i < selector->n; i++) {
        const char *have = kv_list_get(labels, selector->items[i].key);
        if (!have || strcmp(have, str_or_empty(selector->items[i].value)) != 0)
            return false;
    }
    return true;
}

bool pod_matches_node_selection(const struct kpod *pod, const struct knode *node)
{
    return node_selector_matches(&pod->node_selector, &node->labels) &&
           node_affinity_matches(&pod->affinity, node);
}
