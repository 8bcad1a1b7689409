/* test_match.c - core/classify/match.c: ToleratesTaint and node selection tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "classify/match.h"

#define S(x) ((char *)(x))

struct tol_case {
    const char *tkey, *top, *tvalue, *teffect; /* toleration */
    const char *key, *value, *effect;          /* taint */
    bool want;
};

static const struct tol_case tol_cases[] = {
    /* Equal */
    {"nvidia.com/gpu", "Equal", "present", "NoSchedule", "nvidia.com/gpu", "present", "NoSchedule",
     true},
    {"nvidia.com/gpu", "Equal", "present", "NoSchedule", "nvidia.com/gpu", "true", "NoSchedule",
     false},
    {"nvidia.com/gpu", "Equal", "", "NoSchedule", "nvidia.com/gpu", "", "NoSchedule", true},
    {"nvidia.com/gpu", "Equal", "", "NoSchedule", "nvidia.com/gpu", "present", "NoSchedule", false},
    /* "" operator means Equal */
    {"nvidia.com/gpu", "", "present", "NoSchedule", "nvidia.com/gpu", "present", "NoSchedule",
     true},
    {"nvidia.com/gpu", "", "x", "NoSchedule", "nvidia.com/gpu", "present", "NoSchedule", false},
    /* Exists ignores the value */
    {"nvidia.com/gpu", "Exists", "", "NoSchedule", "nvidia.com/gpu", "present", "NoSchedule", true},
    {"nvidia.com/gpu", "Exists", "", "", "nvidia.com/gpu", "present", "NoExecute", true},
    /* empty effect matches every effect; a set effect must be equal */
    {"nvidia.com/gpu", "Equal", "present", "", "nvidia.com/gpu", "present", "NoExecute", true},
    {"nvidia.com/gpu", "Equal", "present", "NoSchedule", "nvidia.com/gpu", "present", "NoExecute",
     false},
    {"nvidia.com/gpu", "Exists", "", "PreferNoSchedule", "nvidia.com/gpu", "", "NoSchedule", false},
    /* empty key with Exists matches every key */
    {"", "Exists", "", "", "anything", "v", "NoSchedule", true},
    {"", "Exists", "", "NoExecute", "anything", "v", "NoSchedule", false},
    /* empty key with Equal: every key, value compared (validation forbids it, the matcher not) */
    {"", "Equal", "v", "", "anything", "v", "NoSchedule", true},
    {"", "Equal", "v", "", "anything", "w", "NoSchedule", false},
    /* a different key */
    {"gpu", "Exists", "", "", "nvidia.com/gpu", "", "NoSchedule", false},
    /* unknown and gated operators never tolerate */
    {"nvidia.com/gpu", "Lt", "5", "", "nvidia.com/gpu", "3", "NoSchedule", false},
    {"nvidia.com/gpu", "Gt", "1", "", "nvidia.com/gpu", "3", "NoSchedule", false},
    {"nvidia.com/gpu", "exists", "", "", "nvidia.com/gpu", "", "NoSchedule", false},
};

static void test_toleration_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(tol_cases) / sizeof(tol_cases[0]); i++) {
        const struct tol_case *c = &tol_cases[i];
        struct toleration tol = {S(c->tkey), S(c->top), S(c->tvalue), S(c->teffect)};
        struct taint taint = {S(c->key), S(c->value), S(c->effect)};
        if (toleration_tolerates_taint(&tol, &taint) != c->want)
            fail_msg("case %zu: toleration %s %s %s %s vs taint %s=%s:%s want %d", i, c->tkey,
                     c->top, c->tvalue, c->teffect, c->key, c->value, c->effect, c->want);
    }
    /* NULL strings read as "" */
    struct toleration nul = {NULL, S("Exists"), NULL, NULL};
    struct taint t = {S("k"), S(""), S("NoSchedule")};
    assert_true(toleration_tolerates_taint(&nul, &t));
}

