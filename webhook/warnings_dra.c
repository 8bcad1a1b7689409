/*
 * warnings_dra.c - the admission checks of Dynamic Resource Allocation (resource.k8s.io/v1):
 * pod claims naming missing templates or claims, requests naming missing DeviceClasses, drivers
 * without ResourceSlices, requests no node can ever satisfy, adminAccess in an unlabelled
 * namespace. Device matching is the ladder's own (core/classify dra_count_matching).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/dra_store.h"
#include "cel/cel.h"
#include "kube/json.h"
#include "kube/project.h"
#include "util/result.h"
#include "warnings.h"

/* ------------------------------------------------------------------ requests */

/* Where the requests being checked are, for the warnings' field paths and wording. */
struct where {
    const char *devices_path; /* "spec.devices" of the admitted object; NULL when referenced */
    const char *ref_path;     /* the pod's spec.resourceClaims[i].<field> (referenced) */
    const char *ref_kind;     /* "template" or "claim" (referenced) */
    const char *ref_name;
    const char *outcome; /* what follows, e.g. "the claim can never be allocated" */
    const char *exactly; /* where a request's own fields are: ".exactly" (v1 layout; NULL too),
                          * "" (v1beta1: on the request itself, kube/dra_api.h) */
};

struct budget {
    size_t matched;               /* alternatives matched against the nodes */
    size_t skipped;               /* alternatives over WH_DRA_MAX_MATCHED or WH_DRA_MAX_WORK */
    size_t costly;                /* alternatives left undecided: the CEL budget was spent */
    size_t busy;                  /* alternatives not matched: the review was answered shed */
    uint64_t work;                /* units spent (warnings.h WH_DRA_MAX_WORK) */
    const struct dra_slice **buf; /* DRA_MAX_NODE_SLICES entries for the estimate; NULL: none */
    struct cel_budget cel; /* the selectors' steps, charged as they run (WH_DRA_MAX_CEL_STEPS) */
};

/* A budget for one admitted object; the view charges its CEL steps to it. */
static int budget_init(struct budget *b, const struct wh_snapshot *snap, struct dra_view *view)
{
    memset(b, 0, sizeof(*b));
    cel_budget_init(&b->cel, WH_DRA_MAX_CEL_STEPS);
    cel_budget_set_deadline(&b->cel, snap->cel_deadline_ns);
    view->cel_budget = &b->cel;
    b->buf = calloc(DRA_MAX_NODE_SLICES, sizeof(*b->buf));
    return b->buf ? K_OK : K_ENOMEM;
}

/*
 * The units one alternative of class `cls` costs over every node apart from its selectors
 * (warnings.h WH_DRA_MAX_WORK), or UINT64_MAX once above `left` (the estimate stops there). The
 * selectors are charged as they run, in CEL steps (budget.cel).
 */
static uint64_t alt_cost(const struct wh_snapshot *snap, const struct dra_class *cls,
                         const struct dra_slice **buf, uint64_t left)
{
    uint64_t cost = 0;
    uint64_t per_device = WH_DRA_COST_DEVICE;
    for (size_t i = 0; i < snap->n_nodes; i++) {
        const char *node = snap->nodes[i]->name;
        size_t n =
            node ? dra_store_node_slices(snap->dra, node, cls->driver, buf, DRA_MAX_NODE_SLICES)
                 : 0;
        if (n > DRA_MAX_NODE_SLICES)
            n = DRA_MAX_NODE_SLICES;
        cost += (uint64_t)n * n;
        for (size_t k = 0; k < n; k++)
            cost += per_device * buf[k]->n_devices;
        if (cost > left)
            return UINT64_MAX;
    }
    return cost;
}

/* The field path of request ri (alternative alt, SIZE_MAX for `exactly`) and its leaf, and
 * the subject that names it in the text. */
static void name_request(const struct where *w, size_t ri, const struct dra_request *r, size_t alt,
                         const char *leaf, char *path, size_t plen, char *subj, size_t slen)
{
    const struct dra_exact *e = alt == SIZE_MAX ? &r->exactly : &r->first_available[alt];
    char rname[200];
    if (e->name)
        snprintf(rname, sizeof(rname), "%s/%s", r->name ? r->name : "", e->name);
    else
        snprintf(rname, sizeof(rname), "%s", r->name ? r->name : "");
    if (w->devices_path) {
        if (alt == SIZE_MAX)
            snprintf(path, plen, "%s.requests[%zu]%s%s%s", w->devices_path, ri,
                     w->exactly ? w->exactly : ".exactly", leaf ? "." : "", leaf ? leaf : "");
        else
            snprintf(path, plen, "%s.requests[%zu].firstAvailable[%zu]%s%s", w->devices_path, ri,
                     alt, leaf ? "." : "", leaf ? leaf : "");
        snprintf(subj, slen, "request \"%s\"", rname);
    } else {
        snprintf(path, plen, "%s", w->ref_path);
        snprintf(subj, slen, "%s \"%s\" request \"%s\"", w->ref_kind, w->ref_name, rname);
    }
}

