/*
 * test_hints.c - the near misses named after the ladder's word (core/classify/hints.c): cloud GPU
 * nodes whose device plugin has not finished, GPU stack states (MIG manager, driver upgrade,
 * operand gates), both only over the pod's candidate nodes, the GPU resources the deciding node
 * advertises instead, the "-SHARED" product label of time-slicing, unhealthy GPUs, and a vendor
 * scheduler's resource asked of another scheduler. classify() writes these after its own words;
 * here they are called alone, on objects built by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "classify/classify.h"
#include "classify/hints.h"
#include "classify/line.h"

#define GPU "nvidia.com/gpu"

struct world {
    struct kpod pod;
    struct knode nodes[3];
    const struct knode *ptrs[3];
    struct classify_input in;
    char buf[1024];
};

static struct kv gke_label = {"cloud.google.com/gke-accelerator", "nvidia-l4"};
static struct kv eks_label = {"k8s.amazonaws.com/accelerator", "nvidia-tesla-t4"};

static void world_init(struct world *w)
{
    memset(w, 0, sizeof(*w));
    static const char *const names[] = {"node-a", "node-b", "node-c"};
    for (size_t i = 0; i < 3; i++) {
        w->nodes[i].name = (char *)names[i];
        w->ptrs[i] = &w->nodes[i];
    }
    w->in = (struct classify_input){.pod = &w->pod, .nodes = w->ptrs, .n_nodes = 3};
}

static const char *put(struct world *w, enum cause cause, const struct node_verdict *best)
{
    struct line l = {.buf = w->buf, .cap = sizeof(w->buf)};
    hints_put(&l, &w->in, cause, best);
    line_finish(&l);
    return w->buf;
}

/* no-gpu-node: nodes of a cloud GPU pool that list no GPU yet, the first named, the rest counted.
 */
static void test_cloud_node_not_ready(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    w.nodes[0].labels = (struct kv_list){&gke_label, 1};
    w.nodes[2].labels = (struct kv_list){&eks_label, 1};
    struct node_verdict best = {.node = &w.nodes[1], .resource = GPU};
    assert_string_equal(put(&w, CAUSE_NO_GPU_NODE, &best),
                        "; node node-a is labelled cloud.google.com/gke-accelerator=nvidia-l4 by "
                        "its cloud but lists no nvidia.com/gpu nor any other GPU resource (and 1 "
                        "more such node): the GPU driver installer or the device plugin has not "
                        "finished there");

    /* a labelled node that does list a GPU resource is ready, whichever it lists */
    struct resource_amount four = {"nvidia.com/mig-1g.10gb", 4};
    w.nodes[0].capacity = (struct resource_list){&four, 1};
    assert_string_equal(put(&w, CAUSE_NO_GPU_NODE, &best),
                        "; node node-c is labelled k8s.amazonaws.com/accelerator=nvidia-tesla-t4 "
                        "by its cloud but lists no nvidia.com/gpu nor any other GPU resource: the "
                        "GPU driver installer or the device plugin has not finished there");

    /* the other words where a node without its GPUs matters: allocatable-zero; and taint and
     * exhausted, where only nodes that list a GPU resource key (at 0) are looked at */
    const char *want = "; node node-c is labelled k8s.amazonaws.com/accelerator=nvidia-tesla-t4";
    assert_non_null(strstr(put(&w, CAUSE_ALLOCATABLE_ZERO, &best), want));
    assert_string_equal(put(&w, CAUSE_TAINT, &best), "");
    assert_string_equal(put(&w, CAUSE_EXHAUSTED, &best), "");
    struct resource_amount gone = {GPU, 0};
    w.nodes[2].capacity = (struct resource_list){&gone, 1};
    assert_non_null(strstr(put(&w, CAUSE_TAINT, &best), want));
    assert_non_null(strstr(put(&w, CAUSE_EXHAUSTED, &best), want));
    /* without a deciding node nothing is said, nor for another word */
    assert_string_equal(put(&w, CAUSE_NO_GPU_NODE, NULL), "");
    assert_string_equal(put(&w, CAUSE_GPU_FITS, &best), "");
    assert_string_equal(put(&w, CAUSE_LABEL_MISMATCH, &best), "");
}

/* The provisioners' GPU labels: Karpenter on AWS and Azure, EKS Auto Mode; a count of 0 is no
 * GPU node, and GKE's DRA GPU nodes list no extended resource on purpose. */
