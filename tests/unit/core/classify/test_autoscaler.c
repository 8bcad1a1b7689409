/*
 * test_autoscaler.c - core/classify/autoscaler.c: the autoscalers' Events about a pod as evidence.
 * Every fixture of tests/fixtures/autoscaler (one core/v1 Event each, as the writer's client-go
 * recorder stores it) is read through gputri's projection (kube/project.h project_event) and
 * checked against the table below, detail line included.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "classify/autoscaler.h"
#include "kube/project.h"
#include "objects.h"
#include "util/result.h"
#include "util/utf8.h"

#define CAT(c) AUTOSCALER_CAT_##c
/* The fixtures' times are seconds after 2026-12-01T10:00:00Z; "now" is 10 minutes later. */
#define T0 1796119200
#define NOW (T0 + 600)

struct expect {
    const char *file;
    bool evidence;
    enum autoscaler_writer writer;
    enum autoscaler_kind kind;
    int64_t at; /* seconds after T0; -1: none */
    int32_t count;
    unsigned categories;
    unsigned n_groups, n_items;
    const char *name, *node;
    const char *detail; /* with now = NOW */
};

static const struct expect fixtures[] = {
    {"ca-not-triggered-combined.json", true, AUTOSCALER_CA, AUTOSCALER_REFUSED, 420, 14,
     CAT(AT_MAX) | CAT(TEMPLATE), 0, 2, "", "",
     "Cluster Autoscaler did not scale up (3m ago, 14 times): 1 node group at its max size (raise "
     "the max size or the autoscaler's limits); 2 node groups whose template has insufficient "
     "nvidia.com/gpu (fix the node group template's resources, labels or taints; from zero: its "
     "node-template tags)"},
    {"ca-not-triggered-dra.json", true, AUTOSCALER_CA, AUTOSCALER_REFUSED, 20, 1,
     CAT(TEMPLATE) | CAT(OTHER), 0, 2, "", "",
     "Cluster Autoscaler did not scale up (9m ago): 2 node groups whose template cannot allocate "
     "the pod's claims (fix the node group template's resources, labels or taints; from zero: its "
     "node-template tags); 1 node group: \"expansion options filtered out and no longer "
     "considered\""},
    {"ca-not-triggered-limit-1.34.json", true, AUTOSCALER_CA, AUTOSCALER_REFUSED, 20, 1,
     CAT(AT_MAX) | CAT(TEMPLATE), 0, 2, "", "",
     "Cluster Autoscaler did not scale up (9m ago): 3 node groups over the autoscaler's resource "
     "limits (max cluster cpu, nvidia.com/gpu limit reached) (raise the max size or the "
     "autoscaler's limits); 1 node group whose template has insufficient nvidia.com/gpu (fix the "
     "node group template's resources, labels or taints; from zero: its node-template tags)"},
    {"ca-not-triggered-max-total.json", true, AUTOSCALER_CA, AUTOSCALER_REFUSED, 20, 1, CAT(AT_MAX),
     0, 1, "", "",
     "Cluster Autoscaler did not scale up (9m ago): the cluster at its maximum node count "
     "(--max-nodes-total) (raise the max size or the autoscaler's limits)"},
    {"ca-not-triggered-old-reasons.json", true, AUTOSCALER_CA, AUTOSCALER_REFUSED, 20, 1,
     CAT(AT_MAX) | CAT(TEMPLATE), 0, 2, "", "",
     "Cluster Autoscaler did not scale up (9m ago): 7 node groups at their max size (raise the max "
     "size or the autoscaler's limits); 16 node groups whose template does not match the pod's "
     "node selector or affinity (fix the node group template's resources, labels or taints; from "
     "zero: its node-template tags)"},
    {"ca-not-triggered-old.json", true, AUTOSCALER_CA, AUTOSCALER_REFUSED, 20, 1, CAT(TEMPLATE), 0,
     1, "", "",
     "Cluster Autoscaler did not scale up (9m ago): the pod would not fit on a new node of any "
     "node group (fix the node group template's resources, labels or taints; from zero: its "
     "node-template tags)"},
    {"ca-not-triggered-one.json", true, AUTOSCALER_CA, AUTOSCALER_REFUSED, 620, 61, CAT(AT_MAX), 0,
     1, "", "",
     "Cluster Autoscaler did not scale up (0s ago, 61 times): 1 node group at its max size (raise "
     "the max size or the autoscaler's limits)"},
    {"ca-not-triggered-quota-1.35.json", true, AUTOSCALER_CA, AUTOSCALER_REFUSED, 20, 1,
     CAT(AT_MAX) | CAT(OTHER), 0, 2, "", "",
     "Cluster Autoscaler did not scale up (9m ago): 2 node groups over the autoscaler's resource "
     "limits (exceeded quota: \"cluster-wide\", resources: nvidia.com/gpu) (raise the max size or "
     "the autoscaler's limits); 1 node group: \"not ready for scale-up\""},
    {"ca-not-triggered-taint-backoff.json", true, AUTOSCALER_CA, AUTOSCALER_REFUSED, 20, 1,
     CAT(TEMPLATE) | CAT(BACKOFF), 0, 2, "", "",
     "Cluster Autoscaler did not scale up (9m ago): 2 node groups whose templates have a taint the "
     "pod does not tolerate {nvidia.com/gpu: present} (fix the node group template's resources, "
     "labels or taints; from zero: its node-template tags); 1 node group in backoff after a failed "
     "scale-up (see the ConfigMap kube-system/cluster-autoscaler-status)"},
    {"ca-not-triggered-three.json", true, AUTOSCALER_CA, AUTOSCALER_REFUSED, 20, 1,
     CAT(AT_MAX) | CAT(TEMPLATE), 0, 3, "", "",
     "Cluster Autoscaler did not scale up (9m ago): 1 node group at its max size (raise the max "
     "size or the autoscaler's limits); 2 node groups whose template has insufficient "
     "nvidia.com/gpu, 3 node groups whose template does not match the pod's node selector or "
     "affinity (fix the node group template's resources, labels or taints; from zero: its "
     "node-template tags)"},
    {"ca-triggered-gke-mig.json", true, AUTOSCALER_GKE, AUTOSCALER_TRIGGERED, 40, 1, 0, 1, 0, "",
     "",
     "GKE's cluster autoscaler is adding nodes (9m ago): gke-ml-gpu-l4-3f2a9c1e-grp 0->1 (max: 8)"},
    {"ca-triggered-old.json", true, AUTOSCALER_GKE, AUTOSCALER_TRIGGERED, 40, 1, 0, 1, 0, "", "",
     "GKE's cluster autoscaler is adding nodes (9m ago): gke-ml-gpu-pool-grp 3->4"},
    {"ca-triggered-one.json", true, AUTOSCALER_CA, AUTOSCALER_TRIGGERED, 30, 1, 0, 1, 0, "", "",
     "Cluster Autoscaler is adding nodes (9m ago): eks-gpu-a10g-20c9d1e2 0->1 (max: 4)"},
    {"ca-triggered-two.json", true, AUTOSCALER_CA, AUTOSCALER_TRIGGERED, 30, 1, 0, 2, 0, "", "",
     "Cluster Autoscaler is adding nodes (9m ago): gpu-pool-a 0->1 (max: 4), gpu-pool-b 1->2 (max: "
     "4)"},
    {"gke-failed-cut.json", true, AUTOSCALER_GKE, AUTOSCALER_FAILED, 90, 1,
     CAT(QUOTA) | CAT(CAPACITY), 0, 3, "us-central1-a, us-central1-b, us-central1-c, us-central1-f",
     "",
     "GKE's cluster autoscaler failed to add a node in us-central1-a, us-central1-b, "
     "us-central1-c, us-central1-f (8m ago): \"GCE quota exceeded\" (request more cloud quota); "
     "\"Reservation capacity exceeded: projects/ml-prod/reservations/l4-reserved\", \"GCE out of "
     "resources\" (no cloud capacity: try another zone, instance type or a reservation)"},
    {"gke-failed-internal-no-zone.json", true, AUTOSCALER_GKE, AUTOSCALER_FAILED, 90, 1, CAT(OTHER),
     0, 1, "", "", "GKE's cluster autoscaler failed to add a node (8m ago): \"Internal error\""},
    {"gke-failed-quota.json", true, AUTOSCALER_GKE, AUTOSCALER_FAILED, 90, 1, CAT(QUOTA), 0, 1,
     "us-central1-c", "",
     "GKE's cluster autoscaler failed to add a node in us-central1-c (8m ago): \"GCE quota "
     "exceeded\" (request more cloud quota)"},
    {"gke-failed-stockout-two-zones.json", true, AUTOSCALER_GKE, AUTOSCALER_FAILED, 90, 1,
     CAT(CAPACITY) | CAT(OTHER), 0, 2, "us-central1-a, us-central1-b", "",
     "GKE's cluster autoscaler failed to add a node in us-central1-a, us-central1-b (8m ago): "
     "\"GCE out of resources\" (no cloud capacity: try another zone, instance type or a "
     "reservation); \"Some nodes in node group [\"gke-ml-gpu-l4-3f2a9c1e-grp\"] failed to appear "
     "in time\""},
    {"karpenter-failed-dra-allocator.json", true, AUTOSCALER_KARPENTER, AUTOSCALER_REFUSED, 12, 1,
     CAT(TEMPLATE), 0, 1, "", "",
     "Karpenter cannot launch a node for the pod (9m ago): no instance type serves the pod's "
     "claims (\"no instance type satisfies both scheduling and dynamic resource requirements\") "
     "(fix the NodePool's requirements, taints or instance types)"},
    {"karpenter-failed-dra.json", true, AUTOSCALER_KARPENTER, AUTOSCALER_REFUSED, 12, 1, CAT(DRA),
     0, 1, "", "",
     "Karpenter cannot launch a node for the pod (9m ago): the pod has resource claims (DRA), "
     "which Karpenter does not provision for (Karpenter skips pods with resource claims unless "
     "--ignore-dra-requests=false)"},
    {"karpenter-failed-eks-auto.json", true, AUTOSCALER_KARPENTER, AUTOSCALER_REFUSED, 12, 1,
     CAT(AT_MAX) | CAT(TEMPLATE), 0, 2, "spot-pool", "",
     "Karpenter cannot launch a node for the pod (9m ago, NodePool spot-pool): \"all available "
     "instance types exceed limits\" (raise the NodePool's limits); \"no instance type has enough "
     "resources\" (fix the NodePool's requirements, taints or instance types)"},
    {"karpenter-failed-filtered.json", true, AUTOSCALER_KARPENTER, AUTOSCALER_REFUSED, 12, 1,
     CAT(TEMPLATE), 0, 1, "", "",
     "Karpenter cannot launch a node for the pod (9m ago): \"nodepool requirements filtered out "
     "all available instance types\" (fix the NodePool's requirements, taints or instance types)"},
    {"karpenter-failed-incompatible.json", true, AUTOSCALER_KARPENTER, AUTOSCALER_REFUSED, 12, 1,
     CAT(TEMPLATE), 0, 1, "", "",
     "Karpenter cannot launch a node for the pod (9m ago): \"incompatible requirements, key "
     "nvidia.com/gpu.product, nvidia.com/gpu.product In [NVIDIA-H100-80GB-HBM3] not in "
     "nvidia....\" (fix the NodePool's requirements, taints or instance types)"},
    {"karpenter-failed-limits.json", true, AUTOSCALER_KARPENTER, AUTOSCALER_REFUSED, 12, 1,
     CAT(AT_MAX), 0, 1, "", "",
     "Karpenter cannot launch a node for the pod (9m ago): \"all available instance types exceed "
     "limits\" (raise the NodePool's limits)"},
    {"karpenter-failed-no-resources.json", true, AUTOSCALER_KARPENTER, AUTOSCALER_REFUSED, 12, 1,
     CAT(TEMPLATE), 0, 1, "", "",
     "Karpenter cannot launch a node for the pod (9m ago): \"no instance type has enough "
     "resources\" (fix the NodePool's requirements, taints or instance types)"},
    {"karpenter-failed-node-limits.json", true, AUTOSCALER_KARPENTER, AUTOSCALER_REFUSED, 12, 1,
     CAT(AT_MAX), 0, 1, "", "",
     "Karpenter cannot launch a node for the pod (9m ago): \"node limits have been exhausted\" "
     "(raise the NodePool's limits)"},
    {"karpenter-failed-offering.json", true, AUTOSCALER_KARPENTER, AUTOSCALER_REFUSED, 12, 1,
     CAT(CAPACITY), 0, 1, "", "",
     "Karpenter cannot launch a node for the pod (9m ago): \"no instance type has the required "
     "offering\" (no cloud capacity: try another zone, instance type or a reservation)"},
    {"karpenter-failed-old-nodepool.json", true, AUTOSCALER_KARPENTER, AUTOSCALER_REFUSED, 12, 1,
     CAT(AT_MAX) | CAT(TEMPLATE), 0, 2, "gpu", "",
     "Karpenter cannot launch a node for the pod (9m ago, NodePool gpu): \"all available instance "
     "types exceed limits\" (raise the NodePool's limits); \"no instance type satisfied "
     "resources\" (fix the NodePool's requirements, taints or instance types)"},
    {"karpenter-failed-requirements-or-offering.json", true, AUTOSCALER_KARPENTER,
     AUTOSCALER_REFUSED, 12, 1, CAT(CAPACITY) | CAT(TEMPLATE), 0, 1, "", "",
     "Karpenter cannot launch a node for the pod (9m ago): \"no instance type met the scheduling "
     "requirements or had a required offering\" (fix the NodePool's requirements, taints or "
     "instance types); no cloud capacity: try another zone, instance type or a reservation"},
    {"karpenter-failed-two-nodepools.json", true, AUTOSCALER_KARPENTER, AUTOSCALER_REFUSED, 12, 1,
     CAT(AT_MAX) | CAT(TEMPLATE), 0, 3, "", "",
     "Karpenter cannot launch a node for the pod (9m ago): \"all available instance types exceed "
     "limits\" (raise the NodePool's limits); a NodePool has a taint the pod does not tolerate, "
     "\"no instance type has enough resources\" (fix the NodePool's requirements, taints or "
     "instance types)"},
    {"karpenter-failed-unknown-label.json", true, AUTOSCALER_KARPENTER, AUTOSCALER_REFUSED, 12, 1,
     CAT(TEMPLATE), 0, 1, "", "",
     "Karpenter cannot launch a node for the pod (9m ago): \"incompatible requirements, label "
     "\"cloud.google.com/gke-accelerator\" does not have known values\" (fix the NodePool's "
     "requirements, taints or instance types)"},
    {"karpenter-ice.json", true, AUTOSCALER_KARPENTER, AUTOSCALER_FAILED, 200, 1, CAT(CAPACITY), 0,
     1, "gpu-x7k2p", "",
     "Karpenter's nodeclaim gpu-x7k2p failed to launch (6m ago): \"creating instance, insufficient "
     "capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have s...\" "
     "(no cloud capacity: try another zone, instance type or a reservation)"},
    {"karpenter-nominated-node.json", true, AUTOSCALER_KARPENTER, AUTOSCALER_NOMINATED, 75, 1, 0, 0,
     0, "gpu-x7k2p", "ip-10-0-12-34.ec2.internal",
     "Karpenter is launching nodeclaim gpu-x7k2p (node ip-10-0-12-34.ec2.internal) for the pod (8m "
     "ago)"},
    {"karpenter-nominated.json", true, AUTOSCALER_KARPENTER, AUTOSCALER_NOMINATED, 12, 1, 0, 0, 0,
     "gpu-x7k2p", "", "Karpenter is launching nodeclaim gpu-x7k2p for the pod (9m ago)"},
    {"not-evidence-nodeclaim.json", false, AUTOSCALER_NONE, AUTOSCALER_KIND_NONE, -1, 0, 0, 0, 0,
     "", "", ""},
    {"not-evidence-scheduler.json", false, AUTOSCALER_NONE, AUTOSCALER_KIND_NONE, -1, 0, 0, 0, 0,
     "", "", ""},
};

