/* warnings.c - the admission checks and the bounded warning list. */
#include "warnings.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoscaler.h"
#include "classify/match.h"
#include "classify/toleration_advice.h"
#include "kube/json.h"
#include "kube/project.h"
#include "util/result.h"
#include "util/utf8.h"

/* ------------------------------------------------------------------ the list */

void warn_list_init(struct warn_list *l)
{
    memset(l, 0, sizeof(*l));
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

/* hard - used, at least 0, saturating at INT64_MAX (used may be negative in a forged status). */
static int64_t quota_left(int64_t hard, int64_t used)
{
    int64_t left = int64_sub_sat(hard, used);
    return left > 0 ? left : 0;
}

static void check_quota(const struct wh_snapshot *snap, const struct wh_object *o,
                        const struct kpod *pod, struct warn_list *out)
{
    if (!snap->quotas_synced || !o->ns || o->replicas == 0)
        return;
    struct wh_quota_item items[WH_MAX_QUOTA_ITEMS];
    size_t n_items = wh_quota_items(snap, pod, items, WH_MAX_QUOTA_ITEMS);
    for (size_t qi = 0; qi < snap->n_quotas; qi++) {
        const struct wh_quota *q = &snap->quotas[qi];
        if (strcmp(q->ns, o->ns) != 0 || q->scoped)
            continue;
        for (size_t r = 0; r < n_items; r++) {
            const char *res = items[r].resource, *key = items[r].key;
            int64_t per_pod = items[r].per_pod, hard, used = 0;
            char path[400], via[1200] = "";
            if (per_pod <= 0 || !quota_get(&q->hard, key, &hard))
                continue;
            quota_get(&q->used, key, &used);
            resource_path(o, res, path, sizeof(path));
            /* A longer text is cut: the warning keeps its first 1 KiB of explanation. */
            if (items[r].via_class &&
                snprintf(via, sizeof(via),
                         " (where DeviceClass %s serves %s through DRA, the claim kube-scheduler "
                         "creates for the pod counts %s there)",
                         items[r].via_class, res, key) < 0)
                via[0] = '\0';
            if (per_pod > hard) {
                warn_add(out, WARN_REASON_QUOTA,
                         "%s: %s %" PRId64 " %s but quota \"%s\" allows %s=%" PRId64
                         " in total; it can never be %s%s",
                         path, o->is_pod ? "requests" : "each pod requests", per_pod, res, q->name,
                         key, hard, items[r].via_class ? "bound" : "admitted", via);
                continue;
            }
            if (!o->create)
                continue;
            int64_t left = quota_left(hard, used);
            int64_t n = o->replicas < 0 ? 1 : o->replicas, want;
            if (__builtin_mul_overflow(n, per_pod, &want) || want > left) {
                if (o->is_pod || o->replicas < 0)
                    warn_add(out, WARN_REASON_QUOTA,
                             "%s: %s %" PRId64 " %s but quota \"%s\" has %" PRId64
                             " left (used %" PRId64 "/%" PRId64 ")%s",
                             path, o->is_pod ? "requests" : "each pod requests", per_pod, res,
                             q->name, left, used, hard, via);
                else
                    warn_add(out, WARN_REASON_QUOTA,
                             "%s: %" PRId64 " replicas x %" PRId64
                             " %s but quota \"%s\" has %" PRId64 " left (used %" PRId64 "/%" PRId64
                             "); only %" PRId64 " of %" PRId64 " pods can be created%s",
                             path, n, per_pod, res, q->name, left, used, hard, left / per_pod, n,
                             via);
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

int wh_node_verdicts(const struct wh_snapshot *snap, const struct kpod *pod, node_usage_fn usage,
                     void *usage_ctx, struct node_verdict *verdicts, size_t *closest)
{
    *closest = SIZE_MAX;
    const struct wh_runtime_class *rtc =
        snap->runtime_classes_synced ? wh_snapshot_runtime_class(snap, pod->runtime_class) : NULL;
    size_t n_sel = pod->node_selector.n + (rtc ? rtc->node_selector.n : 0);
    size_t n_tols = pod->n_tolerations + (rtc ? rtc->n_tolerations : 0) +
                    (snap->assume_ert ? pod->gpu_requests.n : 0);
    struct kv *sel = calloc(n_sel + 1, sizeof(*sel));
    struct toleration *tols = calloc(n_tols + 1, sizeof(*tols));
    if (!sel || !tols) {
        free(sel);
        free(tols);
        return K_ENOMEM;
    }
    /* the pod as the scheduler will see it: what the RuntimeClass and ExtendedResourceToleration
     * admission plugins merge in (a RuntimeClass selector that conflicts with the pod's is
     * rejected at admission; here both must match, so no node does) */
    struct kpod view = *pod;
    size_t k = 0;
    for (size_t i = 0; i < pod->node_selector.n; i++)
        sel[k++] = pod->node_selector.items[i];
    for (size_t i = 0; rtc && i < rtc->node_selector.n; i++)
        sel[k++] = rtc->node_selector.items[i];
    view.node_selector = (struct kv_list){sel, k};
    k = 0;
    for (size_t i = 0; i < pod->n_tolerations; i++)
        tols[k++] = pod->tolerations[i];
    for (size_t i = 0; rtc && i < rtc->n_tolerations; i++)
        tols[k++] = rtc->tolerations[i];
    for (size_t r = 0; snap->assume_ert && r < pod->gpu_requests.n; r++)
        tols[k++] = (struct toleration){.key = pod->gpu_requests.items[r].name,
                                        .op = "Exists",
                                        .value = "",
                                        .effect = "NoSchedule"};
    view.tolerations = tols;
    view.n_tolerations = k;
    *closest = classify_nodes(&view, snap->nodes, snap->n_nodes, usage, usage_ctx, verdicts);
    free(sel);
    free(tols);
    return K_OK;
}

/* Whether some selected node lists `resource` in capacity: the ladder's no-gpu-node step. */
static bool listed_by_selected(const struct node_verdict *v, size_t n, const char *resource)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].step != CAUSE_LABEL_MISMATCH &&
            node_resource_step(v[i].node, resource, 1, 0) != CAUSE_NO_GPU_NODE)
            return true;
    return false;
}

/* Up to three GPU resources the selected nodes list that the pod does not request. */
static void sibling_resources(const struct node_verdict *v, size_t n, const struct kpod *pod,
                              char *out, size_t len)
{
    size_t ns = 0, used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && ns < 3; i++) {
        if (v[i].step == CAUSE_LABEL_MISMATCH)
            continue;
        const struct resource_list *cap = &v[i].node->capacity;
        for (size_t k = 0; k < cap->n && ns < 3; k++) {
            const struct resource_amount *a = &cap->items[k];
            if (a->value <= 0 || resource_list_get(&pod->gpu_requests, a->name) > 0 ||
                strstr(out, a->name))
                continue;
            int w = snprintf(out + used, len - used, "%s%s", ns ? ", " : "", a->name);
            if (w < 0 || (size_t)w >= len - used)
                return;
            used += (size_t)w;
            ns++;
        }
    }
}

/* The taint check over the GPU candidates, every one of them stopped at the taint step: a
 * cordoned node (taint NULL) gets no toleration advice, as the controller gives none, and neither
 * does a taint Kubernetes or a node autoscaler sets for the node's state (taint_node_condition():
 * not-ready, karpenter.sh/unregistered, ToBeDeletedByClusterAutoscaler, ...). */
static void warn_blocked(const struct wh_object *o, const struct kpod *pod,
                         const struct node_verdict *const *cand, size_t n_cand,
                         const struct node_verdict *closest, struct warn_list *out)
{
    const struct knode *all[2], *cordoned[2]; /* name_list reads at most two */
    const struct node_verdict *tainted = NULL;
    size_t n_cordoned = 0;
    bool same = true, same_value = true; /* key and effect; and value */
    for (size_t i = 0; i < n_cand; i++) {
        const struct taint *t = cand[i]->taint;
        if (i < 2)
            all[i] = cand[i]->node;
        if (!t) {
            if (n_cordoned < 2)
                cordoned[n_cordoned] = cand[i]->node;
            n_cordoned++;
        } else if (!tainted) {
            tainted = cand[i];
        } else if (strcmp(t->key, tainted->taint->key) != 0 ||
                   strcmp(t->effect, tainted->taint->effect) != 0) {
            same = false;
        } else if (strcmp(t->value, tainted->taint->value) != 0) {
            same_value = false;
        }
    }
    char names[160], taint[200], advice[TOLERATION_ADVICE_MAX];
    name_list(all, n_cand, names, sizeof(names));
    const char *res0 = pod->gpu_requests.items[0].name;
    if (!tainted) {
        warn_add(out, WARN_REASON_TAINT,
                 "%s: every node with %s (%s) is cordoned (spec.unschedulable); pods will stay "
                 "Pending until one is uncordoned",
                 o->spec_path, res0, names);
        return;
    }
    if (closest->taint)
        tainted = closest;
    taint_str(tainted->taint, taint, sizeof(taint));
    toleration_advice(advice, sizeof(advice), tainted->taint, !same_value);
    const struct node_condition_taint *cond = taint_node_condition(tainted->taint);
    if (same && cond && n_cordoned) {
        /* a taint the node controller, the kubelet or an autoscaler manages: the node needs
         * fixing (or is joining or leaving), and a toleration would only hide that from the
         * scheduler */
        name_list(cordoned, n_cordoned, names, sizeof(names));
        warn_add(out, WARN_REASON_TAINT,
                 "%s: every node with %s %s (taint %s) or cordoned (%s); %s rather than "
                 "tolerate the taint",
                 o->spec_path, res0, cond->state, taint, names,
                 cond->autoscaler ? cond->remedy : "fix the nodes");
    } else if (same && cond) {
        warn_add(out, WARN_REASON_TAINT,
                 "%s: every node with %s (%s) %s (taint %s, set by %s); %s rather than tolerate "
                 "it",
                 o->spec_path, res0, names, cond->state, taint, cond->setter, cond->remedy);
    } else if (same && n_cordoned) {
        name_list(cordoned, n_cordoned, names, sizeof(names));
        warn_add(out, WARN_REASON_TAINT,
                 "%s.tolerations: every node with %s has taint %s or is cordoned (%s); add "
                 "toleration %s",
                 o->spec_path, res0, taint, names, advice);
    } else if (same) {
        warn_add(out, WARN_REASON_TAINT,
                 "%s.tolerations: every node with %s (%s) has taint %s; add toleration %s",
                 o->spec_path, res0, names, taint, advice);
    } else {
        /* no path to the tolerations when the example is a node's state: nothing to add there */
        warn_add(out, WARN_REASON_TAINT,
                 "%s%s: every node with %s (%s) %shas an untolerated taint, e.g. %s on %s%s%s",
                 o->spec_path, cond ? "" : ".tolerations", res0, names,
                 n_cordoned ? "is cordoned or " : "", taint, tainted->node->name,
                 cond ? ", which " : "", cond ? cond->state : "");
    }
}

/* Node selection, GPU listed in capacity, request above every node's capacity, and taints or
 * cordons, all read from the ladder's per-node verdicts (wh_node_verdicts). */
static int check_nodes(const struct wh_snapshot *snap, const struct wh_object *o,
                       const struct kpod *pod, struct warn_list *out)
{
    if (!snap->nodes_synced || snap->n_nodes == 0)
        return K_OK; /* an empty cluster may be waiting for an autoscaler: say nothing */
    const struct wh_runtime_class *rtc =
        snap->runtime_classes_synced ? wh_snapshot_runtime_class(snap, pod->runtime_class) : NULL;
    struct node_verdict *v = calloc(snap->n_nodes, sizeof(*v));
    const struct node_verdict **cand = calloc(snap->n_nodes, sizeof(*cand));
    size_t closest;
    int rc = K_ENOMEM;
    if (!v || !cand)
        goto out;
    /* usage NULL: what is in use now changes by the minute; only lasting faults are warned */
    rc = wh_node_verdicts(snap, pod, NULL, NULL, v, &closest);
    if (rc != K_OK)
        goto out;

    bool selective =
        pod->node_selector.n > 0 || pod->affinity.present || (rtc && rtc->node_selector.n > 0);
    /* With a node autoscaler the three warnings below describe the current nodes only: the
     * autoscaler may add a node that fits (or say why it will not; the controller reads that) */
    const char *as = wh_autoscaler_name(snap->autoscalers);
    if (closest == SIZE_MAX) {
        const char *field = pod->affinity.present ? "affinity.nodeAffinity" : "nodeSelector";
        if (as)
            warn_add(out, WARN_REASON_SELECTOR,
                     "%s.%s: no current node matches the pod's node selection (%zu nodes "
                     "checked); %s must add one (pods wait until it does)",
                     o->spec_path, field, snap->n_nodes, as);
        else
            warn_add(out, WARN_REASON_SELECTOR,
                     "%s.%s: no node matches the pod's node selection (%zu nodes checked); pods "
                     "will stay Pending",
                     o->spec_path, field, snap->n_nodes);
        goto out;
    }

    /* every requested GPU resource must be listed (capacity > 0) by some selected node */
    bool missing = false;
    for (size_t r = 0; r < pod->gpu_requests.n; r++) {
        const char *res = pod->gpu_requests.items[r].name;
        if (listed_by_selected(v, snap->n_nodes, res))
            continue;
        if (wh_served_by_dra(snap, res)) {
            /* a DeviceClass serves it on the nodes that do not list it (KEP-5004): the
               claim checks of the ladder's DRA steps speak for those, not this one */
            missing = true;
            continue;
        }
        missing = true;
        char siblings[160], path[400];
        sibling_resources(v, snap->n_nodes, pod, siblings, sizeof(siblings));
        resource_path(o, res, path, sizeof(path));
        if (as && siblings[0])
            /* the siblings last: a long path cuts them, not what to expect */
            warn_add(out, WARN_REASON_NO_GPU_NODE,
                     "%s: no current %snode lists %s; %s must add one; nodes offer %s", path,
                     selective ? "selected " : "", res, as, siblings);
        else if (as)
            warn_add(out, WARN_REASON_NO_GPU_NODE,
                     "%s: no current %snode lists %s in capacity; %s must add one (pods wait "
                     "until it does)",
                     path, selective ? "selected " : "", res, as);
        else if (siblings[0])
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
    for (size_t i = 0; i < snap->n_nodes; i++)
        if (v[i].step != CAUSE_LABEL_MISMATCH && v[i].full_capacity)
            cand[n_cand++] = &v[i];
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
            int64_t c = resource_list_get(&cand[i]->node->capacity, res);
            if (c > most) {
                most = c;
                largest = cand[i]->node;
            }
        }
        if (largest && want > most) {
            char path[400];
            resource_path(o, res, path, sizeof(path));
            if (as)
                warn_add(out, WARN_REASON_TOO_LARGE,
                         "%s: %" PRId64 " %s per pod but the largest current %snode (%s) has "
                         "%" PRId64 "; %s must add a larger one (pods wait until it does)",
                         path, want, res, selective ? "selected " : "", largest->name, most, as);
            else
                warn_add(out, WARN_REASON_TOO_LARGE,
                         "%s: %" PRId64 " %s per pod but the largest %snode (%s) has %" PRId64
                         "; no node will ever fit it",
                         path, want, res, selective ? "selected " : "", largest->name, most);
            missing = true;
        }
    }
    if (missing)
        goto out;

    for (size_t i = 0; i < n_cand; i++)
        if (cand[i]->step != CAUSE_TAINT)
            goto out; /* one candidate admits the pod */
    warn_blocked(o, pod, cand, n_cand, &v[closest], out);
out:
    free(v);
    free(cand);
    return rc;
}