static void test_provisioner_gpu_labels(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    struct node_verdict best = {.node = &w.nodes[1], .resource = GPU};
    struct kv karp[] = {{"karpenter.sh/nodepool", "gpu"},
                        {"karpenter.k8s.aws/instance-gpu-count", "1"}};
    w.nodes[0].labels = (struct kv_list){karp, 2};
    assert_string_equal(put(&w, CAUSE_NO_GPU_NODE, &best),
                        "; node node-a is labelled karpenter.k8s.aws/instance-gpu-count=1 by "
                        "Karpenter but lists no nvidia.com/gpu nor any other GPU resource: the GPU "
                        "driver installer or the device plugin has not finished there");
    karp[1] = (struct kv){"karpenter.azure.com/sku-gpu-count", "2"};
    assert_non_null(strstr(put(&w, CAUSE_NO_GPU_NODE, &best),
                           "karpenter.azure.com/sku-gpu-count=2 by Karpenter"));
    karp[1] = (struct kv){"eks.amazonaws.com/instance-gpu-count", "8"};
    assert_non_null(strstr(put(&w, CAUSE_NO_GPU_NODE, &best),
                           "eks.amazonaws.com/instance-gpu-count=8 by EKS Auto Mode"));
    static const char *const not_counts[] = {"0", "", "-1", "1x", "00"};
    for (size_t i = 0; i < sizeof(not_counts) / sizeof(not_counts[0]); i++) {
        karp[1].value = (char *)not_counts[i];
        assert_string_equal(put(&w, CAUSE_NO_GPU_NODE, &best), "");
    }
    struct kv dra[] = {{"cloud.google.com/gke-accelerator", "nvidia-l4"},
                       {"cloud.google.com/gke-gpu-dra-driver", "true"}};
    w.nodes[0].labels = (struct kv_list){dra, 2};
    assert_string_equal(put(&w, CAUSE_NO_GPU_NODE, &best), "");
    dra[1].value = "false";
    assert_non_null(strstr(put(&w, CAUSE_NO_GPU_NODE, &best), "gke-accelerator=nvidia-l4"));
}

/* Only the pod's candidates are looked at: a labelled node of another pool, or one the pod's
 * node affinity leaves out, is never named, however it is labelled. */
static void test_candidates_only(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    struct kv pool_a[] = {{"karpenter.sh/nodepool", "pool-a"}};
    struct kv pool_b[] = {{"karpenter.sh/nodepool", "pool-b"},
                          {"karpenter.k8s.aws/instance-gpu-count", "4"},
                          {"nvidia.com/mig.config.state", "pending"}};
    struct kv pool_b_cloud[] = {{"karpenter.sh/nodepool", "pool-b"},
                                {"cloud.google.com/gke-accelerator", "nvidia-l4"}};
    w.nodes[0].labels = (struct kv_list){pool_b, 3};
    w.nodes[1].labels = (struct kv_list){pool_a, 1};
    w.nodes[2].labels = (struct kv_list){pool_b_cloud, 2};
    struct resource_amount gone = {GPU, 0}; /* looked at for every word, were they candidates */
    w.nodes[0].capacity = (struct resource_list){&gone, 1};
    w.nodes[2].capacity = (struct resource_list){&gone, 1};
    struct kv sel = {"karpenter.sh/nodepool", "pool-a"};
    w.pod.node_selector = (struct kv_list){&sel, 1};
    struct node_verdict best = {.node = &w.nodes[1], .resource = GPU};
    static const enum cause words[] = {CAUSE_TAINT, CAUSE_NO_GPU_NODE, CAUSE_ALLOCATABLE_ZERO,
                                       CAUSE_EXHAUSTED};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        assert_string_equal(put(&w, words[i], &best), "");

    /* required node affinity narrows alike */
    w.pod.node_selector = (struct kv_list){0};
    const char *vals[] = {"node-b"};
    struct selector_requirement req = {.key = "kubernetes.io/hostname",
                                       .op = SELECTOR_OP_IN,
                                       .values = (char **)vals,
                                       .n_values = 1};
    struct selector_term term = {.exprs = &req, .n_exprs = 1};
    w.pod.affinity = (struct node_affinity){.present = true, .terms = &term, .n_terms = 1};
    struct kv host_b[] = {{"kubernetes.io/hostname", "node-b"}};
    w.nodes[1].labels = (struct kv_list){host_b, 1};
    assert_string_equal(put(&w, CAUSE_NO_GPU_NODE, &best), "");

    /* once they are candidates they are named, for each of the words */
    w.pod.affinity = (struct node_affinity){0};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        const char *s = put(&w, words[i], &best);
        assert_non_null(strstr(s, "reconfiguring node node-a"));
        assert_non_null(strstr(s, "node node-c is labelled cloud.google.com/gke-accelerator"));
    }
}

/* GPU stack states of candidates: the deciding node first, two named, the rest counted; a node
 * in a GPU stack state is not also named for its cloud label. */