static const struct expect *expect_for(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++)
        if (!strcmp(fixtures[i].file, base))
            return &fixtures[i];
    return NULL;
}

/* Read a fixture through project_event and autoscaler_parse. */
static bool load(const char *rel, struct kevent *ev, struct autoscaler_evidence *e)
{
    char path[512];
    snprintf(path, sizeof(path), "autoscaler/%s", rel);
    json_object *o = test_load_json(FIXTURES_DIR, path);
    assert_non_null(o);
    assert_int_equal(project_event(o, ev), K_OK);
    json_object_put(o);
    return autoscaler_parse(ev, e);
}

static void detail_of(const struct autoscaler_evidence *e, int64_t now, char *buf, size_t cap)
{
    struct line l = {.buf = buf, .cap = cap};
    autoscaler_detail(e, now, &l);
    line_finish(&l);
}

/* Every byte of s is valid UTF-8 without control characters. */
static void assert_clean_text(const char *s)
{
    struct utf8_stream st;
    utf8_stream_init(&st);
    size_t n = strlen(s);
    assert_int_equal(utf8_stream_valid_prefix(&st, s, n), n);
    assert_true(utf8_stream_complete(&st));
    for (size_t i = 0; i < n; i++)
        assert_true((unsigned char)s[i] >= 0x20 && s[i] != 0x7f);
}