static void test_first_untolerated(void **state)
{
    (void)state;
    struct taint taints[] = {
        {S("soft"), S(""), S("PreferNoSchedule")},
        {S("nvidia.com/gpu"), S("present"), S("NoSchedule")},
        {S("dedicated"), S("ml"), S("NoExecute")},
    };
    struct knode node = {.name = S("n"), .taints = taints, .n_taints = 3};
    /* no tolerations: PreferNoSchedule skipped, the gpu taint is first */
    assert_ptr_equal(node_first_untolerated_taint(&node, NULL, 0), &taints[1]);
    struct toleration tols[] = {
        {S("nvidia.com/gpu"), S("Exists"), S(""), S("NoSchedule")},
    };
    assert_ptr_equal(node_first_untolerated_taint(&node, tols, 1), &taints[2]);
    struct toleration all[] = {
        {S("dedicated"), S("Equal"), S("ml"), S("")},
        {S("nvidia.com/gpu"), S("Equal"), S("present"), S("NoSchedule")},
    };
    assert_null(node_first_untolerated_taint(&node, all, 2));
    struct toleration everything = {S(""), S("Exists"), S(""), S("")};
    assert_null(node_first_untolerated_taint(&node, &everything, 1));
    assert_false(taint_blocks_scheduling(&taints[0]));
    assert_true(taint_blocks_scheduling(&taints[1]));
    assert_true(taint_blocks_scheduling(&taints[2]));
}

static void test_cordon(void **state)
{
    (void)state;
    struct knode node = {.name = S("n"), .unschedulable = true};
    assert_true(node_cordon_blocks(&node, NULL, 0));
    struct toleration exact = {S(TAINT_NODE_UNSCHEDULABLE), S("Exists"), S(""), S("NoSchedule")};
    assert_false(node_cordon_blocks(&node, &exact, 1));
    struct toleration wrong_effect = {S(TAINT_NODE_UNSCHEDULABLE), S("Exists"), S(""),
                                      S("NoExecute")};
    assert_true(node_cordon_blocks(&node, &wrong_effect, 1));
    struct toleration everything = {S(""), S("Exists"), S(""), S("")};
    assert_false(node_cordon_blocks(&node, &everything, 1));
    struct toleration equal_empty = {S(TAINT_NODE_UNSCHEDULABLE), S("Equal"), S(""), S("")};
    assert_false(node_cordon_blocks(&node, &equal_empty, 1));
    node.unschedulable = false;
    assert_false(node_cordon_blocks(&node, NULL, 0));
}

/* node labels used by the selector table */
static struct kv labels_items[] = {
    {S("kubernetes.io/hostname"), S("gpu-node-1")},
    {S("nvidia.com/gpu.product"), S("NVIDIA-A100-SXM4-40GB")},
    {S("nvidia.com/gpu.count"), S("8")},
    {S("zone"), S("a")},
    {S("bad-int"), S("eight")},
};

struct req_case {
    const char *key;
    enum selector_op op;
    const char *values[3];
    size_t n_values;
    bool want;
};

