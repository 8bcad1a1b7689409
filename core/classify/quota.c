/* quota.c - quota refusals of GPU pods' claims and of GPU owners' pods (quota.h). */
#include "quota.h"

#include <stdio.h>
#include <string.h>

/* A span of the message. */
struct span {
    const char *p;
    size_t n;
};

/* The first occurrence of `needle` in [s, s + n), or NULL. */
static const char *find(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; k <= n && i <= n - k; i++)
        if (memcmp(s + i, needle, k) == 0)
            return s + i;
    return NULL;
}

static void copy_span(char *dst, size_t cap, const char *p, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, p, n);
    dst[n] = '\0';
}

/* One "key=value" entry of a list; returns the rest after it, or NULL at the end. */
static const char *next_entry(const char *p, const char *end, struct span *key, struct span *val)
{
    if (p >= end)
        return NULL;
    const char *comma = memchr(p, ',', (size_t)(end - p));
    const char *stop = comma ? comma : end;
    const char *eq = memchr(p, '=', (size_t)(stop - p));
    key->p = p;
    key->n = (size_t)((eq ? eq : stop) - p);
    val->p = eq ? eq + 1 : stop;
    val->n = (size_t)(stop - val->p);
    return comma ? comma + 1 : end;
}

/* The value of `key` in the list [p, end), copied into val ("" when absent). */
static void list_value(const char *p, const char *end, const char *key, char *val, size_t cap)
{
    struct span k, v;
    size_t klen = strlen(key);
    val[0] = '\0';
    for (size_t i = 0; i < QUOTA_KEYS_SCANNED && (p = next_entry(p, end, &k, &v)) != NULL; i++)
        if (k.n == klen && memcmp(k.p, key, klen) == 0) {
            copy_span(val, cap, v.p, v.n);
            return;
        }
}

bool quota_parse(const char *msg, bool (*is_gpu)(void *ctx, const char *key), void *ctx,
                 struct quota_refusal *out)
{
    memset(out, 0, sizeof(*out));
    if (!msg)
        return false;
    size_t n = strnlen(msg, QUOTA_MESSAGE_SCAN);
    const char *end = msg + n;
    /* the quota's name, then the requested, used and limited lists: field[i] up to stop[i] */
    static const char *const labels[] = {
        "exceeded quota: ", ", requested: ", ", used: ", ", limited: "};
    const char *field[4], *stop[4];
    const char *at = msg;
    for (size_t i = 0; i < 4; i++) {
        const char *hit = find(at, (size_t)(end - at), labels[i]);
        if (!hit)
            return false;
        if (i > 0)
            stop[i - 1] = hit;
        field[i] = at = hit + strlen(labels[i]);
    }
    stop[3] = end;
    while (stop[3] > field[3] && (stop[3][-1] == ' ' || stop[3][-1] == '\n' ||
                                  stop[3][-1] == '\r' || stop[3][-1] == '\t'))
        stop[3]--;
    if (stop[0] == field[0])
        return false;
    copy_span(out->quota, sizeof(out->quota), field[0], (size_t)(stop[0] - field[0]));

    /* the key reported: the first GPU key, else the first */
    struct span k, v, first = {0}, chosen = {0};
    const char *p = field[1];
    for (size_t i = 0; (p = next_entry(p, stop[1], &k, &v)) != NULL; i++) {
        if (k.n == 0)
            continue;
        out->n_keys++;
        if (i >= QUOTA_KEYS_SCANNED)
            continue; /* counted, not looked at */
        if (!first.p)
            first = k;
        if (!chosen.p && is_gpu) {
            char key[QUOTA_KEY_MAX];
            copy_span(key, sizeof(key), k.p, k.n);
            if (is_gpu(ctx, key))
                chosen = k;
        }
    }
    if (!first.p)
        return false;
    if (!chosen.p && is_gpu)
        return false; /* no GPU key exceeded: not a GPU refusal */
    if (!chosen.p)
        chosen = first;
    copy_span(out->key, sizeof(out->key), chosen.p, chosen.n);
    list_value(field[1], stop[1], out->key, out->requested, sizeof(out->requested));
    list_value(field[2], stop[2], out->key, out->used, sizeof(out->used));
    list_value(field[3], stop[3], out->key, out->limited, sizeof(out->limited));
    return true;
}

