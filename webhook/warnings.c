/* warnings.c - the admission checks and the bounded warning list. */
#include "warnings.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify/match.h"
#include "kube/json.h"
#include "kube/project.h"
#include "util/result.h"

/* ------------------------------------------------------------------ the list */

void warn_list_init(struct warn_list *l)
{
    memset(l, 0, sizeof(*l));
}

/*
 * Decodes the UTF-8 sequence at s (at most `avail` bytes): its length 1..4 and code point, or 0
 * for an invalid, overlong, surrogate or truncated sequence.
 */
static size_t utf8_decode(const unsigned char *s, size_t avail, unsigned *cp_out)
{
    unsigned char c = s[0];
    size_t n;
    unsigned cp;
    if (c < 0x80) {
        *cp_out = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, cp = c & 0x07;
    else
        return 0;
    if (n > avail)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    *cp_out = cp;
    return n;
}

bool warn_add(struct warn_list *l, const char *reason, const char *fmt, ...)
{
    char raw[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);

    /* sanitise into clean[], remembering where each character starts */
    char clean[sizeof(raw)];
    size_t j = 0, i = 0, len = strlen(raw), last_fit = 0;
    while (i < len) {
        const unsigned char *p = (const unsigned char *)raw + i;
        unsigned cp = 0;
        size_t n = utf8_decode(p, len - i, &cp);
        if (j <= WARN_ITEM_MAX - 3)
            last_fit = j;
        if (n == 0) { /* invalid byte */
            clean[j++] = '?';
            i++;
        } else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) { /* C0, DEL, C1: unicode.IsControl */
            clean[j++] = ' ';
            i += n;
        } else {
            memcpy(clean + j, p, n);
            j += n;
            i += n;
        }
    }
    char text[WARN_ITEM_MAX + 1];
    if (j > WARN_ITEM_MAX) {
        memcpy(text, clean, last_fit);
        memcpy(text + last_fit, "...", 3);
        j = last_fit + 3;
    } else {
        memcpy(text, clean, j);
    }
    text[j] = 0;
    while (j && text[j - 1] == ' ')
        text[--j] = 0;
    if (!j)
        return false;
    for (size_t k = 0; k < l->n; k++)
        if (strcmp(l->items[k].text, text) == 0)
            return false;
    if (l->n >= WARN_MAX_ITEMS || l->total + j > WARN_TOTAL_MAX) {
        l->dropped++;
        return false;
    }
    memcpy(l->items[l->n].text, text, j + 1);
    l->items[l->n].reason = reason;
    l->n++;
    l->total += j;
    return true;
}

/* ------------------------------------------------------------------ JSON helpers */

/* A short name for the shared getter (kube/json.h). */
static json_object *jget(json_object *o, const char *key, json_type type)
{
    return kube_json_get(o, key, type);
}

static const char *const container_lists[] = {"containers", "initContainers"};

/* Whether a container's limits or requests name `resource`; *where = "limits" / "requests". */
static bool container_names(json_object *c, const char *resource, const char **where)
{
    json_object *res = jget(c, "resources", json_type_object);
    if (jget(jget(res, "limits", json_type_object), resource, json_type_string) ||
        jget(jget(res, "limits", json_type_object), resource, json_type_int)) {
        *where = "limits";
        return true;
    }
    json_object *req = jget(res, "requests", json_type_object);
    if (jget(req, resource, json_type_string) || jget(req, resource, json_type_int)) {
        *where = "requests";
        return true;
    }
    return false;
}

/* "spec.containers[0].resources.limits[nvidia.com/gpu]" for the first container naming it. */
static void resource_path(const struct wh_object *o, const char *resource, char *out, size_t len)
{
    for (size_t l = 0; l < 2; l++) {
        json_object *arr = jget(o->spec, container_lists[l], json_type_array);
        size_t n = arr ? json_object_array_length(arr) : 0;
        for (size_t i = 0; i < n; i++) {
            const char *where;
            if (container_names(json_object_array_get_idx(arr, i), resource, &where)) {
                snprintf(out, len, "%s.%s[%zu].resources.%s[%s]", o->spec_path, container_lists[l],
                         i, where, resource);
                return;
            }
        }
    }
    snprintf(out, len, "%s.containers", o->spec_path);
}

static bool is_qgpu(const char *resource)
{
    return strncmp(resource, QGPU_PREFIX, strlen(QGPU_PREFIX)) == 0;
}

/* ------------------------------------------------------------------ checks */