int wh_check_pod_spec(const struct wh_snapshot *snap, const struct wh_object *o,
                      struct warn_list *out)
{
    struct kpod pod;
    struct project_excess ex;
    int rc = project_pod_spec(o->spec, o->meta, snap->gpus, &pod, &ex);
    json_object *claims = jget(o->spec, "resourceClaims", json_type_array);
    if (rc == K_ETOOBIG && claims && json_object_array_length(claims) > DRA_MAX_POD_CLAIMS) {
        warn_add(out, WARN_REASON_NOT_CHECKED,
                 "%s.resourceClaims: %zu claims, above the %d gputri-webhook checks per pod; GPU "
                 "checks skipped",
                 o->spec_path, json_object_array_length(claims), DRA_MAX_POD_CLAIMS);
        return K_OK;
    }
    if (rc == K_ETOOBIG) {
        /* more distinct GPU resources than a resource list holds: allowed, but never silently */
        warn_add(out, WARN_REASON_NOT_CHECKED,
                 "%s: too large to check: more than %d distinct GPU resources (or DRA entries "
                 "above the API's limits); GPU checks skipped",
                 o->spec_path, RESOURCE_LIST_MAX);
        return K_OK;
    }
    if (rc != K_OK)
        return rc;
    if (pod.gpu_requests.n > 0) {
        check_qgpu(snap, o, &pod, out);
        check_runtime_class(snap, o, &pod, out);
        check_quota(snap, o, &pod, out);
        /* what was not projected must not be evaluated: say so instead */
        if (ex.selector_requirements || ex.selector_values)
            warn_add(out, WARN_REASON_NOT_CHECKED,
                     "%s.affinity: node selection of %zu requirements and %zu values, above the "
                     "%d and %d gputri-webhook evaluates per node; node checks skipped",
                     o->spec_path, ex.selector_requirements, ex.selector_values,
                     PROJECT_MAX_SELECTOR_REQUIREMENTS, PROJECT_MAX_SELECTOR_VALUES);
        if (ex.tolerations)
            warn_add(out, WARN_REASON_NOT_CHECKED,
                     "%s.tolerations: %zu tolerations, above the %d gputri-webhook evaluates per "
                     "node; node checks skipped",
                     o->spec_path, ex.tolerations, PROJECT_MAX_TOLERATIONS);
        bool many = pod.gpu_requests.n > WH_MAX_NODE_CHECK_GPU_RESOURCES;
        if (many)
            warn_add(out, WARN_REASON_NOT_CHECKED,
                     "%s: %zu distinct GPU resources, above the %d gputri-webhook evaluates per "
                     "node; node checks skipped",
                     o->spec_path, pod.gpu_requests.n, WH_MAX_NODE_CHECK_GPU_RESOURCES);
        if (!ex.selector_requirements && !ex.selector_values && !ex.tolerations && !many)
            rc = check_nodes(snap, o, &pod, out);
    } else if (pod_has_ext_requests(&pod))
        check_quota(snap, o, &pod, out); /* a DeviceClass's implicit name only (KEP-5004) */
    if (rc == K_OK)
        rc = wh_check_pod_claims(snap, o, &pod, out);
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
