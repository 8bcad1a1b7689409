/* node_state.c - a node's autoscaler, cloud GPU and GPU stack states (node_state.h). */
#include "classify/node_state.h"

#include <string.h>

#include "classify/match.h"

static bool label_is(const struct knode *n, const char *key, const char *value)
{
    const char *v = kv_list_get(&n->labels, key);
    return v && strcmp(v, value) == 0;
}

bool node_autoscaler_joining(const struct knode *node)
{
    if (!node)
        return false;
    for (size_t i = 0; i < node->n_taints; i++)
        if (node->taints[i].key && strcmp(node->taints[i].key, TAINT_KARPENTER_UNREGISTERED) == 0)
            return true;
    if (!kv_list_get(&node->labels, "karpenter.sh/nodepool"))
        return false;
    return !label_is(node, "karpenter.sh/registered", "true") ||
           !label_is(node, "karpenter.sh/initialized", "true");
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

bool node_gpu_label(const struct knode *node, struct node_gpu_label *out)
{
    if (!node || label_is(node, "cloud.google.com/gke-gpu-dra-driver", "true"))
        return false;
    for (size_t i = 0; i < sizeof(gpu_label_rules) / sizeof(gpu_label_rules[0]); i++) {
        const struct gpu_label_rule *r = &gpu_label_rules[i];
        const char *v = kv_list_get(&node->labels, r->key);
        if (!v || (r->count ? !positive_count(v) : !*v))
            continue;
        *out = (struct node_gpu_label){.key = r->key, .value = v, .writer = r->writer};
        return true;
    }
    return false;
}

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

static bool set_state(struct gpu_stack_state *out, enum gpu_stack_kind kind, const char *key,
                      const char *value)
{
    out->kind = kind;
    out->key = key;
    out->value = value;
    return true;
}

bool node_gpu_stack_state(const struct knode *node, struct gpu_stack_state *out)
{
    memset(out, 0, sizeof(*out));
    if (!node)
        return false;
    out->mig_config = kv_list_get(&node->labels, "nvidia.com/mig.config");
    const char *v = kv_list_get(&node->labels, MIG_CONFIG_STATE);
    if (v && strcmp(v, "failed") == 0)
        return set_state(out, GPU_STACK_MIG_FAILED, MIG_CONFIG_STATE, v);
    if (v && strcmp(v, "rebooting") == 0)
        return set_state(out, GPU_STACK_MIG_REBOOTING, MIG_CONFIG_STATE, v);
    if (v && strcmp(v, "pending") == 0)
        return set_state(out, GPU_STACK_MIG_PENDING, MIG_CONFIG_STATE, v);
    v = kv_list_get(&node->labels, DRIVER_UPGRADE_STATE);
    if (v && strcmp(v, "upgrade-failed") == 0)
        return set_state(out, GPU_STACK_UPGRADE_FAILED, DRIVER_UPGRADE_STATE, v);
    if (v && *v && strcmp(v, "upgrade-required") != 0 && strcmp(v, "upgrade-done") != 0)
        return set_state(out, GPU_STACK_UPGRADING, DRIVER_UPGRADE_STATE, v);
    v = kv_list_get(&node->labels, WORKLOAD_CONFIG);
    if (v && (strcmp(v, "vm-passthrough") == 0 || strcmp(v, "vm-vgpu") == 0))
        return set_state(out, GPU_STACK_VM, WORKLOAD_CONFIG, v);
    v = kv_list_get(&node->labels, DEPLOY_OPERANDS);
    if (v && strcmp(v, "false") == 0)
        return set_state(out, GPU_STACK_OPERANDS_OFF, DEPLOY_OPERANDS, v);
    for (size_t i = 0; i < sizeof(resource_gates) / sizeof(resource_gates[0]); i++) {
        v = kv_list_get(&node->labels, resource_gates[i]);
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

/* The operand a gate label names: "device-plugin" for nvidia.com/gpu.deploy.device-plugin. */
static const char *operand_of(const char *gate)
{
    const char *dot = strrchr(gate, '.');
    return dot ? dot + 1 : gate;
}

void gpu_stack_state_put(struct line *l, const char *node_name, const struct gpu_stack_state *s)
{
    const char *n = node_name ? node_name : "(unnamed)";
    const char *layout = s->mig_config && *s->mig_config ? s->mig_config : NULL;
    switch (s->kind) {
    case GPU_STACK_MIG_FAILED:
        line_printf(l,
                    "the MIG manager failed to apply the MIG layout %s on node %s (%s=%s); its "
                    "log on that node says why",
                    layout ? layout : "(nvidia.com/mig.config unset)", n, s->key, s->value);
        return;
    case GPU_STACK_MIG_REBOOTING:
        line_printf(l, "the MIG manager is rebooting node %s to apply the MIG layout %s (%s=%s)", n,
                    layout ? layout : "(nvidia.com/mig.config unset)", s->key, s->value);
        return;
    case GPU_STACK_MIG_PENDING:
        line_printf(l,
                    "the MIG manager is reconfiguring node %s to %s (%s=%s; the GPU operands are "
                    "paused meanwhile, and a GPU pod that does not end keeps it waiting)",
                    n, layout ? layout : "a new MIG layout", s->key, s->value);
        return;
    case GPU_STACK_UPGRADE_FAILED:
        line_printf(l, "the GPU driver upgrade failed on node %s (%s=%s; it stays so until fixed)",
                    n, s->key, s->value);
        return;
    case GPU_STACK_UPGRADING:
        line_printf(l, "the GPU Operator is upgrading the GPU driver on node %s (%s=%s)", n, s->key,
                    s->value);
        return;
    case GPU_STACK_VM:
        line_printf(l,
                    "node %s gives its GPUs to virtual machines (%s=%s): with sandbox workloads "
                    "enabled the GPU Operator runs no container device plugin there",
                    n, s->key, s->value);
        return;
    case GPU_STACK_OPERANDS_OFF:
        line_printf(l, "every GPU Operator operand is turned off on node %s (%s=%s)", n, s->key,
                    s->value);
        return;
    case GPU_STACK_PAUSED_MIG:
        line_printf(l, "the GPU Operator's %s is paused on node %s for a MIG change (%s=%s)",
                    operand_of(s->key), n, s->key, s->value);
        return;
    case GPU_STACK_PAUSED_DRIVER:
        line_printf(l,
                    "the GPU Operator's %s is paused on node %s while the driver pod's "
                    "k8s-driver-manager runs (%s=%s; a driver pod stuck in Init leaves it so)",
                    operand_of(s->key), n, s->key, s->value);
        return;
    case GPU_STACK_GATE_OFF:
        line_printf(l,
                    "the GPU Operator's %s is turned off on node %s (%s=%s; it runs only at true)",
                    operand_of(s->key), n, s->key, s->value);
        return;
    case GPU_STACK_NONE:
    default:
        return;
    }
}