/* Valid UTF-8 (a kept text may hold control characters: line_finish blanks them). */
static void assert_clean_text_utf8(const char *s)
{
    struct utf8_stream st;
    utf8_stream_init(&st);
    size_t n = strlen(s);
    assert_int_equal(utf8_stream_valid_prefix(&st, s, n), n);
    assert_true(utf8_stream_complete(&st));
}

static int check_fixture(const char *path, void *ctx)
{
    (void)ctx;
    const struct expect *x = expect_for(path);
    if (!x) {
        print_error("%s: no expectation in test_autoscaler.c\n", path);
        return 1;
    }
    struct kevent ev;
    struct autoscaler_evidence e;
    bool got = load(x->file, &ev, &e);
    char detail[AUTOSCALER_DETAIL_MAX + 1];
    detail_of(&e, NOW, detail, sizeof(detail));
    int bad = got != x->evidence || e.writer != x->writer || e.kind != x->kind ||
              e.at != (x->at < 0 ? 0 : T0 + x->at) || (got && e.count != x->count) ||
              e.categories != x->categories || e.n_groups != x->n_groups ||
              e.n_items != x->n_items || strcmp(e.name, x->name) || strcmp(e.node, x->node) ||
              strcmp(detail, x->detail);
    if (bad)
        print_error("%s: got evidence %d writer %d kind %d at %lld count %d categories %#x "
                    "groups %u items %u name \"%s\" node \"%s\"\n  detail \"%s\"\n",
                    x->file, got, e.writer, e.kind, (long long)e.at, e.count, e.categories,
                    e.n_groups, e.n_items, e.name, e.node, detail);
    assert_clean_text(detail);
    /* the Event's type is the one its writer gives that reason */
    for (size_t i = 0; got && i < AUTOSCALER_EVENT_KINDS; i++)
        if (!strcmp(ev.reason, autoscaler_event_kinds[i].reason) &&
            !strcmp(ev.component, autoscaler_event_kinds[i].component) &&
            strcmp(ev.type, autoscaler_event_kinds[i].type)) {
            print_error("%s: type %s\n", x->file, ev.type);
            bad = 1;
        }
    return bad;
}