static void test_gpu_stack_states(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    struct kv mig[] = {{"nvidia.com/mig.config", "all-1g.10gb"},
                       {"nvidia.com/mig.config.state", "pending"},
                       {"cloud.google.com/gke-accelerator", "nvidia-a100-80gb"}};
    struct kv upgrade[] = {{"nvidia.com/gpu-driver-upgrade-state", "drain-required"}};
    struct kv paused[] = {{"nvidia.com/gpu.deploy.device-plugin", "paused-for-driver-upgrade"}};
    /* GPU nodes whose plugin is gone: the resource listed at 0 (taint and exhausted look at
     * no node without any) */
    struct resource_amount gone = {GPU, 0};
    for (size_t i = 0; i < 3; i++)
        w.nodes[i].capacity = (struct resource_list){&gone, 1};
    w.nodes[0].labels = (struct kv_list){mig, 3};
    w.nodes[1].labels = (struct kv_list){upgrade, 1};
    struct node_verdict best = {.node = &w.nodes[1], .resource = GPU};
    assert_string_equal(put(&w, CAUSE_TAINT, &best),
                        "; the GPU Operator is upgrading the GPU driver on node node-b "
                        "(nvidia.com/gpu-driver-upgrade-state=drain-required); the MIG manager is "
                        "reconfiguring node node-a to all-1g.10gb (nvidia.com/mig.config.state="
                        "pending; the GPU operands are paused meanwhile, and a GPU pod that does "
                        "not end keeps it waiting)");
    w.nodes[2].labels = (struct kv_list){paused, 1};
    const char *s = put(&w, CAUSE_ALLOCATABLE_ZERO, &best);
    assert_non_null(strstr(s, "node-b (nvidia.com/gpu-driver-upgrade-state"));
    assert_non_null(strstr(s, "reconfiguring node node-a"));
    assert_null(strstr(s, "node-c"));
    assert_non_null(strstr(s, " (and 1 more node in a GPU stack state)"));
    assert_null(strstr(s, "labelled"));
    /* the deciding node without a state: the others in input order */
    w.nodes[1].labels = (struct kv_list){0};
    s = put(&w, CAUSE_EXHAUSTED, &best);
    assert_non_null(strstr(s, "; the MIG manager is reconfiguring node node-a"));
    assert_non_null(strstr(s, "; the GPU Operator paused its device-plugin on node node-c while "
                              "the driver pod's k8s-driver-manager runs"));
    /* words where a node's GPU stack is not the answer */
    assert_string_equal(put(&w, CAUSE_GPU_FITS, &best), "");
    assert_string_equal(put(&w, CAUSE_LABEL_MISMATCH, NULL), "");
    assert_string_equal(put(&w, CAUSE_OK, &best), "");
}

/* no-gpu-node: what the deciding node advertises instead, with the reason where one is known. */
static void test_other_resources(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    struct resource_amount shared[] = {{GPU, 0}, {"nvidia.com/gpu.shared", 4}};
    w.nodes[1].capacity = (struct resource_list){shared, 2};
    struct node_verdict best = {.node = &w.nodes[1], .resource = GPU};
    assert_string_equal(put(&w, CAUSE_NO_GPU_NODE, &best),
                        "; it advertises nvidia.com/gpu.shared=4 (time-slicing with "
                        "renameByDefault advertises nvidia.com/gpu.shared)");

    struct resource_amount mig[] = {{"nvidia.com/mig-1g.10gb", 0},
                                    {"nvidia.com/mig-2g.20gb", 2},
                                    {"nvidia.com/mig-3g.40gb", 1}};
    w.nodes[1].capacity = (struct resource_list){mig, 3};
    best.resource = "nvidia.com/mig-1g.10gb";
    assert_string_equal(put(&w, CAUSE_NO_GPU_NODE, &best),
                        "; it advertises nvidia.com/mig-2g.20gb=2, nvidia.com/mig-3g.40gb=1 (MIG "
                        "profiles depend on the GPU model and the node's MIG configuration)");

    /* at most six are shown */
    struct resource_amount many[8] = {
        {"example.com/a", 1}, {"example.com/b", 1}, {"example.com/c", 1}, {"example.com/d", 1},
        {"example.com/e", 1}, {"example.com/f", 1}, {"example.com/g", 1}, {"example.com/h", 1}};
    w.nodes[1].capacity = (struct resource_list){many, 8};
    best.resource = GPU;
    const char *s = put(&w, CAUSE_NO_GPU_NODE, &best);
    assert_non_null(strstr(s, "example.com/f=1"));
    assert_null(strstr(s, "example.com/g"));

    /* a node with nothing else says nothing */
    w.nodes[1].capacity = (struct resource_list){0};
    assert_string_equal(put(&w, CAUSE_NO_GPU_NODE, &best), "");
}