static const struct req_case req_cases[] = {
    {"zone", SELECTOR_OP_IN, {"a", "b"}, 2, true},
    {"zone", SELECTOR_OP_IN, {"b"}, 1, false},
    {"missing", SELECTOR_OP_IN, {"a"}, 1, false},
    {"zone", SELECTOR_OP_IN, {NULL}, 0, false}, /* In needs values */
    {"zone", SELECTOR_OP_NOT_IN, {"b"}, 1, true},
    {"zone", SELECTOR_OP_NOT_IN, {"a", "b"}, 2, false},
    {"missing", SELECTOR_OP_NOT_IN, {"a"}, 1, true}, /* absent label matches NotIn */
    {"missing", SELECTOR_OP_NOT_IN, {NULL}, 0, false},
    {"zone", SELECTOR_OP_EXISTS, {NULL}, 0, true},
    {"missing", SELECTOR_OP_EXISTS, {NULL}, 0, false},
    {"zone", SELECTOR_OP_EXISTS, {"a"}, 1, false}, /* Exists takes no values */
    {"missing", SELECTOR_OP_DOES_NOT_EXIST, {NULL}, 0, true},
    {"zone", SELECTOR_OP_DOES_NOT_EXIST, {NULL}, 0, false},
    {"missing", SELECTOR_OP_DOES_NOT_EXIST, {"x"}, 1, false},
    {"nvidia.com/gpu.count", SELECTOR_OP_GT, {"4"}, 1, true},
    {"nvidia.com/gpu.count", SELECTOR_OP_GT, {"8"}, 1, false}, /* strict */
    {"nvidia.com/gpu.count", SELECTOR_OP_GT, {"-1"}, 1, true},
    {"nvidia.com/gpu.count", SELECTOR_OP_GT, {"+7"}, 1, true},
    {"nvidia.com/gpu.count", SELECTOR_OP_LT, {"9"}, 1, true},
    {"nvidia.com/gpu.count", SELECTOR_OP_LT, {"8"}, 1, false},
    {"nvidia.com/gpu.count", SELECTOR_OP_GT, {"4", "5"}, 2, false}, /* exactly one value */
    {"nvidia.com/gpu.count", SELECTOR_OP_GT, {NULL}, 0, false},
    {"nvidia.com/gpu.count", SELECTOR_OP_GT, {"4.5"}, 1, false},
    {"nvidia.com/gpu.count", SELECTOR_OP_GT, {"99999999999999999999"}, 1, false},
    {"nvidia.com/gpu.count", SELECTOR_OP_LT, {" 9"}, 1, false},
    {"bad-int", SELECTOR_OP_GT, {"1"}, 1, false},
    {"missing", SELECTOR_OP_LT, {"1"}, 1, false},
    {"zone", SELECTOR_OP_UNKNOWN, {"a"}, 1, false},
};

/* The taints Kubernetes manages to report a node's state are recognized by key alone. */
static void test_node_condition_taints(void **state)
{
    (void)state;
    static const char *managed[] = {
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/pid-pressure",
        "node.kubernetes.io/network-unavailable",
        "node.kubernetes.io/unschedulable",
        "node.kubernetes.io/out-of-service",
        "node.cloudprovider.kubernetes.io/uninitialized",
        /* node autoscalers' */
        "karpenter.sh/unregistered",
        "karpenter.sh/disrupted",
        "karpenter.sh/rebooting",
        "ToBeDeletedByClusterAutoscaler",
        "DeletionCandidateOfClusterAutoscaler",
    };
    for (size_t i = 0; i < sizeof(managed) / sizeof(managed[0]); i++) {
        struct taint t = {(char *)managed[i], NULL, (char *)"NoExecute"};
        const struct node_condition_taint *c = taint_node_condition(&t);
        assert_non_null(c);
        assert_string_equal(c->key, managed[i]);
        assert_true(c->state[0] && c->setter[0] && c->remedy[0]);
        assert_null(strstr(c->remedy, "tolerat"));
        assert_int_equal(c->autoscaler, i >= 9);
        assert_true(taint_is_node_condition(&t));
    }
    struct taint t = {(char *)"node.kubernetes.io/not-ready", NULL, (char *)"NoSchedule"};
    assert_string_equal(taint_node_condition(&t)->state, "is not ready");
    assert_string_equal(taint_node_condition(&t)->remedy, "fix the node");
    t.key = (char *)"karpenter.sh/unregistered";
    assert_string_equal(taint_node_condition(&t)->state, "is still joining");
    assert_string_equal(taint_node_condition(&t)->setter, "Karpenter");

    /* the Cluster Autoscaler's deletion candidate is PreferNoSchedule: it never blocks */
    struct taint candidate = {(char *)"DeletionCandidateOfClusterAutoscaler", (char *)"1733478000",
                              (char *)"PreferNoSchedule"};
    struct knode unneeded = {.name = (char *)"n", .taints = &candidate, .n_taints = 1};
    assert_false(taint_blocks_scheduling(&candidate));
    assert_null(node_first_untolerated_taint(&unneeded, NULL, 0));
    static const char *other[] = {"nvidia.com/gpu", "node.kubernetes.io/not-ready-x",
                                  "node.kubernetes.io", "",
                                  "node-role.kubernetes.io/control-plane"};
    for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
        struct taint o = {(char *)other[i], NULL, (char *)"NoSchedule"};
        assert_false(taint_is_node_condition(&o));
    }
    struct taint nokey = {0};
    assert_null(taint_node_condition(&nokey));
    assert_null(taint_node_condition(NULL));
}