static void test_fixtures(void **state)
{
    (void)state;
    size_t n;
    assert_int_equal(test_fixtures_each(FIXTURES_DIR, "autoscaler", check_fixture, NULL, &n), 0);
    assert_int_equal(n, sizeof(fixtures) / sizeof(fixtures[0]));
}

/* The group lists: ids, sizes, a MIG URL shown by its name, the old one-group message. */
static void test_groups(void **state)
{
    (void)state;
    struct kevent ev;
    struct autoscaler_evidence e;
    assert_true(load("ca-triggered-two.json", &ev, &e));
    assert_int_equal(e.groups_seen, 2);
    assert_string_equal(e.groups[0].id, "gpu-pool-a");
    assert_int_equal(e.groups[0].current, 0);
    assert_int_equal(e.groups[0].target, 1);
    assert_int_equal(e.groups[0].max, 4);
    assert_string_equal(e.groups[1].id, "gpu-pool-b");
    assert_int_equal(e.groups[1].current, 1);
    assert_int_equal(e.groups[1].target, 2);
    assert_true(load("ca-triggered-gke-mig.json", &ev, &e));
    assert_string_equal(e.groups[0].id, "gke-ml-gpu-l4-3f2a9c1e-grp");
    assert_int_equal(e.groups[0].max, 8);
    assert_true(load("ca-triggered-old.json", &ev, &e));
    assert_string_equal(e.groups[0].id, "gke-ml-gpu-pool-grp");
    assert_int_equal(e.groups[0].current, 3);
    assert_int_equal(e.groups[0].target, 4);
    assert_int_equal(e.groups[0].max, -1);
}

/* The reasons of a refusal as items: known reasons, counts, verbatim text. */
static void test_items(void **state)
{
    (void)state;
    struct kevent ev;
    struct autoscaler_evidence e;
    assert_true(load("ca-not-triggered-three.json", &ev, &e));
    assert_int_equal(e.n_items, 3);
    assert_int_equal(e.items[0].reason, AUTOSCALER_R_GROUP_MAX);
    assert_int_equal(e.items[0].count, 1);
    assert_int_equal(e.items[1].reason, AUTOSCALER_R_INSUFFICIENT);
    assert_int_equal(e.items[1].count, 2);
    assert_string_equal(e.items[1].text, "nvidia.com/gpu");
    assert_int_equal(e.items[2].reason, AUTOSCALER_R_SELECTOR);
    assert_int_equal(e.items[2].count, 3);
    assert_true(load("ca-not-triggered-quota-1.35.json", &ev, &e));
    assert_int_equal(e.items[0].reason, AUTOSCALER_R_RESOURCE_LIMIT);
    assert_string_equal(e.items[0].text,
                        "exceeded quota: \"cluster-wide\", resources: nvidia.com/gpu");
    assert_int_equal(e.items[1].category, AUTOSCALER_CAT_OTHER);
    assert_string_equal(e.items[1].text, "not ready for scale-up");
    /* the two NodePool errors of a requirements mismatch stay one item */
    assert_true(load("karpenter-failed-incompatible.json", &ev, &e));
    assert_int_equal(e.parts_seen, 1);
    assert_true(e.items[0].cut);
    /* a GKE message cut at 250 bytes inside its tail: every reason whole */
    assert_true(load("gke-failed-cut.json", &ev, &e));
    assert_int_equal(e.n_items, 3);
    for (size_t i = 0; i < e.n_items; i++)
        assert_false(e.items[i].cut);
    assert_true(load("karpenter-ice.json", &ev, &e));
    assert_int_equal(e.items[0].reason, AUTOSCALER_R_LAUNCH_FAILED);
    assert_true(e.items[0].cut);
}

/* ---- Events built by hand ----------------------------------------------------------------- */

