/* node_state.c - a node's autoscaler, cloud GPU and GPU stack states (node_state.h). */
#include "classify/node_state.h"

#include <string.h>

#include "classify/match.h"

bool node_autoscaler_joining(const struct knode *node)
{
    if (!node)
        return false;
    for (size_t i = 0; i < node->n_taints; i++)
        if (node->taints[i].key && strcmp(node->taints[i].key, TAINT_KARPENTER_UNREGISTERED) == 0)
            return true;
    /* One pass over the labels, every candidate of every classification goes through here: only
     * keys under karpenter.sh/ are compared in full. */
    static const char prefix[] = "karpenter.sh/";
    bool nodepool = false, registered = false, initialized = false;
    for (size_t i = 0; i < node->labels.n; i++) {
        const char *k = node->labels.items[i].key, *v = node->labels.items[i].value;
        if (!k || k[0] != 'k' || strncmp(k, prefix, sizeof(prefix) - 1) != 0)
            continue;
        k += sizeof(prefix) - 1;
        bool yes = v && strcmp(v, "true") == 0;
        if (strcmp(k, "nodepool") == 0)
            nodepool = true;
        else if (strcmp(k, "registered") == 0)
            registered = yes;
        else if (strcmp(k, "initialized") == 0)
            initialized = yes;
    }
    return nodepool && (!registered || !initialized);
}

/* ---- cloud and provisioner GPU labels -------------------------------------------------------- */

struct gpu_label_rule {
    const char *key;
    const char *writer;
    bool count; /* the value is a GPU count: only above 0 marks a GPU node */
};

static const struct gpu_label_rule gpu_label_rules[] = {
    {"cloud.google.com/gke-accelerator", "its cloud", false}, /* GKE */
    {"k8s.amazonaws.com/accelerator", "its cloud", false},    /* EKS node groups */
    {"kubernetes.azure.com/accelerator", "its cloud", false}, /* AKS */
    {"karpenter.k8s.aws/instance-gpu-count", "Karpenter", true},
    {"karpenter.azure.com/sku-gpu-count", "Karpenter", true},
    {"eks.amazonaws.com/instance-gpu-count", "EKS Auto Mode", true},
};

/* A base-10 count above 0, digits only ("0", "", "-1", "2x" are not). */
static bool positive_count(const char *s)
{
    bool nonzero = false;
    if (!s || !*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        nonzero = nonzero || *s != '0';
    }
    return nonzero;
}

#define N_RULES (sizeof(gpu_label_rules) / sizeof(gpu_label_rules[0]))

/* ---- GPU stack states ------------------------------------------------------------------------ */

#define MIG_CONFIG_STATE "nvidia.com/mig.config.state"
#define DRIVER_UPGRADE_STATE "nvidia.com/gpu-driver-upgrade-state"
#define WORKLOAD_CONFIG "nvidia.com/gpu.workload.config"
#define DEPLOY_OPERANDS "nvidia.com/gpu.deploy.operands"

/* The gates of the operands the container device plugin needs, the plugin's own first. */
static const char *const resource_gates[] = {
    "nvidia.com/gpu.deploy.device-plugin",
    "nvidia.com/gpu.deploy.driver",
    "nvidia.com/gpu.deploy.container-toolkit",
    "nvidia.com/gpu.deploy.operator-validator",
};

#define N_GATES (sizeof(resource_gates) / sizeof(resource_gates[0]))

/* ---- one pass over a node's labels ----------------------------------------------------------- */

/* The labels this file reads (NULL: absent), found in one pass. */
struct node_labels {
    const char *mig_state, *mig_config, *upgrade, *workload, *operands;
    const char *gates[N_GATES];
    const char *rule_value[N_RULES]; /* the value of each GPU label rule's key */
    bool dra;                        /* cloud.google.com/gke-gpu-dra-driver=true */
};

static void read_nvidia_label(const char *k, const char *v, struct node_labels *nl)
{
    if (strcmp(k, MIG_CONFIG_STATE) == 0)
        nl->mig_state = v;
    else if (strcmp(k, "nvidia.com/mig.config") == 0)
        nl->mig_config = v;
    else if (strcmp(k, DRIVER_UPGRADE_STATE) == 0)
        nl->upgrade = v;
    else if (strcmp(k, WORKLOAD_CONFIG) == 0)
        nl->workload = v;
    else if (strcmp(k, DEPLOY_OPERANDS) == 0)
        nl->operands = v;
    else if (strncmp(k, "nvidia.com/gpu.deploy.", 22) == 0)
        for (size_t g = 0; g < N_GATES; g++)
            if (strcmp(k, resource_gates[g]) == 0)
                nl->gates[g] = v;
}