static void test_requirement_table(void **state)
{
    (void)state;
    struct kv_list labels = {labels_items, sizeof(labels_items) / sizeof(labels_items[0])};
    for (size_t i = 0; i < sizeof(req_cases) / sizeof(req_cases[0]); i++) {
        const struct req_case *c = &req_cases[i];
        char *values[3] = {S(c->values[0]), S(c->values[1]), S(c->values[2])};
        struct selector_requirement r = {S(c->key), c->op, values, c->n_values};
        if (selector_requirement_matches_labels(&r, &labels) != c->want)
            fail_msg("requirement case %zu (%s op %d) want %d", i, c->key, c->op, c->want);
    }
}

static void test_fields(void **state)
{
    (void)state;
    char *one[] = {S("gpu-node-1")};
    char *two[] = {S("gpu-node-1"), S("gpu-node-2")};
    struct selector_requirement in = {S("metadata.name"), SELECTOR_OP_IN, one, 1};
    struct selector_requirement not_in = {S("metadata.name"), SELECTOR_OP_NOT_IN, one, 1};
    struct selector_requirement in_two = {S("metadata.name"), SELECTOR_OP_IN, two, 2};
    struct selector_requirement exists = {S("metadata.name"), SELECTOR_OP_EXISTS, NULL, 0};
    struct selector_requirement other = {S("metadata.namespace"), SELECTOR_OP_IN, one, 1};
    assert_true(selector_requirement_matches_fields(&in, "gpu-node-1"));
    assert_false(selector_requirement_matches_fields(&in, "gpu-node-2"));
    assert_false(selector_requirement_matches_fields(&not_in, "gpu-node-1"));
    assert_true(selector_requirement_matches_fields(&not_in, "gpu-node-2"));
    assert_false(selector_requirement_matches_fields(&in_two, "gpu-node-1"));
    assert_false(selector_requirement_matches_fields(&exists, "gpu-node-1"));
    assert_false(selector_requirement_matches_fields(&other, "gpu-node-1"));
}