static void mk(struct kevent *ev, const char *component, const char *reason, const char *message)
{
    memset(ev, 0, sizeof(*ev));
    snprintf(ev->obj_kind, sizeof(ev->obj_kind), "Pod");
    snprintf(ev->component, sizeof(ev->component), "%s", component);
    snprintf(ev->reason, sizeof(ev->reason), "%s", reason);
    snprintf(ev->message, sizeof(ev->message), "%s", message);
    ev->last_timestamp = T0;
    ev->count = 1;
}

static void parse_ok(const char *component, const char *reason, const char *message,
                     struct autoscaler_evidence *e)
{
    struct kevent ev;
    mk(&ev, component, reason, message);
    assert_true(autoscaler_parse(&ev, e));
}

/* Only Pod Events from the two writers with their reasons are evidence. */
static void test_not_evidence(void **state)
{
    (void)state;
    struct kevent ev;
    struct autoscaler_evidence e;
    mk(&ev, "cluster-autoscaler", "TriggeredScaleUp",
       "pod triggered scale-up: [{g 0->1 (max: 1)}]");
    assert_true(autoscaler_parse(&ev, &e));
    snprintf(ev.obj_kind, sizeof(ev.obj_kind), "Node");
    assert_false(autoscaler_parse(&ev, &e));
    assert_int_equal(e.kind, AUTOSCALER_KIND_NONE);
    snprintf(ev.obj_kind, sizeof(ev.obj_kind), "Pod");
    snprintf(ev.component, sizeof(ev.component), "cluster-autoscaler-x");
    assert_false(autoscaler_parse(&ev, &e));
    /* no source: reportingComponent names the writer (events.k8s.io recorders) */
    ev.component[0] = '\0';
    snprintf(ev.reporting, sizeof(ev.reporting), "cluster-autoscaler");
    assert_true(autoscaler_parse(&ev, &e));
    assert_int_equal(e.writer, AUTOSCALER_CA);
    mk(&ev, "cluster-autoscaler", "ScaleDown", "x");
    assert_false(autoscaler_parse(&ev, &e));
    mk(&ev, "karpenter", "TriggeredScaleUp", "x");
    assert_false(autoscaler_parse(&ev, &e));
    mk(&ev, "default-scheduler", "FailedScheduling", "Failed to schedule pod, x");
    assert_false(autoscaler_parse(&ev, &e));
    /* the reason decides the kind, whatever the message */
    mk(&ev, "karpenter", "FailedScheduling", "something else");
    assert_true(autoscaler_parse(&ev, &e));
    assert_int_equal(e.kind, AUTOSCALER_REFUSED);
    assert_int_equal(e.categories, AUTOSCALER_CAT_OTHER);
    assert_string_equal(e.items[0].text, "something else");
    mk(&ev, "cluster-autoscaler", "TriggeredScaleUp", "scale-up!");
    assert_true(autoscaler_parse(&ev, &e));
    assert_int_equal(e.kind, AUTOSCALER_TRIGGERED);
    assert_int_equal(e.n_groups, 0);
}

/* at: lastTimestamp, else series.lastObservedTime, else eventTime, else firstTimestamp. */
static void test_time(void **state)
{
    (void)state;
    struct kevent ev;
    struct autoscaler_evidence e;
    mk(&ev, "karpenter", "Nominated", "Pod should schedule on: nodeclaim/a");
    ev.first_timestamp = 1, ev.event_time = 2, ev.series_last = 3, ev.last_timestamp = 4;
    assert_true(autoscaler_parse(&ev, &e));
    assert_int_equal(e.at, 4);
    ev.last_timestamp = 0;
    assert_true(autoscaler_parse(&ev, &e));
    assert_int_equal(e.at, 3);
    ev.series_last = 0;
    assert_true(autoscaler_parse(&ev, &e));
    assert_int_equal(e.at, 2);
    ev.event_time = 0;
    assert_true(autoscaler_parse(&ev, &e));
    assert_int_equal(e.at, 1);
    ev.first_timestamp = 0;
    ev.count = 0;
    assert_true(autoscaler_parse(&ev, &e));
    assert_int_equal(e.at, 0);
    assert_int_equal(e.count, 1);
    assert_true(autoscaler_stale(&e, NOW, 900, 0));
}

/* ---- order independence -------------------------------------------------------------------- */

/* Heap's algorithm step by step: the next permutation of idx[0..n) (n <= 10). */
struct perm {
    size_t n, idx[10], c[10], i;
};

static void perm_init(struct perm *p, size_t n)
{
    memset(p, 0, sizeof(*p));
    p->n = n;
    for (size_t i = 0; i < n; i++)
        p->idx[i] = i;
    p->i = 1;
}

static bool perm_next(struct perm *p)
{
    while (p->i < p->n) {
        if (p->c[p->i] < p->i) {
            size_t j = p->i % 2 ? p->c[p->i] : 0, t = p->idx[j];
            p->idx[j] = p->idx[p->i];
            p->idx[p->i] = t;
            p->c[p->i]++;
            p->i = 1;
            return true;
        }
        p->c[p->i++] = 0;
    }
    return false;
}

/* Join parts[perm] with sep after prefix (and before suffix). */
static void join(char *out, size_t cap, const char *prefix, const char *const *parts,
                 const size_t *idx, size_t n, const char *sep, const char *suffix)
{
    size_t len = (size_t)snprintf(out, cap, "%s", prefix);
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? sep : "", parts[idx[i]]);
    snprintf(out + len, cap - len, "%s", suffix);
}