enum alt_problem { ALT_OK, ALT_NO_CLASS, ALT_NO_DRIVER, ALT_UNREACHED, ALT_NO_MATCH, ALT_TOO_FEW };

struct alt_state {
    enum alt_problem problem;
    const struct dra_class *cls;
    struct dra_match_count mc;
};

static void warn_alt(const struct where *w, size_t ri, const struct dra_request *r, size_t alt,
                     const struct alt_state *st, struct warn_list *out)
{
    const struct dra_exact *e = alt == SIZE_MAX ? &r->exactly : &r->first_available[alt];
    char path[400], subj[500];
    const char *cls = e->class_name ? e->class_name : "";
    const char *drv = st->cls && st->cls->driver ? st->cls->driver : NULL;
    switch (st->problem) {
    case ALT_NO_DRIVER:
        name_request(w, ri, r, alt, "deviceClassName", path, sizeof(path), subj, sizeof(subj));
        warn_add(out, WARN_REASON_DRA_NO_DRIVER,
                 "%s: %s: driver \"%s\" of DeviceClass \"%s\" publishes no ResourceSlice (not "
                 "installed?); %s",
                 path, subj, drv ? drv : "", cls, w->outcome);
        break;
    case ALT_UNREACHED:
        name_request(w, ri, r, alt, "deviceClassName", path, sizeof(path), subj, sizeof(subj));
        if (drv)
            warn_add(out, WARN_REASON_DRA_NO_DRIVER,
                     "%s: %s: no ResourceSlice of driver \"%s\" (DeviceClass \"%s\") reaches any "
                     "node; %s",
                     path, subj, drv, cls, w->outcome);
        else
            warn_add(out, WARN_REASON_DRA_NO_DRIVER,
                     "%s: %s: no device of any driver reaches a node (DeviceClass \"%s\"); %s",
                     path, subj, cls, w->outcome);
        break;
    case ALT_NO_MATCH:
        name_request(w, ri, r, alt, NULL, path, sizeof(path), subj, sizeof(subj));
        warn_add(out, WARN_REASON_DRA_NO_MATCH,
                 "%s: %s: no device on any node matches the selectors (DeviceClass \"%s\"); %s",
                 path, subj, cls, w->outcome);
        break;
    case ALT_TOO_FEW:
        name_request(w, ri, r, alt, "count", path, sizeof(path), subj, sizeof(subj));
        warn_add(out, WARN_REASON_DRA_TOO_LARGE,
                 "%s: %s: %" PRId64 " devices of DeviceClass \"%s\" but the most any node has "
                 "matching is %zu (%s); %s",
                 path, subj, e->count, cls, st->mc.most,
                 st->mc.node && st->mc.node->name ? st->mc.node->name : "", w->outcome);
        break;
    case ALT_OK:
    case ALT_NO_CLASS:
    default:
        break;
    }
}

/* One alternative with an existing class: driver, then devices. */
static int check_alt(const struct wh_snapshot *snap, const struct dra_view *view,
                     const struct dra_exact *e, struct budget *b, struct alt_state *st)
{
    st->problem = ALT_OK;
    if (!dra_store_synced(snap->dra, DRA_KIND_SLICE))
        return K_OK;
    if (st->cls->driver && !dra_store_driver_published(snap->dra, st->cls->driver)) {
        st->problem = ALT_NO_DRIVER;
        return K_OK;
    }
    if (!snap->nodes_synced || snap->n_nodes == 0)
        return K_OK; /* an empty cluster may be waiting for an autoscaler: say nothing */
    if (snap->dra_busy) {
        b->busy++;
        return K_OK;
    }
    if (b->cel.exhausted) { /* every device would be undecided */
        b->costly++;
        return K_OK;
    }
    uint64_t cost = b->matched < WH_DRA_MAX_MATCHED && b->buf
                        ? alt_cost(snap, st->cls, b->buf, WH_DRA_MAX_WORK - b->work)
                        : UINT64_MAX;
    if (cost == UINT64_MAX) {
        b->skipped++;
        return K_OK;
    }
    b->matched++;
    b->work += cost;
    int rc = dra_count_matching(view, e, st->cls, snap->nodes, snap->n_nodes, &st->mc);
    if (rc != K_OK)
        return rc;
    if (st->mc.too_costly)
        b->costly++; /* undecided devices count as possible: no warning below rests on them */
    int64_t wanted = e->mode == DRA_MODE_ALL ? 1 : e->count;
    if (!st->mc.reached)
        st->problem = ALT_UNREACHED;
    else if (st->mc.most_possible == 0)
        st->problem = ALT_NO_MATCH;
    else if ((int64_t)st->mc.most_possible < wanted)
        st->problem = ALT_TOO_FEW;
    return K_OK;
}