/*
 * Every label is looked at once, by its first character first: clusters carry dozens of labels
 * per node (kubernetes.io/..., feature discovery's) and this runs over the candidates of a pod.
 */
static void read_labels(const struct knode *node, struct node_labels *nl)
{
    memset(nl, 0, sizeof(*nl));
    for (size_t i = 0; i < node->labels.n; i++) {
        const char *k = node->labels.items[i].key, *v = node->labels.items[i].value;
        if (!k || !v)
            continue;
        switch (k[0]) {
        case 'n':
            if (strncmp(k, "nvidia.com/", 11) == 0)
                read_nvidia_label(k, v, nl);
            continue;
        case 'c':
            if (strcmp(k, "cloud.google.com/gke-gpu-dra-driver") == 0) {
                nl->dra = strcmp(v, "true") == 0;
                continue;
            }
            break;
        case 'k':
        case 'e':
            break;
        default:
            continue;
        }
        for (size_t r = 0; r < N_RULES; r++)
            if (strcmp(k, gpu_label_rules[r].key) == 0) {
                nl->rule_value[r] = v;
                break;
            }
    }
}

static bool gpu_label_of(const struct node_labels *nl, struct node_gpu_label *out)
{
    if (nl->dra)
        return false;
    for (size_t r = 0; r < N_RULES; r++) {
        const char *v = nl->rule_value[r];
        if (!v || (gpu_label_rules[r].count ? !positive_count(v) : !*v))
            continue;
        *out = (struct node_gpu_label){
            .key = gpu_label_rules[r].key, .value = v, .writer = gpu_label_rules[r].writer};
        return true;
    }
    return false;
}

static bool set_state(struct gpu_stack_state *out, enum gpu_stack_kind kind, const char *key,
                      const char *value)
{
    out->kind = kind;
    out->key = key;
    out->value = value;
    return true;
}

static bool stack_state_of(const struct node_labels *nl, struct gpu_stack_state *out)
{
    memset(out, 0, sizeof(*out));
    out->mig_config = nl->mig_config;
    const char *v = nl->mig_state;
    if (v && strcmp(v, "failed") == 0)
        return set_state(out, GPU_STACK_MIG_FAILED, MIG_CONFIG_STATE, v);
    if (v && strcmp(v, "rebooting") == 0)
        return set_state(out, GPU_STACK_MIG_REBOOTING, MIG_CONFIG_STATE, v);
    if (v && strcmp(v, "pending") == 0)
        return set_state(out, GPU_STACK_MIG_PENDING, MIG_CONFIG_STATE, v);
    v = nl->upgrade;
    if (v && strcmp(v, "upgrade-failed") == 0)
        return set_state(out, GPU_STACK_UPGRADE_FAILED, DRIVER_UPGRADE_STATE, v);
    if (v && *v && strcmp(v, "upgrade-required") != 0 && strcmp(v, "upgrade-done") != 0)
        return set_state(out, GPU_STACK_UPGRADING, DRIVER_UPGRADE_STATE, v);
    v = nl->workload;
    if (v && (strcmp(v, "vm-passthrough") == 0 || strcmp(v, "vm-vgpu") == 0))
        return set_state(out, GPU_STACK_VM, WORKLOAD_CONFIG, v);
    if (nl->operands && strcmp(nl->operands, "false") == 0)
        return set_state(out, GPU_STACK_OPERANDS_OFF, DEPLOY_OPERANDS, nl->operands);
    for (size_t i = 0; i < N_GATES; i++) {
        v = nl->gates[i];
        if (!v || strcmp(v, "true") == 0)
            continue;
        enum gpu_stack_kind kind = strcmp(v, "paused-for-mig-change") == 0 ? GPU_STACK_PAUSED_MIG
                                   : strcmp(v, "paused-for-driver-upgrade") == 0
                                       ? GPU_STACK_PAUSED_DRIVER
                                       : GPU_STACK_GATE_OFF;
        return set_state(out, kind, resource_gates[i], v);
    }
    out->mig_config = NULL;
    return false;
}

