/*
 * test_node_state.c - core/classify/node_state.c: a node an autoscaler is still adding, the
 * cloud and provisioner GPU labels, and the GPU Operator's node states with their text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "classify/line.h"
#include "classify/node_state.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_autoscaler_joining(void **state)
{
    (void)state;
    struct knode n = {.name = "n"};
    assert_false(node_autoscaler_joining(NULL));
    assert_false(node_autoscaler_joining(&n));

    /* the unregistered taint, whatever its effect */
    struct taint t[] = {{"example.com/x", "", "NoSchedule"},
                        {"karpenter.sh/unregistered", "", "NoExecute"}};
    n.taints = t;
    n.n_taints = 2;
    assert_true(node_autoscaler_joining(&n));
    t[1].effect = "NoSchedule";
    assert_true(node_autoscaler_joining(&n));
    n.n_taints = 1;
    assert_false(node_autoscaler_joining(&n));

    /* a Karpenter node without registered=true and initialized=true */
    struct kv labels[] = {{"karpenter.sh/nodepool", "gpu"},
                          {"karpenter.sh/registered", "true"},
                          {"karpenter.sh/initialized", "true"}};
    n.labels = (struct kv_list){labels, 1};
    assert_true(node_autoscaler_joining(&n));
    n.labels.n = 2;
    assert_true(node_autoscaler_joining(&n)); /* registered, its GPUs not registered yet */
    n.labels.n = 3;
    assert_false(node_autoscaler_joining(&n));
    labels[2].value = "false";
    assert_true(node_autoscaler_joining(&n));
    /* the labels alone, without the NodePool label: not a Karpenter node */
    n.labels = (struct kv_list){labels + 1, 1};
    assert_false(node_autoscaler_joining(&n));
}

static void test_gpu_label(void **state)
{
    (void)state;
    struct knode n = {.name = "n"};
    struct node_gpu_label g = {0};
    assert_false(node_gpu_label(NULL, &g));
    assert_false(node_gpu_label(&n, &g));
    static const struct {
        const char *key, *value, *writer;
    } yes[] = {
        {"cloud.google.com/gke-accelerator", "nvidia-l4", "its cloud"},
        {"k8s.amazonaws.com/accelerator", "nvidia-tesla-t4", "its cloud"},
        {"kubernetes.azure.com/accelerator", "nvidia", "its cloud"},
        {"karpenter.k8s.aws/instance-gpu-count", "1", "Karpenter"},
        {"karpenter.azure.com/sku-gpu-count", "4", "Karpenter"},
        {"eks.amazonaws.com/instance-gpu-count", "8", "EKS Auto Mode"},
        {"karpenter.k8s.aws/instance-gpu-count", "10", "Karpenter"},
    };
    for (size_t i = 0; i < N(yes); i++) {
        struct kv l = {(char *)yes[i].key, (char *)yes[i].value};
        n.labels = (struct kv_list){&l, 1};
        assert_true(node_gpu_label(&n, &g));
        struct gpu_stack_state st;
        struct node_gpu_label g2;
        assert_int_equal(node_gpu_states(&n, &st, &g2), NODE_GPU_LABEL);
        assert_string_equal(g2.key, yes[i].key);
        assert_string_equal(g.key, yes[i].key);
        assert_string_equal(g.value, yes[i].value);
        assert_string_equal(g.writer, yes[i].writer);
    }
    static const struct {
        const char *key, *value;
    } no[] = {
        {"cloud.google.com/gke-accelerator", ""},
        {"karpenter.k8s.aws/instance-gpu-count", "0"},
        {"karpenter.azure.com/sku-gpu-count", "-1"},
        {"eks.amazonaws.com/instance-gpu-count", "two"},
        {"karpenter.k8s.aws/instance-gpu-name", "t4"},
        {"karpenter.kwok.sh/instance-family", "g5"},
        {"accelerator", "nvidia"},
    };
    for (size_t i = 0; i < N(no); i++) {
        struct kv l = {(char *)no[i].key, (char *)no[i].value};
        n.labels = (struct kv_list){&l, 1};
        assert_false(node_gpu_label(&n, &g));
    }
    /* GKE's DRA GPU nodes have no extended resource on purpose */
    struct kv dra[] = {{"cloud.google.com/gke-accelerator", "nvidia-l4"},
                       {"cloud.google.com/gke-gpu-dra-driver", "true"}};
    n.labels = (struct kv_list){dra, 2};
    assert_false(node_gpu_label(&n, &g));
}