/* Whether `s` starts with `prefix`. */
static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* A DeviceClass name matched against the GPU class patterns. */
static bool class_is_gpu(const struct gpu_set *dra_classes, const char *cls, size_t n)
{
    char name[QUOTA_KEY_MAX];
    if (!dra_classes || n == 0 || n >= sizeof(name))
        return false;
    memcpy(name, cls, n);
    name[n] = '\0';
    return gpu_set_contains(dra_classes, name);
}

bool quota_key_is_gpu(const char *key, const struct gpu_set *gpus,
                      const struct gpu_set *dra_classes)
{
    static const char devices[] = ".deviceclass.resource.k8s.io/devices";
    static const char ext[] = "requests.deviceclass.resource.kubernetes.io/";
    if (!key || !*key)
        return false;
    size_t n = strlen(key), d = sizeof(devices) - 1;
    if (n > d && strcmp(key + n - d, devices) == 0)
        return class_is_gpu(dra_classes, key, n - d);
    if (starts(key, ext))
        return class_is_gpu(dra_classes, key + sizeof(ext) - 1, n - (sizeof(ext) - 1));
    if (!gpus)
        return false;
    if (starts(key, "requests."))
        return gpu_set_contains(gpus, key + strlen("requests."));
    if (starts(key, "limits."))
        return gpu_set_contains(gpus, key + strlen("limits."));
    return gpu_set_contains(gpus, key);
}

static int64_t newest_time(const struct kevent *ev)
{
    int64_t t = ev->last_timestamp;
    if (ev->series_last > t)
        t = ev->series_last;
    if (ev->event_time > t)
        t = ev->event_time;
    if (ev->first_timestamp > t)
        t = ev->first_timestamp;
    return t;
}

bool quota_claim_event(const struct kevent *ev, struct quota_refusal *out)
{
    static const char prefix[] = "PodResourceClaim ";
    /* client-go's aggregator prefixes the tenth similar Event in ten minutes */
    static const char combined[] = "(combined from similar events): ";
    if (!ev || strcmp(ev->obj_kind, "Pod") != 0 || strcmp(ev->type, "Warning") != 0 ||
        strcmp(ev->reason, QUOTA_CLAIM_EVENT_REASON) != 0)
        return false;
    const char *msg = ev->message;
    if (starts(msg, combined))
        msg += sizeof(combined) - 1;
    if (!starts(msg, prefix))
        return false;
    const char *pc = msg + sizeof(prefix) - 1;
    const char *colon = strchr(pc, ':');
    if (!colon || colon == pc || (size_t)(colon - pc) >= QUOTA_CLAIM_MAX)
        return false;
    if (!quota_parse(colon, NULL, NULL, out))
        return false;
    copy_span(out->pod_claim, sizeof(out->pod_claim), pc, (size_t)(colon - pc));
    out->at = newest_time(ev);
    out->count = ev->count;
    return true;
}

bool quota_claim_current(const struct kpod *pod, const struct quota_refusal *q)
{
    if (!pod || !q || !q->pod_claim[0] || (pod->node_name && *pod->node_name))
        return false;
    bool from_template = false;
    for (size_t i = 0; i < pod->n_claims && !from_template; i++)
        from_template = pod->claims[i].name && strcmp(pod->claims[i].name, q->pod_claim) == 0 &&
                        pod->claims[i].template_name;
    if (!from_template)
        return false;
    for (size_t i = 0; i < pod->n_claim_statuses; i++)
        if (pod->claim_statuses[i].name && strcmp(pod->claim_statuses[i].name, q->pod_claim) == 0)
            return false; /* the claim exists (or none is needed) */
    return true;
}

/* "key requested r, used u of limit l" and the keys beyond it. */
static void put_numbers(struct line *l, const struct quota_refusal *q)
{
    line_printf(l, "%s requested %s, used %s of limit %s", q->key,
                q->requested[0] ? q->requested : "?", q->used[0] ? q->used : "?",
                q->limited[0] ? q->limited : "?");
    if (q->n_keys > 1)
        line_printf(l, " (and %zu more key%s exceeded)", q->n_keys - 1, q->n_keys == 2 ? "" : "s");
}

