/* read_budget.c - the schema and budget of the objects the clients read (see read_budget.h). */
#include "kube/read_budget.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <inttypes.h>
#include <stdatomic.h>

#include "util/clock.h"
#include "util/log.h"
#include "util/result.h"

enum node {
    N_EVENT = JSON_NODE_ALL + 1, /* a watch event */
    N_OBJECT,                    /* the object */
    N_META,                      /* its metadata */
    N_SPEC,                      /* its spec */
    N_CONTAINER,                 /* spec.containers[], initContainers[], ephemeralContainers[] */
    N_N
};

enum { REGION_REST, REGION_MANAGED_FIELDS, REGION_PULL_SECRETS, REGION_VOLUMES };

/* {name, node, region, unique, label} */
static const struct json_member_rule EVENT_MEMBERS[] = {
    {"object", N_OBJECT, 0, true, NULL},
};
static const struct json_member_rule OBJECT_MEMBERS[] = {
    {"metadata", N_META, 0, true, NULL},
    {"spec", N_SPEC, 0, true, NULL},
};
static const struct json_member_rule META_MEMBERS[] = {
    {"managedFields", JSON_NODE_ALL, REGION_MANAGED_FIELDS, true, "metadata.managedFields"},
};
/* PodSpec members no projection reads, and the containers whose members are cut */
static const struct json_member_rule SPEC_MEMBERS[] = {
    {"imagePullSecrets", JSON_NODE_ALL, REGION_PULL_SECRETS, true, "spec.imagePullSecrets"},
    {"volumes", JSON_NODE_ALL, REGION_VOLUMES, true, "spec.volumes"},
    {"containers", N_CONTAINER, 0, false, NULL},
    {"initContainers", N_CONTAINER, 0, false, NULL},
    {"ephemeralContainers", N_CONTAINER, 0, false, NULL},
};
/* Container members project.c never reads (it reads name, resources, restartPolicy). */
static const struct json_member_rule CONTAINER_MEMBERS[] = {
    {"env", JSON_NODE_CUT, 0, false, NULL},
    {"envFrom", JSON_NODE_CUT, 0, false, NULL},
    {"volumeMounts", JSON_NODE_CUT, 0, false, NULL},
    {"volumeDevices", JSON_NODE_CUT, 0, false, NULL},
    {"ports", JSON_NODE_CUT, 0, false, NULL},
    {"args", JSON_NODE_CUT, 0, false, NULL},
    {"command", JSON_NODE_CUT, 0, false, NULL},
    {"livenessProbe", JSON_NODE_CUT, 0, false, NULL},
    {"readinessProbe", JSON_NODE_CUT, 0, false, NULL},
    {"startupProbe", JSON_NODE_CUT, 0, false, NULL},
    {"lifecycle", JSON_NODE_CUT, 0, false, NULL},
};

#define MEMBERS(a) JSON_NODE_ALL, a, sizeof(a) / sizeof(a[0])
static const struct json_schema_node NODES[N_N] = {
    [N_EVENT] = {MEMBERS(EVENT_MEMBERS)},         [N_OBJECT] = {MEMBERS(OBJECT_MEMBERS)},
    [N_META] = {MEMBERS(META_MEMBERS)},           [N_SPEC] = {MEMBERS(SPEC_MEMBERS)},
    [N_CONTAINER] = {MEMBERS(CONTAINER_MEMBERS)},
};
static const struct json_schema OBJECT_SCHEMA = {NODES, N_N, N_OBJECT};
static const struct json_schema EVENT_SCHEMA = {NODES, N_N, N_EVENT};

int kube_read_parse(struct json_tree *t, enum kube_read_shape shape, const char *text, size_t len,
                    char *err, size_t errlen)
{
    struct json_tree_opts opts = {
        .schema = shape == KUBE_READ_EVENT ? &EVENT_SCHEMA : &OBJECT_SCHEMA,
        .max_depth = KUBE_READ_MAX_DEPTH,
        .region = {[REGION_REST] = {.max_cost = KUBE_READ_MAX_COST},
                   [REGION_MANAGED_FIELDS] = {.skip = shape != KUBE_READ_OBJECT_MANAGED_FIELDS,
                                              .max_cost = KUBE_READ_MAX_COST},
                   [REGION_PULL_SECRETS] = {.skip = true},
                   [REGION_VOLUMES] = {.skip = true}},
        /* the tokener: the keys are json-c's own, so a reader may keep parts of the tree */
        .flags = JSON_TREE_OBJECT | JSON_TREE_TOKENER,
    };
    return json_tree_parse(t, text, len, &opts, err, errlen);
}

int kube_read_parse_value(struct json_tree *t, const char *text, size_t len, char *err,
                          size_t errlen)
{
    struct json_tree_opts opts = {
        .max_depth = KUBE_READ_MAX_DEPTH,
        .region = {[REGION_REST] = {.max_cost = KUBE_READ_MAX_VALUE_COST}},
        .flags = JSON_TREE_TOKENER,
    };
    return json_tree_parse(t, text, len, &opts, err, errlen);
}

static atomic_uint_fast64_t over_budget;
static atomic_int_fast64_t last_log_ms = -60000;
static atomic_uint_fast64_t logged; /* over_budget when the last line was written */

/* Counts one object not built; true when a line may be logged now (*since: the count of the
 * objects not logged since the last line, this one included). */
static bool count_skipped(uint64_t *since)
{
    uint64_t n = atomic_fetch_add(&over_budget, 1) + 1;
    int64_t now = clock_mono_ms(NULL);
    int64_t last = atomic_load(&last_log_ms);
    if (now - last < 60000 || !atomic_compare_exchange_strong(&last_log_ms, &last, now))
        return false;
    *since = n - atomic_exchange(&logged, n);
    return true;
}

void kube_read_too_deep(const char *what, size_t len)
{
    uint64_t since;
    if (count_skipped(&since))
        log_warn_kv("object not read: nested deeper than the limit per object; treated as absent",
                    LOG_STR("what", what), LOG_INT("bytes", len),
                    LOG_INT("maxDepth", KUBE_READ_MAX_DEPTH), LOG_INT("sinceLastWarning", since));
}

void kube_read_over_budget(const char *what, uint64_t cost, size_t len)
{
    uint64_t since;
    if (!count_skipped(&since))
        return;
    log_warn_kv("object not read: its JSON tree is over the limit per object; treated as absent",
                LOG_STR("what", what), LOG_INT("bytes", len), LOG_INT("treeKiB", cost >> 10),
                LOG_INT("limitKiB", KUBE_READ_MAX_COST >> 10), LOG_INT("sinceLastWarning", since));
}

uint64_t kube_read_over_budget_total(void)
{
    return atomic_load(&over_budget);
}

void kube_read_trim(size_t len)
{
#ifdef __GLIBC__
    if (len > KUBE_READ_TRIM_BYTES)
        malloc_trim(0);
#else
    (void)len;
#endif
}