static bool ns_allows_admin(const struct wh_snapshot *snap, const char *ns)
{
    if (!snap->namespaces_synced || !ns)
        return true; /* cannot tell */
    const struct wh_namespace *n = wh_snapshot_namespace(snap, ns);
    if (!n)
        return true; /* the namespace is being created in the same apply: cannot tell */
    const char *v = kv_list_get(&n->labels, DRA_ADMIN_ACCESS_LABEL);
    return v && strcmp(v, "true") == 0;
}

static int check_request(const struct wh_snapshot *snap, const struct dra_view *view,
                         const struct where *w, const char *ns, size_t ri,
                         const struct dra_request *r, struct budget *b, struct warn_list *out)
{
    size_t n = r->has_exactly ? 1 : r->n_first_available;
    if (n > DRA_MAX_FIRST_AVAILABLE)
        n = DRA_MAX_FIRST_AVAILABLE;
    if (n == 0)
        return K_OK;
    char path[400], subj[500];
    /* adminAccess (whatever the classes) */
    for (size_t i = 0; i < n; i++) {
        size_t alt = r->has_exactly ? SIZE_MAX : i;
        const struct dra_exact *e = alt == SIZE_MAX ? &r->exactly : &r->first_available[i];
        if (!e->admin_access || ns_allows_admin(snap, ns))
            continue;
        name_request(w, ri, r, alt, "adminAccess", path, sizeof(path), subj, sizeof(subj));
        warn_add(out, WARN_REASON_DRA_ADMIN,
                 "%s: %s: adminAccess needs namespace \"%s\" labelled %s=true; the API server "
                 "rejects such claims there",
                 path, subj, ns, DRA_ADMIN_ACCESS_LABEL);
        break;
    }
    if (!dra_store_synced(snap->dra, DRA_KIND_CLASS))
        return K_OK;
    struct alt_state st[DRA_MAX_FIRST_AVAILABLE];
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
        const struct dra_exact *e = r->has_exactly ? &r->exactly : &r->first_available[i];
        memset(&st[i], 0, sizeof(st[i]));
        st[i].cls = dra_store_class(snap->dra, e->class_name);
        st[i].problem = st[i].cls ? ALT_OK : ALT_NO_CLASS;
        found += st[i].cls != NULL;
    }
    if (found == 0) {
        if (r->has_exactly) {
            name_request(w, ri, r, SIZE_MAX, "deviceClassName", path, sizeof(path), subj,
                         sizeof(subj));
            warn_add(out, WARN_REASON_DRA_CLASS, "%s: %s: DeviceClass \"%s\" not found; %s", path,
                     subj, r->exactly.class_name ? r->exactly.class_name : "", w->outcome);
        } else {
            char names[200];
            size_t used = 0;
            names[0] = '\0';
            for (size_t i = 0; i < n && used < sizeof(names); i++) {
                const char *c = r->first_available[i].class_name;
                int k =
                    snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "", c ? c : "");
                if (k < 0)
                    break;
                used += (size_t)k;
            }
            name_request(w, ri, r, 0, NULL, path, sizeof(path), subj, sizeof(subj));
            /* the path of the list, not of its first entry */
            char *fa = w->devices_path ? strstr(path, ".firstAvailable[") : NULL;
            if (fa)
                strcpy(fa, ".firstAvailable");
            warn_add(out, WARN_REASON_DRA_CLASS,
                     "%s: %s: none of the firstAvailable DeviceClasses exists (%s); %s", path, subj,
                     names, w->outcome);
        }
        return K_OK;
    }
    /* driver and devices: warn only when no alternative can be allocated */
    bool any_ok = false;
    for (size_t i = 0; i < n && !any_ok; i++) {
        if (!st[i].cls)
            continue;
        const struct dra_exact *e = r->has_exactly ? &r->exactly : &r->first_available[i];
        int rc = check_alt(snap, view, e, b, &st[i]);
        if (rc != K_OK)
            return rc;
        any_ok = st[i].problem == ALT_OK;
    }
    for (size_t i = 0; i < n && !any_ok; i++)
        warn_alt(w, ri, r, r->has_exactly ? SIZE_MAX : i, &st[i], out);
    return K_OK;
}