static void test_terms_and_affinity(void **state)
{
    (void)state;
    struct kv_list labels = {labels_items, sizeof(labels_items) / sizeof(labels_items[0])};
    struct knode node = {.name = S("gpu-node-1"), .labels = labels};
    char *a100[] = {S("NVIDIA-A100-SXM4-40GB")};
    char *h100[] = {S("NVIDIA-H100-80GB-HBM3")};
    char *name1[] = {S("gpu-node-1")};
    char *name2[] = {S("gpu-node-2")};
    struct selector_requirement want_a100 = {S("nvidia.com/gpu.product"), SELECTOR_OP_IN, a100, 1};
    struct selector_requirement want_h100 = {S("nvidia.com/gpu.product"), SELECTOR_OP_IN, h100, 1};
    struct selector_requirement bad = {S("zone"), SELECTOR_OP_EXISTS, a100, 1};
    struct selector_requirement f1 = {S("metadata.name"), SELECTOR_OP_IN, name1, 1};
    struct selector_requirement f2 = {S("metadata.name"), SELECTOR_OP_IN, name2, 1};

    struct selector_term empty = {0};
    assert_false(selector_term_matches(&empty, &node));
    struct selector_term t_a100 = {&want_a100, 1, NULL, 0};
    struct selector_term t_h100 = {&want_h100, 1, NULL, 0};
    struct selector_term t_fields1 = {NULL, 0, &f1, 1};
    struct selector_term t_both_ok = {&want_a100, 1, &f1, 1};
    struct selector_term t_both_bad = {&want_a100, 1, &f2, 1};
    assert_true(selector_term_matches(&t_a100, &node));
    assert_false(selector_term_matches(&t_h100, &node));
    assert_true(selector_term_matches(&t_fields1, &node));
    assert_true(selector_term_matches(&t_both_ok, &node));
    assert_false(selector_term_matches(&t_both_bad, &node));
    /* an invalid requirement spoils its term even if the others match */
    struct selector_requirement a100_and_bad[] = {want_a100, bad};
    struct selector_term t_invalid = {a100_and_bad, 2, NULL, 0};
    assert_false(selector_term_matches(&t_invalid, &node));

    struct node_affinity none = {0};
    assert_true(node_affinity_matches(&none, &node));
    struct node_affinity no_terms = {.present = true};
    assert_false(node_affinity_matches(&no_terms, &node));
    struct selector_term or_terms[] = {t_h100, empty, t_a100};
    struct node_affinity ored = {true, or_terms, 3};
    assert_true(node_affinity_matches(&ored, &node));
    struct node_affinity only_h100 = {true, &t_h100, 1};
    assert_false(node_affinity_matches(&only_h100, &node));
    struct node_affinity only_empty = {true, &empty, 1};
    assert_false(node_affinity_matches(&only_empty, &node));
}

static void test_node_selector(void **state)
{
    (void)state;
    struct kv_list labels = {labels_items, sizeof(labels_items) / sizeof(labels_items[0])};
    struct knode node = {.name = S("gpu-node-1"), .labels = labels};
    struct kv sel_ok[] = {{S("zone"), S("a")}, {S("kubernetes.io/hostname"), S("gpu-node-1")}};
    struct kv sel_bad[] = {{S("zone"), S("a")}, {S("nvidia.com/gpu.product"), S("H100")}};
    struct kv sel_case[] = {{S("zone"), S("A")}};
    struct kv sel_missing[] = {{S("pool"), S("")}};
    struct kv_list empty = {0};
    assert_true(node_selector_matches(&empty, &labels));
    assert_true(node_selector_matches(&(struct kv_list){sel_ok, 2}, &labels));
    assert_false(node_selector_matches(&(struct kv_list){sel_bad, 2}, &labels));
    assert_false(node_selector_matches(&(struct kv_list){sel_case, 1}, &labels));
    assert_false(node_selector_matches(&(struct kv_list){sel_missing, 1}, &labels));

    /* both nodeSelector and affinity must pass */
    char *h100[] = {S("H100")};
    struct selector_requirement want_h100 = {S("nvidia.com/gpu.product"), SELECTOR_OP_IN, h100, 1};
    struct selector_term t = {&want_h100, 1, NULL, 0};
    struct kpod pod = {.name = S("p")};
    pod.node_selector = (struct kv_list){sel_ok, 2};
    assert_true(pod_matches_node_selection(&pod, &node));
    pod.affinity = (struct node_affinity){true, &t, 1};
    assert_false(pod_matches_node_selection(&pod, &node));
    pod.node_selector = (struct kv_list){sel_bad, 2};
    pod.affinity = (struct node_affinity){0};
    assert_false(pod_matches_node_selection(&pod, &node));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_toleration_table),
        cmocka_unit_test(test_first_untolerated),
        cmocka_unit_test(test_cordon),
        cmocka_unit_test(test_node_condition_taints),
        cmocka_unit_test(test_requirement_table),
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_terms_and_affinity),
        cmocka_unit_test(test_node_selector),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