/* Every order of the parts gives a byte-equal record and the same detail; returns the count. */
static size_t check_orders(const char *component, const char *reason, const char *prefix,
                           const char *const *parts, size_t n, const char *sep, const char *suffix,
                           struct autoscaler_evidence *first)
{
    struct perm p;
    perm_init(&p, n);
    char msg[KEVENT_MESSAGE_MAX], d0[AUTOSCALER_DETAIL_MAX + 1], d[AUTOSCALER_DETAIL_MAX + 1];
    size_t orders = 0;
    do {
        join(msg, sizeof(msg), prefix, parts, p.idx, n, sep, suffix);
        struct autoscaler_evidence e;
        parse_ok(component, reason, msg, &e);
        if (orders == 0) {
            *first = e;
            detail_of(&e, NOW, d0, sizeof(d0));
        } else {
            if (memcmp(first, &e, sizeof(e)) != 0)
                fail_msg("order %zu of \"%s\" gives another record", orders, msg);
            detail_of(&e, NOW, d, sizeof(d));
            assert_string_equal(d, d0);
        }
        orders++;
    } while (perm_next(&p));
    return orders;
}

/* Cluster Autoscaler joins its reasons in a Go map's random order. */
static void test_ca_reasons_any_order(void **state)
{
    (void)state;
    static const char *const parts[] = {
        "2 Insufficient nvidia.com/gpu",
        "1 max node group size reached",
        "3 max cluster cpu, memory limit reached",
        "1 exceeded quota: \"gpus\", resources: nvidia.com/gpu, cpu",
        "4 node(s) had untolerated taint {dedicated: gpu}",
    };
    struct autoscaler_evidence e;
    assert_int_equal(check_orders("cluster-autoscaler", "NotTriggerScaleUp",
                                  "pod didn't trigger scale-up: ", parts, 5, ", ", "", &e),
                     120);
    assert_int_equal(e.categories, AUTOSCALER_CAT_AT_MAX | AUTOSCALER_CAT_TEMPLATE);
    assert_int_equal(e.n_items, 5);
    assert_int_equal(e.parts_seen, 5);
    assert_int_equal(e.items[0].reason, AUTOSCALER_R_GROUP_MAX);
    assert_int_equal(e.items[1].reason, AUTOSCALER_R_RESOURCE_LIMIT);
    assert_int_equal(e.items[2].reason, AUTOSCALER_R_RESOURCE_LIMIT);
    assert_string_equal(e.items[1].text,
                        "exceeded quota: \"gpus\", resources: nvidia.com/gpu, cpu");
    assert_string_equal(e.items[2].text, "max cluster cpu, memory limit reached");
    assert_int_equal(e.items[2].count, 3);
    assert_int_equal(e.items[3].reason, AUTOSCALER_R_INSUFFICIENT);
    assert_int_equal(e.items[4].reason, AUTOSCALER_R_TAINT);
    assert_string_equal(e.items[4].text, "{dedicated: gpu}");
}

/* More distinct reasons than items[] holds: the same six kept, and the rest counted. */
static void test_ca_reasons_over_capacity(void **state)
{
    (void)state;
    static const char *const parts[] = {
        "1 Insufficient nvidia.com/gpu",
        "1 Insufficient cpu",
        "2 Insufficient memory",
        "1 in backoff after failed scale-up",
        "1 not ready for scale-up",
        "1 max node group size reached",
        "5 node(s) had volume node affinity conflict",
    };
    struct autoscaler_evidence e;
    assert_int_equal(check_orders("cluster-autoscaler", "NotTriggerScaleUp",
                                  "pod didn't trigger scale-up: ", parts, 7, ", ", "", &e),
                     5040);
    assert_int_equal(e.n_items, AUTOSCALER_ITEMS_MAX);
    assert_int_equal(e.parts_seen, 7);
    assert_int_equal(e.categories, AUTOSCALER_CAT_AT_MAX | AUTOSCALER_CAT_TEMPLATE |
                                       AUTOSCALER_CAT_BACKOFF | AUTOSCALER_CAT_OTHER);
    char d[AUTOSCALER_DETAIL_MAX + 1];
    detail_of(&e, NOW, d, sizeof(d));
    /* kept: the first six in (category, reason, text) order; "not ready for scale-up" is not */
    assert_null(strstr(d, "not ready"));
    assert_non_null(strstr(d, "\"node(s) had volume node affinity conflict\"; and 1 more reason"));
    assert_non_null(strstr(d, "kube-system/cluster-autoscaler-status"));
}

static void test_karpenter_and_gke_any_order(void **state)
{
    (void)state;
    static const char *const errs[] = {
        "all available instance types exceed limits for nodepool",
        "did not tolerate taint",
        "no instance type has enough resources, requirements=a In [b], resources={\"cpu\":\"1\"}",
        "pod has Dynamic Resource Allocation requirements that are not yet supported by Karpenter",
    };
    struct autoscaler_evidence e;
    assert_int_equal(check_orders("karpenter", "FailedScheduling", "Failed to schedule pod, ", errs,
                                  4, "; ", "", &e),
                     24);
    assert_int_equal(e.categories,
                     AUTOSCALER_CAT_AT_MAX | AUTOSCALER_CAT_TEMPLATE | AUTOSCALER_CAT_DRA);
    static const char *const gke[] = {"GCE quota exceeded", "GCE out of resources",
                                      "Internal error", "IP space exhausted"};
    assert_int_equal(check_orders("cluster-autoscaler", "FailedScaleUp",
                                  "Node scale up in zones us-east1-b associated with this pod "
                                  "failed: ",
                                  gke, 4, ", ", ". Pod is at risk of not being scheduled.", &e),
                     24);
    assert_int_equal(e.categories,
                     AUTOSCALER_CAT_QUOTA | AUTOSCALER_CAT_CAPACITY | AUTOSCALER_CAT_OTHER);
    assert_int_equal(e.n_items, 4);
}

/* ---- which record counts --------------------------------------------------------------------- */

static struct autoscaler_evidence rec(enum autoscaler_kind kind, int64_t at, int32_t count)
{
    struct autoscaler_evidence e;
    memset(&e, 0, sizeof(e));
    e.writer = AUTOSCALER_CA;
    e.kind = kind;
    e.at = at;
    e.count = count;
    return e;
}