static bool spec_is_gpu(const struct dra_view *view, const struct dra_claim_spec *spec)
{
    for (size_t i = 0; i < spec->n_requests; i++) {
        const struct dra_request *r = &spec->requests[i];
        if (r->has_exactly &&
            dra_exact_is_gpu(view, &r->exactly,
                             view->device_class(view->ctx, r->exactly.class_name)))
            return true;
        for (size_t j = 0; j < r->n_first_available; j++) {
            const struct dra_exact *e = &r->first_available[j];
            if (dra_exact_is_gpu(view, e, view->device_class(view->ctx, e->class_name)))
                return true;
        }
    }
    return false;
}

static int check_spec(const struct wh_snapshot *snap, const struct dra_view *view,
                      const struct where *w, const char *ns, const struct dra_claim_spec *spec,
                      struct budget *b, struct warn_list *out)
{
    for (size_t i = 0; i < spec->n_requests; i++) {
        int rc = check_request(snap, view, w, ns, i, &spec->requests[i], b, out);
        if (rc != K_OK)
            return rc;
    }
    return K_OK;
}

static void warn_budget(const char *path, const struct budget *b, struct warn_list *out)
{
    if (b->costly && b->cel.late)
        warn_add(out, WARN_REASON_NOT_CHECKED,
                 "%s: %zu device request%s not fully matched against node devices, %s "
                 "(not done within half the API server's timeout); class and driver checked",
                 path, b->costly, b->costly == 1 ? "" : "s", CEL_TOO_COSTLY);
    else if (b->costly)
        warn_add(out, WARN_REASON_NOT_CHECKED,
                 "%s: %zu device request%s not fully matched against node devices, %s "
                 "(over %u CEL steps per object); class and driver checked",
                 path, b->costly, b->costly == 1 ? "" : "s", CEL_TOO_COSTLY,
                 (unsigned)WH_DRA_MAX_CEL_STEPS);
    if (b->busy)
        warn_add(out, WARN_REASON_NOT_CHECKED,
                 "%s: %zu device request%s not matched against node devices: gputri-webhook was "
                 "busy with other reviews of ResourceClaims; checked for class and driver only",
                 path, b->busy, b->busy == 1 ? "" : "s");
    if (b->skipped)
        warn_add(out, WARN_REASON_NOT_CHECKED,
                 "%s: %zu device request%s not matched against node devices (gputri-webhook "
                 "matches %d per object, within a work budget); checked for class and driver "
                 "only",
                 path, b->skipped, b->skipped == 1 ? "" : "s", WH_DRA_MAX_MATCHED);
}

/* ------------------------------------------------------------------ objects */

int wh_check_dra_object(const struct wh_snapshot *snap, const char *ns, json_object *obj,
                        bool is_template, enum dra_api_version version, struct warn_list *out)
{
    if (!snap->dra_gpus || !snap->dra)
        return K_OK;
    json_object *v1 = NULL; /* obj in the layout of v1 */
    int rc = dra_json_as_v1(is_template ? DRA_KIND_TEMPLATE : DRA_KIND_CLAIM, version, obj, &v1);
    if (rc != K_OK)
        return rc;
    json_object *spec = kube_json_get(v1, "spec", json_type_object);
    if (is_template)
        spec = kube_json_get(spec, "spec", json_type_object);
    struct dra_claim_spec cs;
    memset(&cs, 0, sizeof(cs));
    rc = project_dra_claim_spec(spec, &cs);
    json_object_put(v1); /* cs holds copies */
    if (rc != K_OK)
        return rc == K_ENOMEM ? K_ENOMEM : K_OK; /* the API server rejects it */
    struct dra_view view = wh_snapshot_dra_view(snap);
    if (spec_is_gpu(&view, &cs)) {
        struct where w = {
            .devices_path = is_template ? "spec.spec.devices" : "spec.devices",
            .outcome = is_template ? "claims made from this template can never be allocated"
                                   : "the claim can never be allocated",
            .exactly = version == DRA_API_V1BETA1 ? "" : ".exactly",
        };
        struct budget b;
        rc = budget_init(&b, snap, &view);
        if (rc == K_OK)
            rc = check_spec(snap, &view, &w, ns, &cs, &b, out);
        warn_budget(w.devices_path, &b, out);
        free(b.buf);
    }
    dra_claim_spec_cleanup(&cs);
    return rc;
}