static void check_qgpu(const struct wh_snapshot *snap, const struct wh_object *o,
                       const struct kpod *pod, struct warn_list *out)
{
    bool any_qgpu = false;
    for (size_t l = 0; l < 2; l++) {
        json_object *arr = jget(o->spec, container_lists[l], json_type_array);
        size_t n = arr ? json_object_array_length(arr) : 0;
        for (size_t i = 0; i < n; i++) {
            json_object *res =
                jget(json_object_array_get_idx(arr, i), "resources", json_type_object);
            const char *q = NULL, *whole = NULL;
            const char *lists[] = {"limits", "requests"};
            for (size_t k = 0; k < 2; k++) {
                json_object *m = jget(res, lists[k], json_type_object);
                if (!m)
                    continue;
                json_object_object_foreach(m, name, val)
                {
                    (void)val;
                    if (!gpu_set_contains(snap->gpus, name))
                        continue;
                    if (is_qgpu(name))
                        q = q ? q : name;
                    else
                        whole = whole ? whole : name;
                }
            }
            if (q && whole)
                warn_add(out, WARN_REASON_QGPU_MIXED,
                         "%s.%s[%zu].resources: qGPU (%s) and %s in one container; request one "
                         "or the other",
                         o->spec_path, container_lists[l], i, q, whole);
        }
    }
    for (size_t i = 0; i < pod->gpu_requests.n; i++)
        if (is_qgpu(pod->gpu_requests.items[i].name))
            any_qgpu = true;
    if (!any_qgpu || !snap->namespaces_synced || !o->ns)
        return;
    const struct wh_namespace *ns = wh_snapshot_namespace(snap, o->ns);
    if (ns && !kv_list_get(&ns->labels, QGPU_POLICY_LABEL))
        warn_add(out, WARN_REASON_QGPU_NS,
                 "metadata.namespace: namespace \"%s\" lacks label %s (fixed-share, "
                 "best-effort or burst-share); qGPU pods will not be scheduled",
                 o->ns, QGPU_POLICY_LABEL);
}

static void check_runtime_class(const struct wh_snapshot *snap, const struct wh_object *o,
                                const struct kpod *pod, struct warn_list *out)
{
    if (!pod->runtime_class || !*pod->runtime_class || !snap->runtime_classes_synced)
        return;
    if (!wh_snapshot_runtime_class(snap, pod->runtime_class))
        warn_add(out, WARN_REASON_RUNTIMECLASS,
                 "%s.runtimeClassName: RuntimeClass \"%s\" not found; pods will be rejected "
                 "(create it or remove runtimeClassName)",
                 o->spec_path, pod->runtime_class);
}

static bool quota_get(const struct resource_list *l, const char *name, int64_t *v)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].name, name) == 0) {
            *v = l->items[i].value;
            return true;
        }
    return false;
}

static void check_quota(const struct wh_snapshot *snap, const struct wh_object *o,
                        const struct kpod *pod, struct warn_list *out)
{
    if (!snap->quotas_synced || !o->ns || o->replicas == 0)
        return;
    for (size_t qi = 0; qi < snap->n_quotas; qi++) {
        const struct wh_quota *q = &snap->quotas[qi];
        if (strcmp(q->ns, o->ns) != 0 || q->scoped)
            continue;
        for (size_t r = 0; r < pod->gpu_requests.n; r++) {
            const char *res = pod->gpu_requests.items[r].name;
            int64_t per_pod = pod->gpu_requests.items[r].value, hard, used = 0;
            char key[300], path[400];
            snprintf(key, sizeof(key), "requests.%s", res);
            if (per_pod <= 0 || !quota_get(&q->hard, key, &hard))
                continue;
            quota_get(&q->used, key, &used);
            resource_path(o, res, path, sizeof(path));
            if (per_pod > hard) {
                warn_add(out, WARN_REASON_QUOTA,
                         "%s: %s %" PRId64 " %s but quota \"%s\" allows %s=%" PRId64
                         " in total; it can never be admitted",
                         path, o->is_pod ? "requests" : "each pod requests", per_pod, res, q->name,
                         key, hard);
                continue;
            }
            if (!o->create)
                continue;
            int64_t left = hard - used > 0 ? hard - used : 0;
            int64_t n = o->replicas < 0 ? 1 : o->replicas;
            if (n > INT64_MAX / per_pod || n * per_pod > left) {
                if (o->is_pod || o->replicas < 0)
                    warn_add(out, WARN_REASON_QUOTA,
                             "%s: %s %" PRId64 " %s but quota \"%s\" has %" PRId64
                             " left (used %" PRId64 "/%" PRId64 ")",
                             path, o->is_pod ? "requests" : "each pod requests", per_pod, res,
                             q->name, left, used, hard);
                else
                    warn_add(out, WARN_REASON_QUOTA,
                             "%s: %" PRId64 " replicas x %" PRId64
                             " %s but quota \"%s\" has %" PRId64 " left (used %" PRId64 "/%" PRId64
                             "); only %" PRId64 " of %" PRId64 " pods can be created",
                             path, n, per_pod, res, q->name, left, used, hard, left / per_pod, n);
            }
        }
    }
}