static void test_cmp_and_pick(void **state)
{
    (void)state;
    struct autoscaler_evidence trig = rec(AUTOSCALER_TRIGGERED, T0 + 10, 1);
    struct autoscaler_evidence refused = rec(AUTOSCALER_REFUSED, T0, 5);
    struct autoscaler_evidence none = rec(AUTOSCALER_KIND_NONE, T0 + 100, 1);
    assert_true(autoscaler_cmp(&trig, &refused) > 0);
    assert_true(autoscaler_cmp(&refused, &trig) < 0);
    assert_true(autoscaler_cmp(&none, &refused) < 0);
    assert_int_equal(autoscaler_cmp(&none, &none), 0);
    /* the same second: the blocking record wins, then the higher count */
    refused.at = trig.at;
    assert_true(autoscaler_cmp(&refused, &trig) > 0);
    struct autoscaler_evidence failed = rec(AUTOSCALER_FAILED, trig.at, 1);
    assert_true(autoscaler_cmp(&refused, &failed) > 0);
    failed.count = 5;
    assert_int_equal(autoscaler_cmp(&refused, &failed), 0);
    assert_true(autoscaler_blocking(AUTOSCALER_FAILED));
    assert_true(autoscaler_blocking(AUTOSCALER_REFUSED));
    assert_false(autoscaler_blocking(AUTOSCALER_TRIGGERED));
    assert_false(autoscaler_blocking(AUTOSCALER_NOMINATED));

    struct autoscaler_evidence v[4] = {
        rec(AUTOSCALER_REFUSED, T0 + 100, 1), rec(AUTOSCALER_TRIGGERED, T0 + 200, 1),
        rec(AUTOSCALER_NOMINATED, T0 + 200, 1), rec(AUTOSCALER_KIND_NONE, T0 + 300, 1)};
    assert_int_equal(autoscaler_pick(v, 4, 0, 0, 0), 1); /* first of equals */
    assert_int_equal(autoscaler_pick(v, 0, 0, 0, 0), 0);
    /* now T0 + 1000: with a window of 750 s every record is stale, with 850 the refusal only */
    assert_int_equal(autoscaler_pick(v, 4, T0 + 1000, 750, 0), 4);
    assert_int_equal(autoscaler_pick(v, 4, T0 + 1000, 850, 0), 1);
    v[0].at = T0 + 300; /* now the refusal is the newest */
    assert_int_equal(autoscaler_pick(v, 4, T0 + 1000, 850, 0), 0);
    v[0].at = T0 + 100;
    /* the pod's PodScheduled changed at T0 + 150: the refusal predates it */
    assert_int_equal(autoscaler_pick(v, 4, T0 + 1000, 0, T0 + 150), 1);
    assert_int_equal(autoscaler_pick(v, 4, T0 + 1000, 0, T0 + 250), 4);
}

static void test_stale(void **state)
{
    (void)state;
    struct autoscaler_evidence e = rec(AUTOSCALER_TRIGGERED, T0, 1);
    assert_false(autoscaler_stale(&e, 0, 900, 0));
    assert_false(autoscaler_stale(&e, T0 + 900, 900, 0));
    assert_true(autoscaler_stale(&e, T0 + 901, 900, 0));
    assert_false(autoscaler_stale(&e, T0 + 90000, 0, 0)); /* no window */
    assert_false(autoscaler_stale(&e, T0 - AUTOSCALER_CLOCK_SKEW, 900, 0));
    assert_true(autoscaler_stale(&e, T0 - AUTOSCALER_CLOCK_SKEW - 1, 900, 0));
    assert_false(autoscaler_stale(&e, T0 + 10, 900, T0));
    assert_true(autoscaler_stale(&e, T0 + 10, 900, T0 + 1));
    e.at = 0;
    assert_true(autoscaler_stale(&e, 0, 0, 0));
    e = rec(AUTOSCALER_KIND_NONE, T0, 1);
    assert_true(autoscaler_stale(&e, 0, 0, 0));
}

/* ---- untrusted input --------------------------------------------------------------------- */

/* Hostile messages: bounded records, clean bounded details, no reads past the message. */
static void test_hostile(void **state)
{
    (void)state;
    static const char *const prefixes[] = {
        "pod triggered scale-up: [",
        "pod didn't trigger scale-up: ",
        "Node scale up in zones ",
        "Pod should schedule on: ",
        "Failed to schedule pod, ",
        "NodeClaim ",
        "",
    };
    static const char *const units[] = {
        "{g 1->2 (max: 3)} ",
        "1 x, ",
        "{",
        "}",
        ", ",
        "; ",
        "\xff\xfe",
        "\xe2\x82",
        "é",
        "999999999999999999999 ",
        "key ",
        "\x1b[31m",
        "{a (max: 1)}",
        "->",
        ". Pod is at",
        "incompatible with nodepool \"",
        "daemonset overhead={",
        " (NodePool=x)",
    };
    struct kevent ev;
    struct autoscaler_evidence e;
    char d[AUTOSCALER_DETAIL_MAX + 64];
    for (size_t k = 0; k < AUTOSCALER_EVENT_KINDS; k++)
        for (size_t p = 0; p < sizeof(prefixes) / sizeof(prefixes[0]); p++)
            for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
                mk(&ev, autoscaler_event_kinds[k].component, autoscaler_event_kinds[k].reason, "");
                /* the whole buffer, its last byte not a terminator: parse must stop at its size */
                size_t len = (size_t)snprintf(ev.message, sizeof(ev.message), "%s", prefixes[p]);
                while (len < sizeof(ev.message)) {
                    size_t ul = strlen(units[u]);
                    size_t take = ul < sizeof(ev.message) - len ? ul : sizeof(ev.message) - len;
                    memcpy(ev.message + len, units[u], take);
                    len += take;
                }
                assert_true(autoscaler_parse(&ev, &e));
                assert_true(e.n_groups <= AUTOSCALER_GROUPS_MAX);
                assert_true(e.n_items <= AUTOSCALER_ITEMS_MAX);
                assert_true(e.n_groups <= e.groups_seen);
                assert_true((e.categories & ~AUTOSCALER_CAT_ALL) == 0);
                for (size_t i = 0; i < e.n_items; i++) {
                    assert_clean_text_utf8(e.items[i].text);
                    assert_true(e.items[i].parts >= 1);
                }
                for (size_t i = 0; i < e.n_groups; i++)
                    assert_clean_text_utf8(e.groups[i].id);
                assert_clean_text_utf8(e.name);
                assert_clean_text_utf8(e.node);
                struct line l = {.buf = d, .cap = sizeof(d)};
                autoscaler_detail(&e, NOW, &l);
                assert_true(l.len <= AUTOSCALER_DETAIL_MAX);
                line_finish(&l);
                assert_clean_text(d);
            }
}