/* label-mismatch: time-slicing's renameByDefault appends -SHARED to the product label. */
static void test_shared_rename(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    struct kv sel = {"nvidia.com/gpu.product", "NVIDIA-A100"};
    w.pod.node_selector = (struct kv_list){&sel, 1};
    struct kv other = {"nvidia.com/gpu.product", "NVIDIA-A100-OTHER"};
    struct kv renamed = {"nvidia.com/gpu.product", "NVIDIA-A100-SHARED"};
    w.nodes[0].labels = (struct kv_list){&other, 1};
    assert_string_equal(put(&w, CAUSE_LABEL_MISMATCH, NULL), "");
    w.nodes[2].labels = (struct kv_list){&renamed, 1};
    assert_string_equal(put(&w, CAUSE_LABEL_MISMATCH, NULL),
                        "; node node-c has nvidia.com/gpu.product=NVIDIA-A100-SHARED: GPU "
                        "time-slicing with renameByDefault appends -SHARED to the product label; "
                        "select NVIDIA-A100-SHARED or turn the rename off");
    /* only for label-mismatch */
    assert_string_equal(put(&w, CAUSE_TAINT, NULL), "");
}

/* exhausted and gpu-fits: GPUs the device plugin reports unhealthy. */
static void test_unhealthy(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    struct node_verdict best = {
        .node = &w.nodes[0], .resource = GPU, .capacity = 8, .allocatable = 6};
    const char *want = "; 2 of 8 nvidia.com/gpu on node node-a are unhealthy (allocatable below "
                       "capacity)";
    assert_string_equal(put(&w, CAUSE_EXHAUSTED, &best), want);
    assert_string_equal(put(&w, CAUSE_GPU_FITS, &best), want);
    assert_string_equal(put(&w, CAUSE_NO_GPU_NODE, &best), "");
    best.allocatable = 8;
    assert_string_equal(put(&w, CAUSE_EXHAUSTED, &best), "");
    best.allocatable = 0; /* allocatable-zero's own word says it */
    assert_string_equal(put(&w, CAUSE_EXHAUSTED, &best), "");
    best.allocatable = 6;
    best.resource = NULL;
    assert_string_equal(put(&w, CAUSE_EXHAUSTED, &best), "");
    assert_string_equal(put(&w, CAUSE_EXHAUSTED, NULL), "");
}

/* A resource only HAMi's or Volcano's scheduler places, asked of another scheduler. */
static void test_vendor_resource(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    w.pod.vendor_resource = "nvidia.com/gpumem";
    assert_string_equal(put(&w, CAUSE_NO_GPU_NODE, NULL),
                        "; nvidia.com/gpumem is placed only by hami-scheduler, and this pod uses "
                        "schedulerName default-scheduler (no node advertises it: that scheduler "
                        "reports Insufficient nvidia.com/gpumem)");
    w.pod.scheduler_name = "my-scheduler";
    assert_non_null(strstr(put(&w, CAUSE_LABEL_MISMATCH, NULL), "schedulerName my-scheduler"));
    assert_non_null(strstr(put(&w, CAUSE_GPU_FITS, NULL), "hami-scheduler"));
    /* the right scheduler, or a word before the per-node steps: nothing */
    w.pod.scheduler_name = "hami-scheduler";
    assert_string_equal(put(&w, CAUSE_NO_GPU_NODE, NULL), "");
    w.pod.scheduler_name = NULL;
    assert_string_equal(put(&w, CAUSE_OK, NULL), "");
    assert_string_equal(put(&w, CAUSE_NO_REQUEST, NULL), "");
    w.pod.vendor_resource = "volcano.sh/vgpu-number";
    w.pod.scheduler_name = "";
    assert_non_null(strstr(put(&w, CAUSE_EXHAUSTED, NULL),
                           "placed only by volcano, and this pod uses schedulerName "
                           "default-scheduler"));
}

/* Hints append to what the line already holds, and a full line drops them. */
static void test_appends_bounded(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    w.pod.vendor_resource = "nvidia.com/gpucores";
    char small[24];
    struct line l = {.buf = small, .cap = sizeof(small)};
    line_printf(&l, "no-gpu-node");
    hints_put(&l, &w.in, CAUSE_NO_GPU_NODE, NULL);
    line_finish(&l);
    assert_true(l.truncated);
    assert_string_equal(small, "no-gpu-node; nvidia.com");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cloud_node_not_ready),
        cmocka_unit_test(test_provisioner_gpu_labels),
        cmocka_unit_test(test_candidates_only),
        cmocka_unit_test(test_gpu_stack_states),
        cmocka_unit_test(test_other_resources),
        cmocka_unit_test(test_shared_rename),
        cmocka_unit_test(test_unhealthy),
        cmocka_unit_test(test_vendor_resource),
        cmocka_unit_test(test_appends_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