/* One node's labels (up to four; NULL keys end them), the state and text expected. */
static const struct stack_case {
    const char *labels[4][2];
    enum gpu_stack_kind kind;
    const char *text; /* the whole clause; NULL: only the kind is checked */
} stack_cases[] = {
    {{{NULL}}, GPU_STACK_NONE, ""},
    /* MIG manager (mig-parted): mig.config.state, with the layout asked */
    {{{"nvidia.com/mig.config.state", "pending"},
      {"nvidia.com/mig.config", "all-1g.10gb"},
      {"nvidia.com/gpu.deploy.device-plugin", "paused-for-mig-change"}},
     GPU_STACK_MIG_PENDING,
     "the MIG manager is reconfiguring node gpu-1 to all-1g.10gb (nvidia.com/mig.config.state="
     "pending; the GPU operands are paused meanwhile, and a GPU pod that does not end keeps it "
     "waiting)"},
    {{{"nvidia.com/mig.config.state", "pending"}},
     GPU_STACK_MIG_PENDING,
     "the MIG manager is reconfiguring node gpu-1 to a new MIG layout (nvidia.com/mig.config.state="
     "pending; the GPU operands are paused meanwhile, and a GPU pod that does not end keeps it "
     "waiting)"},
    {{{"nvidia.com/mig.config", "all-1g.10gb"}, {"nvidia.com/mig.config.state", "rebooting"}},
     GPU_STACK_MIG_REBOOTING,
     "the MIG manager is rebooting node gpu-1 to apply all-1g.10gb "
     "(nvidia.com/mig.config.state=rebooting)"},
    {{{"nvidia.com/mig.config", "all-1g.10gb"},
      {"nvidia.com/mig.config.state", "failed"},
      {"nvidia.com/gpu-driver-upgrade-state", "upgrade-failed"}},
     GPU_STACK_MIG_FAILED,
     "the MIG manager failed to reconfigure node gpu-1 to all-1g.10gb "
     "(nvidia.com/mig.config.state=failed; its log on that node says why)"},
    /* done: what is left is the gate the MIG manager paused */
    {{{"nvidia.com/mig.config.state", "success"},
      {"nvidia.com/gpu.deploy.device-plugin", "paused-for-mig-change"}},
     GPU_STACK_PAUSED_MIG,
     "the GPU Operator paused its device-plugin on node gpu-1 for a MIG change "
     "(nvidia.com/gpu.deploy.device-plugin=paused-for-mig-change)"},
    {{{"nvidia.com/mig.config.state", "success"}, {"nvidia.com/gpu.deploy.device-plugin", "true"}},
     GPU_STACK_NONE,
     ""},
    /* the driver upgrade state machine (k8s-operator-libs) */
    {{{"nvidia.com/gpu-driver-upgrade-state", "upgrade-failed"}},
     GPU_STACK_UPGRADE_FAILED,
     "the GPU Operator failed to upgrade the GPU driver on node gpu-1 "
     "(nvidia.com/gpu-driver-upgrade-state=upgrade-failed; it stays so until fixed)"},
    {{{"nvidia.com/gpu-driver-upgrade-state", "drain-required"}},
     GPU_STACK_UPGRADING,
     "the GPU Operator is upgrading the GPU driver on node gpu-1 "
     "(nvidia.com/gpu-driver-upgrade-state=drain-required)"},
    {{{"nvidia.com/gpu-driver-upgrade-state", "cordon-required"}}, GPU_STACK_UPGRADING, NULL},
    {{{"nvidia.com/gpu-driver-upgrade-state", "wait-for-jobs-required"}},
     GPU_STACK_UPGRADING,
     NULL},
    {{{"nvidia.com/gpu-driver-upgrade-state", "pod-deletion-required"}}, GPU_STACK_UPGRADING, NULL},
    {{{"nvidia.com/gpu-driver-upgrade-state", "validation-required"}}, GPU_STACK_UPGRADING, NULL},
    {{{"nvidia.com/gpu-driver-upgrade-state", "uncordon-required"}}, GPU_STACK_UPGRADING, NULL},
    {{{"nvidia.com/gpu-driver-upgrade-state", "upgrade-required"}}, GPU_STACK_NONE, ""},
    {{{"nvidia.com/gpu-driver-upgrade-state", "upgrade-done"}}, GPU_STACK_NONE, ""},
    {{{"nvidia.com/gpu-driver-upgrade-state", ""}}, GPU_STACK_NONE, ""},
    /* sandbox workloads */
    {{{"nvidia.com/gpu.workload.config", "vm-passthrough"}},
     GPU_STACK_VM,
     "the GPU Operator runs no container device plugin on node gpu-1, whose GPUs are given to "
     "virtual machines (nvidia.com/gpu.workload.config=vm-passthrough; read with sandbox "
     "workloads enabled)"},
    {{{"nvidia.com/gpu.workload.config", "vm-vgpu"}}, GPU_STACK_VM, NULL},
    {{{"nvidia.com/gpu.workload.config", "container"}}, GPU_STACK_NONE, ""},
    /* the operand gates: only those the GPU resource needs, the device plugin's first */
    {{{"nvidia.com/gpu.deploy.dcgm-exporter", "false"}}, GPU_STACK_NONE, ""},
    {{{"nvidia.com/gpu.deploy.dcgm-exporter", "false"},
      {"nvidia.com/gpu.deploy.operands", "true"},
      {"nvidia.com/gpu.deploy.driver", "paused-for-driver-upgrade"},
      {"nvidia.com/gpu.deploy.device-plugin", "true"}},
     GPU_STACK_PAUSED_DRIVER,
     "the GPU Operator paused its driver on node gpu-1 while the driver pod's k8s-driver-manager "
     "runs (nvidia.com/gpu.deploy.driver=paused-for-driver-upgrade; a driver pod stuck in Init "
     "leaves it so)"},
    {{{"nvidia.com/gpu.deploy.driver", "paused-for-driver-upgrade"},
      {"nvidia.com/gpu.deploy.device-plugin", "false"}},
     GPU_STACK_GATE_OFF,
     "the GPU Operator runs no device-plugin on node gpu-1 "
     "(nvidia.com/gpu.deploy.device-plugin=false; it runs only at true)"},
    {{{"nvidia.com/gpu.deploy.container-toolkit", "maybe"}}, GPU_STACK_GATE_OFF, NULL},
    {{{"nvidia.com/gpu.deploy.operator-validator", "false"}}, GPU_STACK_GATE_OFF, NULL},
    {{{"nvidia.com/gpu.deploy.device-plugin", "false"},
      {"nvidia.com/gpu.deploy.operands", "false"}},
     GPU_STACK_OPERANDS_OFF,
     "the GPU Operator runs none of its operands on node gpu-1 "
     "(nvidia.com/gpu.deploy.operands=false)"},
};