/* The detail appended to a fuller line is cut there, whole characters only. */
static void test_detail_in_small_line(void **state)
{
    (void)state;
    struct autoscaler_evidence e;
    parse_ok("karpenter", "FailedScheduling", "Failed to schedule pod, é é é é é é é é é é é é",
             &e);
    char buf[48];
    struct line l = {.buf = buf, .cap = sizeof(buf)};
    line_printf(&l, "scale-up-blocked: ");
    autoscaler_detail(&e, NOW, &l);
    line_finish(&l);
    assert_true(l.truncated);
    assert_clean_text(buf);
    assert_true(strncmp(buf, "scale-up-blocked: Karpenter cannot", 34) == 0);
    /* a record of no kind writes nothing */
    memset(&e, 0, sizeof(e));
    char one[8];
    struct line m = {.buf = one, .cap = sizeof(one)};
    autoscaler_detail(&e, NOW, &m);
    line_finish(&m);
    assert_string_equal(one, "");
}

/* Ages and counts in the detail. */
static void test_when(void **state)
{
    (void)state;
    struct autoscaler_evidence e;
    parse_ok("cluster-autoscaler", "TriggeredScaleUp",
             "pod triggered scale-up: [{g 0->1 (max: 2)}]", &e);
    char d[256];
    detail_of(&e, 0, d, sizeof(d));
    assert_string_equal(d, "Cluster Autoscaler is adding nodes: g 0->1 (max: 2)");
    detail_of(&e, T0 - 50, d, sizeof(d)); /* a clock behind the writer's */
    assert_string_equal(d, "Cluster Autoscaler is adding nodes (0s ago): g 0->1 (max: 2)");
    detail_of(&e, T0 + 7260, d, sizeof(d));
    assert_string_equal(d, "Cluster Autoscaler is adding nodes (2h01m ago): g 0->1 (max: 2)");
    detail_of(&e, T0 + 3 * 86400, d, sizeof(d));
    assert_string_equal(d, "Cluster Autoscaler is adding nodes (3d ago): g 0->1 (max: 2)");
    e.count = 7;
    detail_of(&e, 0, d, sizeof(d));
    assert_string_equal(d, "Cluster Autoscaler is adding nodes (7 times): g 0->1 (max: 2)");
}

/*
 * The Events a real Karpenter (v1.15.0, e2e/test-karpenter) wrote, recorded with kube-scheduler's
 * own about the same pods (tests/fixtures/karpenter): Karpenter's are evidence of the kind and
 * categories below, the scheduler's (no source, reportingComponent default-scheduler) are not.
 */
static void test_recorded_karpenter(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        enum autoscaler_kind kind;
        unsigned categories;
    } want[] = {
        {"no-gpu-type-events.json", AUTOSCALER_REFUSED, CAT(TEMPLATE)},
        {"dra-events.json", AUTOSCALER_REFUSED, CAT(DRA)},
        {"limits-events.json", AUTOSCALER_REFUSED, CAT(AT_MAX)},
        {"two-nodepools-events.json", AUTOSCALER_REFUSED, CAT(AT_MAX) | CAT(TEMPLATE)},
        {"scale-up-events.json", AUTOSCALER_NOMINATED, 0},
        {"gpu-late-events-pending.json", AUTOSCALER_NOMINATED, 0},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        char rel[256];
        snprintf(rel, sizeof(rel), "karpenter/%s", want[i].file);
        json_object *arr = test_load_json(FIXTURES_DIR, rel);
        assert_non_null(arr);
        size_t evidence = 0, others = 0;
        for (size_t k = 0; k < json_object_array_length(arr); k++) {
            struct kevent ev;
            struct autoscaler_evidence e;
            assert_int_equal(project_event(json_object_array_get_idx(arr, k), &ev), K_OK);
            if (!autoscaler_parse(&ev, &e)) {
                others++;
                continue;
            }
            evidence++;
            if (e.kind != want[i].kind || (e.categories & ~CAT(OTHER)) != want[i].categories)
                fail_msg("%s: kind %d categories 0x%x, want %d 0x%x (%s)", want[i].file, e.kind,
                         e.categories, want[i].kind, want[i].categories, ev.message);
            assert_int_equal(e.writer, AUTOSCALER_KARPENTER);
        }
        assert_int_equal(evidence, 1);
        assert_true(others >= 1); /* kube-scheduler's FailedScheduling */
        json_object_put(arr);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_items),
        cmocka_unit_test(test_not_evidence),
        cmocka_unit_test(test_time),
        cmocka_unit_test(test_ca_reasons_any_order),
        cmocka_unit_test(test_ca_reasons_over_capacity),
        cmocka_unit_test(test_karpenter_and_gke_any_order),
        cmocka_unit_test(test_cmp_and_pick),
        cmocka_unit_test(test_stale),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_detail_in_small_line),
        cmocka_unit_test(test_when),
        cmocka_unit_test(test_recorded_karpenter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