bool node_gpu_label(const struct knode *node, struct node_gpu_label *out)
{
    struct node_labels nl;
    if (!node)
        return false;
    read_labels(node, &nl);
    return gpu_label_of(&nl, out);
}

bool node_gpu_stack_state(const struct knode *node, struct gpu_stack_state *out)
{
    struct node_labels nl;
    memset(out, 0, sizeof(*out));
    if (!node)
        return false;
    read_labels(node, &nl);
    return stack_state_of(&nl, out);
}

unsigned node_gpu_states(const struct knode *node, struct gpu_stack_state *stack,
                         struct node_gpu_label *label)
{
    struct node_labels nl;
    memset(stack, 0, sizeof(*stack));
    if (!node)
        return 0;
    read_labels(node, &nl);
    unsigned found = 0;
    if (stack_state_of(&nl, stack))
        found |= NODE_GPU_STACK;
    if (gpu_label_of(&nl, label))
        found |= NODE_GPU_LABEL;
    return found;
}

/* The operand a gate label names: "device-plugin" for nvidia.com/gpu.deploy.device-plugin. */
static const char *operand_of(const char *gate)
{
    const char *dot = strrchr(gate, '.');
    return dot ? dot + 1 : gate;
}

/*
 * How each state reads: "<who> <does><operand><what> node N<where>[<layout>] (key=value<note>)",
 * e.g. "the MIG manager is reconfiguring node n1 to all-1g.10gb (nvidia.com/mig.config.state=
 * pending; ...)". Indexed by enum gpu_stack_kind.
 */
static const struct clause {
    const char *who, *does;
    bool operand; /* the gate's operand follows `does` */
    const char *what, *where;
    bool layout; /* nvidia.com/mig.config follows `where` */
    const char *note;
} clauses[] = {
    [GPU_STACK_MIG_FAILED] = {"the MIG manager", "failed to reconfigure", false, "", " to ", true,
                              "; its log on that node says why"},
    [GPU_STACK_MIG_REBOOTING] = {"the MIG manager", "is rebooting", false, "", " to apply ", true,
                                 ""},
    [GPU_STACK_MIG_PENDING] = {"the MIG manager", "is reconfiguring", false, "", " to ", true,
                               "; the GPU operands are paused meanwhile, and a GPU pod that does "
                               "not end keeps it waiting"},
    [GPU_STACK_UPGRADE_FAILED] = {"the GPU Operator", "failed to upgrade the GPU driver on", false,
                                  "", "", false, "; it stays so until fixed"},
    [GPU_STACK_UPGRADING] = {"the GPU Operator", "is upgrading the GPU driver on", false, "", "",
                             false, ""},
    [GPU_STACK_VM] = {"the GPU Operator", "runs no container device plugin on", false, "",
                      ", whose GPUs are given to virtual machines", false,
                      "; read with sandbox workloads enabled"},
    [GPU_STACK_OPERANDS_OFF] = {"the GPU Operator", "runs none of its operands on", false, "", "",
                                false, ""},
    [GPU_STACK_PAUSED_MIG] = {"the GPU Operator", "paused its ", true, " on", " for a MIG change",
                              false, ""},
    [GPU_STACK_PAUSED_DRIVER] = {"the GPU Operator", "paused its ", true, " on",
                                 " while the driver pod's k8s-driver-manager runs", false,
                                 "; a driver pod stuck in Init leaves it so"},
    [GPU_STACK_GATE_OFF] = {"the GPU Operator", "runs no ", true, " on", "", false,
                            "; it runs only at true"},
};

void gpu_stack_state_put(struct line *l, const char *node_name, const struct gpu_stack_state *s)
{
    if ((size_t)s->kind >= sizeof(clauses) / sizeof(clauses[0]) || !clauses[s->kind].who)
        return;
    const struct clause *c = &clauses[s->kind];
    const char *layout = s->mig_config && *s->mig_config ? s->mig_config : "a new MIG layout";
    line_printf(l, "%s %s%s%s node %s%s%s (%s=%s%s)", c->who, c->does,
                c->operand ? operand_of(s->key) : "", c->what, node_name ? node_name : "(unnamed)",
                c->where, c->layout ? layout : "", s->key, s->value, c->note);
}