/* The node names of a set, "a", "a, b" or "a +3 more". */
static void name_list(const struct knode *const *nodes, size_t n, char *out, size_t len)
{
    if (n == 1)
        snprintf(out, len, "%s", nodes[0]->name);
    else if (n == 2)
        snprintf(out, len, "%s, %s", nodes[0]->name, nodes[1]->name);
    else
        snprintf(out, len, "%s +%zu more", nodes[0]->name, n - 1);
}

static void taint_str(const struct taint *t, char *out, size_t len)
{
    if (t->value && *t->value)
        snprintf(out, len, "%s=%s:%s", t->key, t->value, t->effect);
    else
        snprintf(out, len, "%s:%s", t->key, t->effect);
}

static int check_nodes(const struct wh_snapshot *snap, const struct wh_object *o,
                       const struct kpod *pod, struct warn_list *out)
{
    if (!snap->nodes_synced || snap->n_nodes == 0)
        return K_OK; /* an empty cluster may be waiting for an autoscaler: say nothing */
    int rc = K_ENOMEM;
    const struct wh_runtime_class *rtc =
        snap->runtime_classes_synced ? wh_snapshot_runtime_class(snap, pod->runtime_class) : NULL;
    const struct knode **sel = calloc(snap->n_nodes, sizeof(*sel));
    const struct knode **cand = calloc(snap->n_nodes, sizeof(*cand));
    const struct taint **blocking = calloc(snap->n_nodes, sizeof(*blocking));
    size_t n_extra = (rtc ? rtc->n_tolerations : 0) + (snap->assume_ert ? pod->gpu_requests.n : 0);
    struct toleration *tols = calloc(pod->n_tolerations + n_extra + 1, sizeof(*tols));
    if (!sel || !cand || !blocking || !tols)
        goto out;
    rc = K_OK;

    size_t n_sel = 0;
    for (size_t i = 0; i < snap->n_nodes; i++) {
        const struct knode *node = snap->nodes[i];
        if (!pod_matches_node_selection(pod, node))
            continue;
        if (rtc && !node_selector_matches(&rtc->node_selector, &node->labels))
            continue;
        sel[n_sel++] = node;
    }
    bool selective =
        pod->node_selector.n > 0 || pod->affinity.present || (rtc && rtc->node_selector.n > 0);
    if (n_sel == 0) {
        warn_add(out, WARN_REASON_SELECTOR,
                 "%s.%s: no node matches the pod's node selection (%zu nodes checked); pods will "
                 "stay Pending",
                 o->spec_path, pod->affinity.present ? "affinity.nodeAffinity" : "nodeSelector",
                 snap->n_nodes);
        goto out;
    }

    /* every requested GPU resource must be listed (capacity > 0) by some selected node */
    bool missing = false;
    for (size_t r = 0; r < pod->gpu_requests.n; r++) {
        const char *res = pod->gpu_requests.items[r].name;
        bool listed = false;
        for (size_t i = 0; i < n_sel && !listed; i++)
            listed = resource_list_get(&sel[i]->capacity, res) > 0;
        if (listed)
            continue;
        missing = true;
        char siblings[160] = "", path[400];
        size_t ns = 0, used = 0;
        for (size_t i = 0; i < n_sel && ns < 3; i++) {
            for (size_t k = 0; k < sel[i]->capacity.n && ns < 3; k++) {
                const struct resource_amount *a = &sel[i]->capacity.items[k];
                if (a->value <= 0 || resource_list_get(&pod->gpu_requests, a->name) > 0 ||
                    strstr(siblings, a->name))
                    continue;
                int w = snprintf(siblings + used, sizeof(siblings) - used, "%s%s", ns ? ", " : "",
                                 a->name);
                if (w < 0 || (size_t)w >= sizeof(siblings) - used)
                    break;
                used += (size_t)w;
                ns++;
            }
        }
        resource_path(o, res, path, sizeof(path));
        if (ns)
            warn_add(out, WARN_REASON_NO_GPU_NODE,
                     "%s: no %snode lists %s in capacity; nodes offer %s", path,
                     selective ? "selected " : "", res, siblings);
        else
            warn_add(out, WARN_REASON_NO_GPU_NODE,
                     "%s: no %snode lists %s in capacity (device plugin not running?); pods will "
                     "stay Pending",
                     path, selective ? "selected " : "", res);
    }
    if (missing)
        goto out;

    /* GPU candidates: selected nodes listing every requested resource */
    size_t n_cand = 0;
    for (size_t i = 0; i < n_sel; i++) {
        bool all = true;
        for (size_t r = 0; r < pod->gpu_requests.n && all; r++)
            all = resource_list_get(&sel[i]->capacity, pod->gpu_requests.items[r].name) > 0;
        if (all)
            cand[n_cand++] = sel[i];
    }
    if (n_cand == 0)
        goto out; /* each resource exists, but on different nodes: nothing tolerations can fix */

    /* a request above every candidate's capacity never fits, whatever else changes (not for
     * qGPU: its own scheduler counts those resources) */
    for (size_t r = 0; r < pod->gpu_requests.n; r++) {
        const char *res = pod->gpu_requests.items[r].name;
        if (is_qgpu(res))
            continue;
        int64_t want = pod->gpu_requests.items[r].value, most = 0;
        const struct knode *largest = NULL;
        for (size_t i = 0; i < n_cand; i++) {
            int64_t c = resource_list_get(&cand[i]->capacity, res);
            if (c > most) {
                most = c;
                largest = cand[i];
            }
        }
        if (largest && want > most) {
            char path[400];
            resource_path(o, res, path, sizeof(path));
            warn_add(out, WARN_REASON_TOO_LARGE,
                     "%s: %" PRId64 " %s per pod but the largest %snode (%s) has %" PRId64
                     "; no node will ever fit it",
                     path, want, res, selective ? "selected " : "", largest->name, most);
            missing = true;
        }
    }
    if (missing)
        goto out;

    size_t nt = 0;
    for (size_t i = 0; i < pod->n_tolerations; i++)
        tols[nt++] = pod->tolerations[i];
    for (size_t i = 0; rtc && i < rtc->n_tolerations; i++)
        tols[nt++] = rtc->tolerations[i];
    for (size_t r = 0; snap->assume_ert && r < pod->gpu_requests.n; r++)
        tols[nt++] = (struct toleration){.key = pod->gpu_requests.items[r].name,
                                         .op = "Exists",
                                         .value = "",
                                         .effect = "NoSchedule"};
    bool same = true;
    for (size_t i = 0; i < n_cand; i++) {
        blocking[i] = node_first_untolerated_taint(cand[i], tols, nt);
        if (!blocking[i])
            goto out; /* one candidate admits the pod */
        if (strcmp(blocking[i]->key, blocking[0]->key) != 0 ||
            strcmp(blocking[i]->effect, blocking[0]->effect) != 0)
            same = false;
    }
    char names[160], taint[200];
    name_list(cand, n_cand, names, sizeof(names));
    taint_str(blocking[0], taint, sizeof(taint));
    const char *res0 = pod->gpu_requests.items[0].name;
    if (same)
        warn_add(out, WARN_REASON_TAINT,
                 "%s.tolerations: every node with %s (%s) has taint %s; add toleration {key: %s, "
                 "operator: Exists, effect: %s}",
                 o->spec_path, res0, names, taint, blocking[0]->key, blocking[0]->effect);
    else
        warn_add(out, WARN_REASON_TAINT,
                 "%s.tolerations: every node with %s (%s) has an untolerated taint, e.g. %s on %s",
                 o->spec_path, res0, names, taint, cand[0]->name);
out:
    free(sel);
    free(cand);
    free(blocking);
    free(tols);
    return rc;
}