int wh_check_pod_claims(const struct wh_snapshot *snap, const struct wh_object *o,
                        const struct kpod *pod, struct warn_list *out)
{
    /* a bound pod has its devices (classify.h: ok whatever its claims) */
    if (!snap->dra_gpus || !snap->dra || pod->n_claims == 0 || (pod->node_name && *pod->node_name))
        return K_OK;
    struct dra_view view = wh_snapshot_dra_view(snap);
    const char *ns = o->ns ? o->ns : "";
    size_t n = pod->n_claims < DRA_MAX_POD_CLAIMS ? pod->n_claims : DRA_MAX_POD_CLAIMS;
    /* only pods with GPU claims; a template or claim that cannot be found counts */
    bool gpu = false;
    for (size_t i = 0; i < n && !gpu; i++) {
        const struct pod_claim_ref *ref = &pod->claims[i];
        if (ref->template_name && dra_store_synced(snap->dra, DRA_KIND_TEMPLATE)) {
            const struct dra_template *t = dra_store_template(snap->dra, ns, ref->template_name);
            gpu = !t || spec_is_gpu(&view, &t->spec);
        } else if (ref->claim_name && dra_store_synced(snap->dra, DRA_KIND_CLAIM)) {
            const struct dra_claim *c = dra_store_claim(snap->dra, ns, ref->claim_name);
            gpu = !c || spec_is_gpu(&view, &c->spec);
        }
    }
    if (!gpu)
        return K_OK;
    const char *whose = o->is_pod ? "the pod" : "pods";
    struct budget b;
    if (budget_init(&b, snap, &view) != K_OK) {
        free(b.buf);
        return K_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const struct pod_claim_ref *ref = &pod->claims[i];
        char path[300], outcome[120];
        if (ref->template_name && dra_store_synced(snap->dra, DRA_KIND_TEMPLATE)) {
            snprintf(path, sizeof(path), "%s.resourceClaims[%zu].resourceClaimTemplateName",
                     o->spec_path, i);
            const struct dra_template *t = dra_store_template(snap->dra, ns, ref->template_name);
            if (!t) {
                warn_add(out, WARN_REASON_DRA_TEMPLATE,
                         "%s: ResourceClaimTemplate \"%s\" not found in namespace \"%s\"; %s will "
                         "never get %s claim",
                         path, ref->template_name, ns, whose, o->is_pod ? "its" : "their");
                continue;
            }
            snprintf(outcome, sizeof(outcome), "%s will stay Pending", whose);
            struct where w = {.ref_path = path,
                              .ref_kind = "template",
                              .ref_name = ref->template_name,
                              .outcome = outcome};
            int rc = check_spec(snap, &view, &w, ns, &t->spec, &b, out);
            if (rc != K_OK) {
                free(b.buf);
                return rc;
            }
        } else if (ref->claim_name && dra_store_synced(snap->dra, DRA_KIND_CLAIM)) {
            snprintf(path, sizeof(path), "%s.resourceClaims[%zu].resourceClaimName", o->spec_path,
                     i);
            const struct dra_claim *c = dra_store_claim(snap->dra, ns, ref->claim_name);
            if (!c) {
                warn_add(out, WARN_REASON_DRA_CLAIM,
                         "%s: ResourceClaim \"%s\" not found in namespace \"%s\"; %s will not "
                         "start until it exists",
                         path, ref->claim_name, ns, whose);
                continue;
            }
            if (c->allocated || c->deleting)
                continue; /* allocated: its devices are there; deleting: transient */
            snprintf(outcome, sizeof(outcome), "%s will stay Pending", whose);
            struct where w = {.ref_path = path,
                              .ref_kind = "claim",
                              .ref_name = ref->claim_name,
                              .outcome = outcome};
            int rc = check_spec(snap, &view, &w, ns, &c->spec, &b, out);
            if (rc != K_OK) {
                free(b.buf);
                return rc;
            }
        }
    }
    char path[200];
    snprintf(path, sizeof(path), "%s.resourceClaims", o->spec_path);
    warn_budget(path, &b, out);
    free(b.buf);
    return K_OK;
}