void quota_put_claim(struct line *l, const struct quota_refusal *q)
{
    line_printf(l, "ResourceQuota %s refuses the ResourceClaim of pod claim %s: ", q->quota,
                q->pod_claim);
    put_numbers(l, q);
    line_printf(l, "; kube-controller-manager retries creating it (FailedResourceClaimCreation");
    if (q->count > 1)
        line_printf(l, ", %d times", (int)q->count);
    line_printf(l, "): raise the quota's spec.hard %s or free claims it counts in the namespace",
                q->key);
}

/* Per owner kind: its name, API version and resource. */
static const struct {
    const char *name, *api_version, *resource;
} owner_kinds[QUOTA_OWNER_KINDS] = {
    [QUOTA_OWNER_REPLICASET] = {"ReplicaSet", "apps/v1", "replicasets"},
    [QUOTA_OWNER_STATEFULSET] = {"StatefulSet", "apps/v1", "statefulsets"},
    [QUOTA_OWNER_JOB] = {"Job", "batch/v1", "jobs"},
};

static bool known_kind(enum quota_owner_kind k)
{
    return (int)k >= 0 && k < QUOTA_OWNER_KINDS;
}

const char *quota_owner_kind_name(enum quota_owner_kind k)
{
    return known_kind(k) ? owner_kinds[k].name : "?";
}

const char *quota_owner_api_version(enum quota_owner_kind k)
{
    return known_kind(k) ? owner_kinds[k].api_version : "?";
}

const char *quota_owner_resource(enum quota_owner_kind k)
{
    return known_kind(k) ? owner_kinds[k].resource : "?";
}

struct gpu_sets {
    const struct gpu_set *gpus, *dra_classes;
};

static bool key_is_gpu_cb(void *ctx, const char *key)
{
    const struct gpu_sets *s = ctx;
    return quota_key_is_gpu(key, s->gpus, s->dra_classes);
}

bool quota_owner_event(const struct kevent *ev, const struct gpu_set *gpus,
                       const struct gpu_set *dra_classes, struct quota_owner *out)
{
    memset(out, 0, sizeof(*out));
    if (!ev || strcmp(ev->type, "Warning") != 0 ||
        strcmp(ev->reason, QUOTA_OWNER_EVENT_REASON) != 0 || !ev->obj_name[0] || !ev->obj_uid[0] ||
        strcmp(ev->ns, ev->obj_ns) != 0)
        return false;
    int kind = -1;
    for (int k = 0; k < QUOTA_OWNER_KINDS; k++)
        if (strcmp(ev->obj_kind, quota_owner_kind_name((enum quota_owner_kind)k)) == 0)
            kind = k;
    if (kind < 0)
        return false;
    struct gpu_sets sets = {gpus, dra_classes};
    if (!quota_parse(ev->message, key_is_gpu_cb, &sets, &out->q))
        return false;
    out->kind = (enum quota_owner_kind)kind;
    snprintf(out->ns, sizeof(out->ns), "%s", ev->obj_ns);
    snprintf(out->name, sizeof(out->name), "%s", ev->obj_name);
    snprintf(out->uid, sizeof(out->uid), "%s", ev->obj_uid);
    snprintf(out->event_name, sizeof(out->event_name), "%s", ev->name);
    out->q.at = newest_time(ev);
    out->q.count = ev->count;
    return true;
}

bool quota_owner_current(const struct quota_owner *o, int64_t now, int64_t newest_pod)
{
    if (now > 0 &&
        (o->q.at <= 0 || now - o->q.at > QUOTA_OWNER_WINDOW || o->q.at - now > QUOTA_OWNER_SKEW))
        return false;
    return !(newest_pod > 0 && newest_pod > o->q.at);
}

void quota_put_owner(struct line *l, const struct quota_owner *o)
{
    line_printf(l, "ResourceQuota %s refuses the GPU pods of %s %s: ", o->q.quota,
                quota_owner_kind_name(o->kind), o->name);
    put_numbers(l, &o->q);
    line_printf(l, "; no pod exists, the %s controller retries (FailedCreate",
                o->kind == QUOTA_OWNER_JOB ? "Job" : quota_owner_kind_name(o->kind));
    if (o->q.count > 1)
        line_printf(l, ", %d times", (int)o->q.count);
    line_printf(l, "): raise the quota's spec.hard %s or lower the replicas' GPU requests",
                o->q.key);
}