int wh_check_pod_spec(const struct wh_snapshot *snap, const struct wh_object *o,
                      struct warn_list *out)
{
    struct kpod pod;
    int rc = project_pod_spec(o->spec, o->meta, snap->gpus, &pod);
    if (rc != K_OK)
        return rc;
    if (pod.gpu_requests.n > 0) {
        check_qgpu(snap, o, &pod, out);
        check_runtime_class(snap, o, &pod, out);
        check_quota(snap, o, &pod, out);
        rc = check_nodes(snap, o, &pod, out);
    }
    pod_cleanup(&pod);
    return rc;
}

void wh_check_quota_object(json_object *quota, const struct gpu_set *gpus, struct warn_list *out)
{
    json_object *hard = jget(jget(quota, "spec", json_type_object), "hard", json_type_object);
    if (!hard)
        return;
    json_object_object_foreach(hard, key, val)
    {
        (void)val;
        const char *res = NULL;
        if (gpu_set_contains(gpus, key))
            res = key;
        else if (strncmp(key, "limits.", 7) == 0 && gpu_set_contains(gpus, key + 7))
            res = key + 7;
        if (res)
            warn_add(out, WARN_REASON_QUOTA_KEY,
                     "spec.hard.%s: extended resources are only limited through requests.%s; "
                     "this key limits nothing",
                     key, res);
    }
}