static void test_gpu_stack_state(void **state)
{
    (void)state;
    struct gpu_stack_state st;
    assert_false(node_gpu_stack_state(NULL, &st));
    for (size_t i = 0; i < N(stack_cases); i++) {
        const struct stack_case *c = &stack_cases[i];
        struct kv kv[4];
        size_t n = 0;
        for (; n < 4 && c->labels[n][0]; n++)
            kv[n] = (struct kv){(char *)c->labels[n][0], (char *)c->labels[n][1]};
        struct knode node = {.name = "gpu-1", .labels = {kv, n}};
        bool got = node_gpu_stack_state(&node, &st);
        if (st.kind != c->kind || got != (c->kind != GPU_STACK_NONE))
            fail_msg("case %zu: kind %d, want %d", i, (int)st.kind, (int)c->kind);
        /* node_gpu_states() reads the same in its one pass */
        struct gpu_stack_state st2;
        struct node_gpu_label label;
        assert_int_equal(node_gpu_states(&node, &st2, &label) & NODE_GPU_STACK,
                         got ? NODE_GPU_STACK : 0);
        assert_int_equal(st2.kind, st.kind);
        char buf[512];
        struct line l = {.buf = buf, .cap = sizeof(buf)};
        gpu_stack_state_put(&l, node.name, &st);
        line_finish(&l);
        if (c->text && strcmp(buf, c->text) != 0)
            fail_msg("case %zu:\n  got  %s\n  want %s", i, buf, c->text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_autoscaler_joining),
        cmocka_unit_test(test_gpu_label),
        cmocka_unit_test(test_gpu_stack_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
