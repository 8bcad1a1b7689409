/*
 * dra_ladder.c - the DRA steps of the ladder: resolve the pod's claims, then per node gather
 * the pools that reach it and count devices that match, are free, or are held. Semantics and
 * upstream sources in classify.h.
 */
#include "classify/dra_ladder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel.h"
#include "classify/dra_share.h"
#include "classify/dra_taints.h"
#include "classify/dra_ext.h"
#include "classify/match.h"
#include "util/result.h"

/* Distinct selectors compiled per classify() call; past this an alternative is uncertain. */
#define DRA_MAX_PROGS 1024
/* Distinct attribute values tried for one matchAttribute constraint. */
#define DRA_MAX_CONSTRAINT_VALUES 64
/* Holding claims named per request. */
#define DRA_MAX_HOLDERS 4

struct prog {
    const char *src;
    struct cel_program *prog; /* NULL: not compiled (unsupported, invalid, over the cap) */
    char err[96];
};

struct alt {
    const struct dra_exact *e;
    const struct dra_class *cls; /* NULL: the class does not exist */
    size_t first_prog, n_prog;   /* range of dra_prep.idx: class then request selectors */
    bool progs_missing;          /* a selector not compiled (over DRA_MAX_PROGS): uncertain */
};

struct req {
    const char *claim; /* claim name, or the template's */
    bool from_template;
    /* a request kube-scheduler builds for this extended resource served by DRA (dra_ext.h):
       it applies only on nodes whose allocatable lacks the resource */
    const char *ext_resource;
    const struct dra_claim_spec *spec;
    const struct dra_request *r;
    struct alt alts[DRA_MAX_FIRST_AVAILABLE];
    size_t n_alts;
};

enum claim_problem { PROBLEM_NONE, PROBLEM_MISSING, PROBLEM_DELETING, PROBLEM_NOT_OWNER };

struct dra_prep {
    const struct kpod *pod;
    const struct dra_view *view;
    bool gpu;
    /* pod-level findings (the first of each) */
    const struct pod_claim_ref *tmpl_missing;
    const struct pod_claim_ref *claim_ref;
    const char *claim_name;
    enum claim_problem problem;
    size_t class_missing; /* index into reqs, SIZE_MAX: none (reqs may move) */
    /* the pod's own claims (they never hold devices against it) and the allocated ones */
    const struct dra_claim *own[DRA_MAX_POD_CLAIMS];
    size_t n_own;
    const struct dra_claim *allocated[DRA_MAX_POD_CLAIMS];
    size_t n_allocated;
    struct req *reqs;
    size_t n_reqs;
    /* the special claim's requests (dra_ext.h) and their records, owned */
    struct dra_ext_req *ext;
    struct dra_request *ext_requests;
    size_t n_ext;
    struct dra_claim_spec ext_spec; /* no requests listed, no constraints: groups them */
    struct prog *progs;             /* distinct selectors, compiled once */
    size_t n_progs, cap_progs;
    size_t *idx; /* per alternative: its selectors as indexes into progs */
    size_t n_idx, cap_idx;
    const struct dra_slice **slice_buf; /* DRA_MAX_NODE_SLICES entries for node_slices() */
    struct dra_counters *counters;      /* scratch for alt_node (dra_share.h) */
    /* The CEL budget: view->cel_budget, or own_budget. The one part of a prep that changes
       after dra_prep_new (charged by every evaluation). */
    struct cel_budget *budget;
    struct cel_budget own_budget;
    /* What describing nodes afterwards may spend (dra_node with a line, dra_put_holders):
       another DRA_CEL_MAX_STEPS, so a classification spends at most twice that. */
    struct cel_budget *describe;
    struct cel_budget describe_budget;
};

/* ---- preparation -------------------------------------------------------------------------- */

static bool gpu_name(const struct dra_view *v, const char *name)
{
    return name && v->gpu_classes && gpu_set_contains(v->gpu_classes, name);
}

bool dra_exact_is_gpu(const struct dra_view *v, const struct dra_exact *e,
                      const struct dra_class *cls)
{
    return gpu_name(v, e->class_name) || (cls && gpu_name(v, cls->driver));
}

static const struct dra_class *class_of(const struct dra_view *v, const char *name)
{
    return name && v->device_class ? v->device_class(v->ctx, name) : NULL;
}

/* The program for `src`, compiled once per call; SIZE_MAX past DRA_MAX_PROGS or on ENOMEM. */
static size_t prog_find(struct dra_prep *p, const char *src)
{
    for (size_t i = 0; i < p->n_progs; i++)
        if (p->progs[i].src == src || strcmp(p->progs[i].src, src) == 0)
            return i;
    if (p->n_progs >= DRA_MAX_PROGS)
        return SIZE_MAX;
    if (p->n_progs == p->cap_progs) {
        size_t cap = p->cap_progs ? p->cap_progs * 2 : 8;
        struct prog *progs = realloc(p->progs, cap * sizeof(*progs));
        if (!progs)
            return SIZE_MAX;
        p->progs = progs;
        p->cap_progs = cap;
    }
    struct prog *g = &p->progs[p->n_progs];
    memset(g, 0, sizeof(*g));
    g->src = src;
    size_t len = strlen(src);
    if (p->budget->exhausted) {
        snprintf(g->err, sizeof(g->err), "%s", CEL_TOO_COSTLY);
    } else if (cel_compile(src, len, &g->prog, g->err, sizeof(g->err)) != CEL_OK) {
        g->prog = NULL;
        cel_budget_charge(p->budget, len / CEL_COST_STRING_BYTES + 1);
    } else {
        cel_budget_charge(p->budget, cel_program_size(g->prog));
    }
    return p->n_progs++;
}

/* The selectors of one alternative (class selectors, then the request's) as consecutive
 * entries of p->idx, each naming a program in p->progs. */
static int alt_compile(struct dra_prep *p, struct alt *a)
{
    size_t n = (a->cls ? a->cls->n_selectors : 0) + a->e->n_selectors;
    if (p->n_idx + n > p->cap_idx) {
        size_t cap = p->cap_idx ? p->cap_idx : 16;
        while (cap < p->n_idx + n)
            cap *= 2;
        size_t *idx = realloc(p->idx, cap * sizeof(*idx));
        if (!idx)
            return K_ENOMEM;
        p->idx = idx;
        p->cap_idx = cap;
    }
    a->first_prog = p->n_idx;
    a->n_prog = n;
    for (size_t i = 0; a->cls && i < a->cls->n_selectors; i++)
        p->idx[p->n_idx++] = prog_find(p, a->cls->selectors[i]);
    for (size_t i = 0; i < a->e->n_selectors; i++)
        p->idx[p->n_idx++] = prog_find(p, a->e->selectors[i]);
    for (size_t i = 0; i < n; i++)
        if (p->idx[a->first_prog + i] == SIZE_MAX)
            a->progs_missing = true;
    return K_OK;
}

static void spec_gpu(struct dra_prep *p, const struct dra_claim_spec *spec)
{
    for (size_t i = 0; i < spec->n_requests && !p->gpu; i++) {
        const struct dra_request *r = &spec->requests[i];
        if (r->has_exactly &&
            dra_exact_is_gpu(p->view, &r->exactly, class_of(p->view, r->exactly.class_name)))
            p->gpu = true;
        for (size_t j = 0; j < r->n_first_available && !p->gpu; j++)
            if (dra_exact_is_gpu(p->view, &r->first_available[j],
                                 class_of(p->view, r->first_available[j].class_name)))
                p->gpu = true;
    }
}

static int add_spec(struct dra_prep *p, const char *claim, bool from_template,
                    const struct dra_claim_spec *spec)
{
    spec_gpu(p, spec);
    if (spec->n_requests == 0)
        return K_OK;
    struct req *reqs = realloc(p->reqs, (p->n_reqs + spec->n_requests) * sizeof(*reqs));
    if (!reqs)
        return K_ENOMEM;
    p->reqs = reqs;
    for (size_t i = 0; i < spec->n_requests; i++) {
        const struct dra_request *r = &spec->requests[i];
        struct req *q = &p->reqs[p->n_reqs++];
        memset(q, 0, sizeof(*q));
        q->claim = claim;
        q->from_template = from_template;
        q->spec = spec;
        q->r = r;
        if (r->has_exactly) {
            q->alts[q->n_alts++].e = &r->exactly;
        } else {
            for (size_t j = 0; j < r->n_first_available && j < DRA_MAX_FIRST_AVAILABLE; j++)
                q->alts[q->n_alts++].e = &r->first_available[j];
        }
        bool any_class = false;
        for (size_t j = 0; j < q->n_alts; j++) {
            struct alt *a = &q->alts[j];
            a->cls = class_of(p->view, a->e->class_name);
            if (a->cls) {
                any_class = true;
                int rc = alt_compile(p, a);
                if (rc != K_OK)
                    return rc;
            }
        }
        if (!any_class && p->class_missing == SIZE_MAX)
            p->class_missing = p->n_reqs - 1;
    }
    return K_OK;
}

/*
 * Whether claim c is the pod's own: one of its claims found by name, or one generated for it or
 * reserved for it (by the pod's uid). The uid checks matter when the claim informer is ahead of
 * the pod informer: kube-controller-manager creates the claim, the scheduler allocates and
 * reserves it, and the pod's status.resourceClaimStatuses that names it arrives later.
 */
static bool is_own(const struct dra_prep *p, const struct dra_claim *c)
{
    for (size_t i = 0; i < p->n_own; i++)
        if (p->own[i] == c)
            return true;
    const char *uid = p->pod->uid;
    if (!uid || !*uid)
        return false;
    if (c->owner_pod_uid && strcmp(c->owner_pod_uid, uid) == 0)
        return true;
    for (size_t i = 0; i < c->n_reserved_for; i++)
        if (c->reserved_for[i].uid && strcmp(c->reserved_for[i].uid, uid) == 0)
            return true;
    return false;
}

static const char *status_claim_name(const struct kpod *pod, const char *ref_name)
{
    for (size_t i = 0; i < pod->n_claim_statuses; i++)
        if (pod->claim_statuses[i].name && strcmp(pod->claim_statuses[i].name, ref_name) == 0)
            return pod->claim_statuses[i].claim_name;
    return NULL;
}

static void note_problem(struct dra_prep *p, const struct pod_claim_ref *ref, const char *name,
                         enum claim_problem problem)
{
    if (p->problem != PROBLEM_NONE)
        return;
    p->claim_ref = ref;
    p->claim_name = name;
    p->problem = problem;
}

static int resolve_ref(struct dra_prep *p, const struct pod_claim_ref *ref)
{
    const struct dra_view *v = p->view;
    const char *ns = p->pod->ns ? p->pod->ns : "";
    const char *name = ref->claim_name;
    bool generated = false;
    if (!name && ref->template_name) {
        name = status_claim_name(p->pod, ref->name);
        generated = true;
    }
    if (!name && !ref->template_name)
        return K_OK; /* neither set: nothing to allocate (invalid pod) */
    const struct dra_claim *claim = name && v->claim ? v->claim(v->ctx, ns, name) : NULL;
    if (name && !claim && !generated) {
        p->gpu = true; /* cannot be inspected */
        note_problem(p, ref, name, PROBLEM_MISSING);
        return K_OK;
    }
    if (claim) {
        if (claim->deleting) {
            spec_gpu(p, &claim->spec);
            note_problem(p, ref, name, PROBLEM_DELETING);
            return K_OK;
        }
        if (generated && claim->owner_pod_uid && p->pod->uid &&
            strcmp(claim->owner_pod_uid, p->pod->uid) != 0) {
            spec_gpu(p, &claim->spec);
            note_problem(p, ref, name, PROBLEM_NOT_OWNER);
            return K_OK;
        }
        if (p->n_own < DRA_MAX_POD_CLAIMS)
            p->own[p->n_own++] = claim;
        if (claim->allocated) {
            spec_gpu(p, &claim->spec);
            if (p->n_allocated < DRA_MAX_POD_CLAIMS)
                p->allocated[p->n_allocated++] = claim;
            return K_OK;
        }
        return add_spec(p, claim->name, false, &claim->spec);
    }
    /* a template whose claim is not created yet */
    const struct dra_template *t =
        v->claim_template ? v->claim_template(v->ctx, ns, ref->template_name) : NULL;
    if (!t) {
        p->gpu = true;
        if (!p->tmpl_missing)
            p->tmpl_missing = ref;
        return K_OK;
    }
    return add_spec(p, t->name, true, &t->spec);
}

/* Whether a DeviceClass serves one of the pod's extended resources (most pods: none). */
static bool ext_served(const struct kpod *pod, const struct dra_view *view)
{
    if (!pod_has_ext_requests(pod) || !view->extended_class)
        return false;
    for (size_t i = 0; i < pod->ext->n_requests; i++)
        if ((i == 0 ||
             strcmp(pod->ext->requests[i].resource, pod->ext->requests[i - 1].resource)) &&
            view->extended_class(view->ctx, pod->ext->requests[i].resource))
            return true;
    return false;
}

/* The requests kube-scheduler builds for the pod's extended resources served by DRA, as
 * requests of their own (dra_ext.h). */
static int add_ext(struct dra_prep *p)
{
    if (!pod_has_ext_requests(p->pod) || !p->view->extended_class)
        return K_OK;
    size_t max = p->pod->ext->n_requests;
    p->ext = calloc(max, sizeof(*p->ext));
    p->ext_requests = calloc(max, sizeof(*p->ext_requests));
    if (!p->ext || !p->ext_requests)
        return K_ENOMEM;
    p->n_ext = dra_ext_build(p->pod, p->view, p->ext, max);
    if (p->n_ext == 0)
        return K_OK;
    struct req *reqs = realloc(p->reqs, (p->n_reqs + p->n_ext) * sizeof(*reqs));
    if (!reqs)
        return K_ENOMEM;
    p->reqs = reqs;
    for (size_t i = 0; i < p->n_ext; i++) {
        struct dra_ext_req *x = &p->ext[i];
        struct dra_request *r = &p->ext_requests[i];
        r->name = x->name;
        r->has_exactly = true;
        r->exactly.class_name = x->cls->name;
        r->exactly.mode = DRA_MODE_EXACT_COUNT;
        r->exactly.count = x->count;
        if (dra_exact_is_gpu(p->view, &r->exactly, x->cls))
            p->gpu = true;
        struct req *q = &p->reqs[p->n_reqs++];
        memset(q, 0, sizeof(*q));
        q->claim = x->resource;
        q->ext_resource = x->resource;
        q->spec = &p->ext_spec;
        q->r = r;
        q->alts[0] = (struct alt){.e = &r->exactly, .cls = x->cls};
        q->n_alts = 1;
        int rc = alt_compile(p, &q->alts[0]);
        if (rc != K_OK)
            return rc;
    }
    return K_OK;
}

/* Whether request q applies on the node: a request for an extended resource only where the
 * node's allocatable lacks it (extendeddynamicresources.go filterExtendedResources). */
static bool req_applies(const struct req *q, const struct knode *node)
{
    return !q->ext_resource || resource_list_get(&node->allocatable, q->ext_resource) <= 0;
}

/* The budget the prep charges (dra_view.cel_budget, classify.h DRA_CEL_MAX_STEPS). */
static void budget_setup(struct dra_prep *p)
{
    cel_budget_init(&p->own_budget, DRA_CEL_MAX_STEPS);
    p->budget = p->view->cel_budget ? p->view->cel_budget : &p->own_budget;
    cel_budget_init(&p->describe_budget, DRA_CEL_MAX_STEPS);
    p->describe = &p->describe_budget;
}

int dra_prep_new(const struct kpod *pod, const struct dra_view *view, struct dra_prep **out)
{
    *out = NULL;
    if (!view || (pod->n_claims == 0 && !ext_served(pod, view)))
        return K_OK;
    struct dra_prep *p = calloc(1, sizeof(*p));
    if (!p)
        return K_ENOMEM;
    p->pod = pod;
    p->view = view;
    p->class_missing = SIZE_MAX;
    budget_setup(p);
    p->slice_buf = calloc(DRA_MAX_NODE_SLICES, sizeof(*p->slice_buf));
    p->counters = malloc(sizeof(*p->counters));
    if (!p->slice_buf || !p->counters) {
        free(p->slice_buf);
        free(p->counters);
        free(p);
        return K_ENOMEM;
    }
    for (size_t i = 0; i < pod->n_claims && i < DRA_MAX_POD_CLAIMS; i++) {
        int rc = resolve_ref(p, &pod->claims[i]);
        if (rc != K_OK) {
            dra_prep_free(p);
            return rc;
        }
    }
    int rc = add_ext(p);
    if (rc != K_OK) {
        dra_prep_free(p);
        return rc;
    }
    *out = p;
    return K_OK;
}

void dra_prep_free(struct dra_prep *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_progs; i++)
        cel_program_free(p->progs[i].prog);
    free(p->progs);
    free(p->idx);
    free(p->reqs);
    free(p->ext);
    free(p->ext_requests);
    free(p->slice_buf);
    free(p->counters);
    free(p);
}

bool dra_prep_serves(const struct dra_prep *p, const char *resource)
{
    for (size_t i = 0; p && i < p->n_ext; i++)
        if (strcmp(p->ext[i].resource, resource) == 0)
            return true;
    return false;
}

bool dra_prep_ext(const struct dra_prep *p)
{
    return p && p->n_ext > 0;
}

bool dra_prep_gpu(const struct dra_prep *p)
{
    return p && p->gpu;
}

const struct dra_claim *const *dra_prep_allocated(const struct dra_prep *p, size_t *n)
{
    *n = p ? p->n_allocated : 0;
    return p ? p->allocated : NULL;
}

enum cause dra_prep_pod_cause(const struct dra_prep *p, struct line *l)
{
    if (!p)
        return CAUSE_GPU_FITS;
    const char *ns = p->pod->ns ? p->pod->ns : "";
    if (p->tmpl_missing) {
        line_printf(l,
                    "pod claim %s: resourceClaimTemplateName %s names no ResourceClaimTemplate in "
                    "namespace %s; the claim cannot be created, so the pod is never scheduled "
                    "(no PodScheduled condition, Event FailedResourceClaimCreation)",
                    p->tmpl_missing->name, p->tmpl_missing->template_name, ns);
        return CAUSE_DRA_TEMPLATE_MISSING;
    }
    if (p->problem != PROBLEM_NONE) {
        switch (p->problem) {
        case PROBLEM_DELETING:
            line_printf(l, "pod claim %s: ResourceClaim %s/%s is being deleted", p->claim_ref->name,
                        ns, p->claim_name);
            break;
        case PROBLEM_NOT_OWNER:
            line_printf(l,
                        "pod claim %s: ResourceClaim %s/%s was not created for this pod (another "
                        "pod owns it)",
                        p->claim_ref->name, ns, p->claim_name);
            break;
        default:
            line_printf(l,
                        "pod claim %s: resourceClaimName %s names no ResourceClaim in namespace %s",
                        p->claim_ref->name, p->claim_name, ns);
            break;
        }
        return CAUSE_DRA_CLAIM_MISSING;
    }
    if (p->class_missing != SIZE_MAX) {
        const struct req *q = &p->reqs[p->class_missing];
        if (q->n_alts == 1) {
            line_printf(l, "%s %s request %s: DeviceClass %s does not exist",
                        q->from_template ? "claim template" : "claim", q->claim, q->r->name,
                        q->alts[0].e->class_name ? q->alts[0].e->class_name : "");
        } else {
            line_printf(l, "%s %s request %s: none of the firstAvailable DeviceClasses exists (",
                        q->from_template ? "claim template" : "claim", q->claim, q->r->name);
            for (size_t i = 0; i < q->n_alts; i++)
                line_printf(l, "%s%s", i ? ", " : "",
                            q->alts[i].e->class_name ? q->alts[i].e->class_name : "");
            line_printf(l, ")");
        }
        return CAUSE_DRA_CLASS_MISSING;
    }
    return CAUSE_GPU_FITS;
}

bool dra_prep_node_allowed(const struct dra_prep *p, const struct knode *node)
{
    for (size_t i = 0; p && i < p->n_allocated; i++)
        if (p->allocated[i]->alloc_nodes.present &&
            !node_affinity_matches(&p->allocated[i]->alloc_nodes, node))
            return false;
    return true;
}

void dra_prep_put_narrowing(const struct dra_prep *p, struct line *l)
{
    size_t k = 0;
    for (size_t i = 0; p && i < p->n_allocated; i++) {
        if (!p->allocated[i]->alloc_nodes.present)
            continue;
        line_printf(
            l, "%sResourceClaim %s is already allocated and its status.allocation.nodeSelector",
            k ? "; " : "", p->allocated[i]->name);
        line_printf(l, " limits the pod to the nodes it selects");
        k++;
    }
}

/* ---- devices ------------------------------------------------------------------------------ */

struct dev_ctx {
    const struct dra_device *d;
};

static bool qname_is(const char *q, const char *domain, size_t dlen, const char *name, size_t nlen)
{
    size_t ql = strlen(q);
    if (name)
        return ql == dlen + 1 + nlen && memcmp(q, domain, dlen) == 0 && q[dlen] == '/' &&
               memcmp(q + dlen + 1, name, nlen) == 0;
    return ql > dlen && memcmp(q, domain, dlen) == 0 && q[dlen] == '/';
}

static enum cel_lookup dev_attr(const void *ctx, const char *domain, size_t dlen, const char *name,
                                size_t nlen, struct cel_attr_value *out)
{
    const struct dra_device *d = ((const struct dev_ctx *)ctx)->d;
    for (size_t i = 0; i < d->n_attrs; i++) {
        const struct dra_attribute *a = &d->attrs[i];
        if (!qname_is(a->name, domain, dlen, name, nlen))
            continue;
        if (!name)
            return CEL_LOOKUP_FOUND;
        memset(out, 0, sizeof(*out));
        switch (a->kind) {
        case DRA_ATTR_BOOL:
            out->kind = CEL_ATTR_BOOL;
            out->b = a->b;
            return CEL_LOOKUP_FOUND;
        case DRA_ATTR_INT:
            out->kind = CEL_ATTR_INT;
            out->i = a->i;
            return CEL_LOOKUP_FOUND;
        case DRA_ATTR_STRING:
        case DRA_ATTR_VERSION:
            out->kind = a->kind == DRA_ATTR_STRING ? CEL_ATTR_STRING : CEL_ATTR_VERSION;
            out->s = a->s ? a->s : "";
            out->len = strlen(out->s);
            return CEL_LOOKUP_FOUND;
        case DRA_ATTR_OTHER:
        default:
            return CEL_LOOKUP_UNKNOWN;
        }
    }
    return CEL_LOOKUP_MISSING;
}

static enum cel_lookup dev_cap(const void *ctx, const char *domain, size_t dlen, const char *name,
                               size_t nlen, int64_t *milli)
{
    const struct dra_device *d = ((const struct dev_ctx *)ctx)->d;
    for (size_t i = 0; i < d->n_caps; i++) {
        const struct dra_capacity *c = &d->caps[i];
        if (!qname_is(c->name, domain, dlen, name, nlen))
            continue;
        if (!name)
            return CEL_LOOKUP_FOUND;
        enum cel_lookup r = cel_quantity_milli(c->value, milli);
        return r == CEL_LOOKUP_MISSING ? CEL_LOOKUP_UNKNOWN : r;
    }
    return CEL_LOOKUP_MISSING;
}

/* The selectors of an alternative on one device, in order, stopping at the first false or
 * error (allocator_stable.go selectorsMatch). *which: the deciding (or uncertain) program. */
static enum cel_result alt_eval(const struct dra_prep *p, const struct alt *a, const char *driver,
                                const struct dra_device *d, const struct prog **which)
{
    *which = NULL;
    if (a->progs_missing)
        return CEL_UNKNOWN;
    struct dev_ctx ctx = {.d = d};
    struct cel_device dev = {.driver = driver,
                             .driver_len = strlen(driver),
                             .ctx = &ctx,
                             .attribute = dev_attr,
                             .capacity = dev_cap};
    enum cel_result res = CEL_TRUE;
    for (size_t i = 0; i < a->n_prog; i++) {
        const struct prog *g = &p->progs[p->idx[a->first_prog + i]];
        enum cel_result r =
            g->prog ? cel_eval_budget(g->prog, &dev, p->budget, NULL, 0) : CEL_UNKNOWN;
        if (r == CEL_FALSE || r == CEL_ERROR) {
            /* after an uncertain selector, upstream may have stopped there with an error:
               either way the device is not allocated */
            *which = g;
            return r;
        }
        if (r == CEL_UNKNOWN && res == CEL_TRUE) {
            res = CEL_UNKNOWN;
            *which = g;
        }
    }
    return res;
}

static bool slice_reaches(const struct dra_slice *s, const struct knode *node)
{
    if (s->per_device_nodes)
        return false;
    if (s->node_name)
        return node->name && strcmp(s->node_name, node->name) == 0;
    if (s->all_nodes)
        return true;
    if (s->nodes.present)
        return node_affinity_matches(&s->nodes, node);
    return false;
}

static bool same_pool(const struct dra_slice *a, const struct dra_slice *b)
{
    return strcmp(a->driver, b->driver) == 0 && strcmp(a->pool, b->pool) == 0;
}

/* One alternative on one node. */
struct alt_out {
    enum cause step;
    size_t devices, matching, free_match, held_match, free_driver, uncertain_free, uncertain_held;
    bool error_free;     /* a selector fails with a runtime error on a free device */
    bool all_incomplete; /* allocationMode All and a pool is incomplete */
    bool uncertain;      /* the step depends on an uncertain selector */
    bool too_costly;     /* devices left undecided because the CEL budget was spent */
    const struct prog *uncertain_prog, *error_prog, *false_prog;
    const struct dra_slice *old_slice;        /* a slice skipped for an older generation */
    const struct dra_slice *incomplete_slice; /* a slice of an incomplete pool */
    int64_t incomplete_have;
    const struct dra_claim *holders[DRA_MAX_HOLDERS];
    size_t n_holders;
    const char *driver;
    const char *constraint; /* set by dra_node: the matchAttribute no device set satisfies */
    /* shared counters and consumable capacity (dra_share.h) */
    size_t shareable_free;             /* free matching devices that allow multiple allocations */
    const struct dra_device *held_dev; /* the first matching device held by counters/capacity */
    struct dra_fit_why held_why;
    const struct dra_device *never_dev; /* the first the request's capacity never fits */
    struct dra_fit_why never_why;
    bool share_unknown; /* a counter or capacity quantity could not be compared */
    /* device taints (dra_taints.h): matching devices with a taint the request does not
       tolerate, free (not in free_match) and held, and the first such free one (else held) */
    size_t tainted_free, tainted_held;
    size_t uncertain_tainted; /* free, tainted, the selectors undecided (ExactCount) */
    const struct dra_slice *taint_slice;
    const struct dra_device *taint_dev;
    const struct dra_taint *taint;
    const struct dra_taint_rule *taint_rule;
    bool taint_free;
};

/* Remember the first tainted device, a free one before a held one. */
static void note_taint(struct alt_out *o, const struct dra_slice *s, const struct dra_device *d,
                       const struct dra_taint *t, const struct dra_taint_rule *rule, bool free_)
{
    if (o->taint && (o->taint_free || !free_))
        return;
    o->taint_slice = s;
    o->taint_dev = d;
    o->taint = t;
    o->taint_rule = rule;
    o->taint_free = free_;
}

/* A matchAttribute filter: only devices whose attribute equals the value count. */
struct attr_filter {
    const char *name;
    const struct dra_attribute *value;
};

static bool attr_equal(const struct dra_attribute *a, const struct dra_attribute *b)
{
    if (!a || !b || a->kind != b->kind)
        return false;
    switch (a->kind) {
    case DRA_ATTR_BOOL:
        return a->b == b->b;
    case DRA_ATTR_INT:
        return a->i == b->i;
    case DRA_ATTR_STRING:
    case DRA_ATTR_VERSION:
        return a->s && b->s && strcmp(a->s, b->s) == 0;
    default:
        return false;
    }
}

/* The slice at slices[i] is one the allocator uses for the node: of `driver` (any when NULL),
 * reaching the node, of its pool's newest generation there (*older otherwise); *same_gen: the
 * slices of its pool and generation reaching the node (pools_stable.go GatherPools). */
static bool slice_used(const struct dra_slice *const *slices, size_t n, size_t i,
                       const char *driver, const struct knode *node, bool *older, int64_t *same_gen)
{
    const struct dra_slice *s = slices[i];
    *older = false;
    *same_gen = 0;
    if (!s || !s->driver || !s->pool || (driver && strcmp(s->driver, driver) != 0) ||
        !slice_reaches(s, node))
        return false;
    for (size_t j = 0; j < n && !*older; j++) {
        const struct dra_slice *t = slices[j];
        if (!t || !t->driver || !t->pool || !same_pool(s, t) || !slice_reaches(t, node))
            continue;
        if (t->generation > s->generation)
            *older = true;
        else if (t->generation == s->generation)
            (*same_gen)++;
    }
    return !*older;
}

/* The claims other than the pod's own holding shares of device d (at most `cap`); *all: how
 * many there are in all, the pod's own included. */
static size_t other_shares(const struct dra_prep *p, const struct dra_slice *s,
                           const struct dra_device *d, const struct dra_claim **buf, size_t cap,
                           size_t *all)
{
    const struct dra_view *v = p->view;
    *all = 0;
    if (!v->device_shares)
        return 0;
    *all = v->device_shares(v->ctx, s->driver, s->pool, d->name, buf, cap);
    size_t n = *all < cap ? *all : cap, k = 0;
    for (size_t i = 0; i < n; i++)
        if (buf[i] && !is_own(p, buf[i]))
            buf[k++] = buf[i];
    return k;
}

/* The counters of the pools reaching the node, less what their allocated devices consume
 * (allocator_incubating.go checkAvailableCounters; dra_share.h). */
static void share_prepare(const struct dra_prep *p, const struct dra_slice *const *slices, size_t n,
                          const char *driver, const struct knode *node, struct dra_counters *ctr)
{
    const struct dra_view *v = p->view;
    dra_counters_reset(ctr);
    bool older;
    int64_t same_gen;
    for (size_t i = 0; i < n; i++)
        if (slices[i] && slices[i]->n_counter_sets &&
            slice_used(slices, n, i, driver, node, &older, &same_gen))
            dra_counters_add_sets(ctr, slices[i]);
    if (ctr->n == 0 && !ctr->overflow)
        return;
    for (size_t i = 0; i < n; i++) {
        const struct dra_slice *s = slices[i];
        if (!s || !slice_used(slices, n, i, driver, node, &older, &same_gen))
            continue;
        for (size_t k = 0; k < s->n_devices; k++) {
            const struct dra_device *d = &s->devices[k];
            if (d->n_consumes == 0)
                continue;
            const struct dra_claim *by =
                v->device_holder ? v->device_holder(v->ctx, s->driver, s->pool, d->name) : NULL;
            if (by && is_own(p, by))
                by = NULL;
            const struct dra_claim *sh[DRA_SHARE_MAX_HOLDERS];
            size_t all, n_sh = by ? 0 : other_shares(p, s, d, sh, DRA_SHARE_MAX_HOLDERS, &all);
            if (!by && n_sh == 0)
                continue;
            /* the work is charged to the CEL budget: past it the counters are undecided */
            if (!cel_budget_charge(p->budget, 1 + ctr->n)) {
                ctr->incomplete = true;
                return;
            }
            dra_counters_charge(ctr, s, d, by ? by : sh[0]);
        }
    }
}

/* Counters and capacity on a device free of dedicated holders (dra_share.h): a device they
 * hold becomes held (*free_ false, the claims in more[]), one the request's capacity never fits
 * stops matching, an undecided one becomes uncertain. */
static void share_check(const struct dra_prep *p, const struct alt *a, const struct dra_slice *s,
                        const struct dra_device *d, const struct dra_counters *ctr,
                        struct alt_out *o, enum cel_result *r, bool *free_,
                        const struct dra_claim **more, size_t *n_more)
{
    if (d->n_consumes == 0 && d->n_caps == 0 && a->e->n_capacity == 0)
        return;
    const struct dra_claim *sh[DRA_MAX_SHARES];
    size_t all = 0, n_sh = other_shares(p, s, d, sh, DRA_MAX_SHARES, &all);
    /* the work (counters of the node, capacities times shares) is charged to the CEL budget: a
       device it no longer pays for is undecided, like one whose selectors were not evaluated */
    if (!cel_budget_charge(p->budget, 1 + (d->n_consumes ? ctr->n : 0) + d->n_caps * (1 + n_sh))) {
        if (*r == CEL_TRUE)
            *r = CEL_UNKNOWN;
        return;
    }
    struct dra_fit_why why;
    enum dra_fit f = dra_share_fit(ctr, s, d, a->e, sh, all > DRA_MAX_SHARES ? all : n_sh, &why);
    switch (f) {
    case DRA_FIT_HELD:
        *free_ = false;
        for (size_t h = 0; h < why.n_holders && h < DRA_SHARE_MAX_HOLDERS; h++)
            more[(*n_more)++] = why.holders[h];
        if (!o->held_dev && (*r == CEL_TRUE || *r == CEL_UNKNOWN)) {
            o->held_dev = d;
            o->held_why = why;
        }
        break;
    case DRA_FIT_NEVER:
        if (*r == CEL_TRUE || *r == CEL_UNKNOWN) {
            *r = CEL_FALSE;
            if (!o->never_dev) {
                o->never_dev = d;
                o->never_why = why;
            }
        }
        break;
    case DRA_FIT_UNKNOWN:
        if (*r == CEL_TRUE) {
            *r = CEL_UNKNOWN;
            o->share_unknown = true;
        }
        break;
    case DRA_FIT:
    default:
        break;
    }
}

static void add_holder(struct alt_out *o, const struct dra_claim *c)
{
    bool seen = !c;
    for (size_t h = 0; h < o->n_holders; h++)
        seen = seen || o->holders[h] == c;
    if (!seen && o->n_holders < DRA_MAX_HOLDERS)
        o->holders[o->n_holders++] = c;
}

/* Per device: r its selectors' result; free_ whether no other claim holds it; tainted whether
 * it carries a taint the request does not tolerate (dra_taints.h: then it is never taken). */
typedef void (*device_fn)(void *ctx, const struct dra_slice *s, const struct dra_device *d,
                          enum cel_result r, bool free_, bool tainted);

static void alt_node(const struct dra_prep *p, const struct alt *a, const struct knode *node,
                     const struct attr_filter *filter, device_fn fn, void *fn_ctx,
                     struct alt_out *o)
{
    memset(o, 0, sizeof(*o));
    const struct dra_view *v = p->view;
    const char *driver = a->cls ? a->cls->driver : NULL;
    o->driver = driver;
    const struct dra_slice **slices = p->slice_buf;
    size_t n = v->node_slices && node->name
                   ? v->node_slices(v->ctx, node->name, driver, slices, DRA_MAX_NODE_SLICES)
                   : 0;
    if (n > DRA_MAX_NODE_SLICES)
        n = DRA_MAX_NODE_SLICES;
    struct dra_counters *ctr = p->counters;
    share_prepare(p, slices, n, driver, node, ctr);
    for (size_t i = 0; i < n; i++) {
        const struct dra_slice *s = slices[i];
        int64_t same_gen = 0;
        bool older = false;
        if (!slice_used(slices, n, i, driver, node, &older, &same_gen)) {
            if (older)
                o->old_slice = s;
            continue;
        }
        if (same_gen != s->slice_count) {
            o->incomplete_slice = s;
            o->incomplete_have = same_gen;
            if (a->e->mode == DRA_MODE_ALL)
                o->all_incomplete = true;
        }
        for (size_t k = 0; k < s->n_devices; k++) {
            const struct dra_device *d = &s->devices[k];
            if (filter) {
                const struct dra_attribute *fa = dra_device_attribute(d, filter->name);
                if (!attr_equal(fa, filter->value))
                    continue;
            }
            o->devices++;
            const struct dra_claim *holder =
                v->device_holder ? v->device_holder(v->ctx, s->driver, s->pool, d->name) : NULL;
            if (holder && (is_own(p, holder) || a->e->admin_access))
                holder = NULL; /* admin access may use an allocated device (allocator_stable.go
                                  allocateDevice: "Device in use" only without adminAccess) */
            bool free_ = holder == NULL;
            const struct prog *which;
            enum cel_result r = alt_eval(p, a, s->driver, d, &which);
            const struct dra_claim *more[DRA_SHARE_MAX_HOLDERS];
            size_t n_more = 0;
            if (free_ && !a->e->admin_access)
                share_check(p, a, s, d, ctr, o, &r, &free_, more, &n_more);
            if (free_)
                o->free_driver++;
            /* taints matter only for a device the selectors may take */
            const struct dra_taint_rule *rule = NULL;
            const struct dra_taint *taint =
                r == CEL_TRUE || r == CEL_UNKNOWN
                    ? dra_device_blocking_taint(v, a->e, s->driver, s->pool, d, &rule)
                    : NULL;
            if (fn)
                fn(fn_ctx, s, d, r, free_, taint != NULL);
            switch (r) {
            case CEL_TRUE:
                o->matching++;
                if (taint) {
                    if (free_)
                        o->tainted_free++;
                    else
                        o->tainted_held++;
                    note_taint(o, s, d, taint, rule, free_);
                }
                if (free_ && !taint) {
                    o->free_match++;
                    o->shareable_free += d->allow_multiple;
                } else if (!free_) {
                    o->held_match++;
                    add_holder(o, holder);
                    for (size_t h = 0; h < n_more; h++)
                        add_holder(o, more[h]);
                }
                break;
            case CEL_UNKNOWN:
                if (free_ && taint && a->e->mode == DRA_MODE_EXACT_COUNT) {
                    o->uncertain_tainted++; /* never allocated, whatever its selectors say */
                    note_taint(o, s, d, taint, rule, true);
                } else if (free_)
                    o->uncertain_free++;
                else
                    o->uncertain_held++;
                /* a spent budget stays spent: every undecided device since is for want of it */
                if (p->budget->exhausted)
                    o->too_costly = true;
                if (!o->uncertain_prog)
                    o->uncertain_prog = which;
                break;
            case CEL_ERROR:
                if (free_)
                    o->error_free = true;
                if (!o->error_prog)
                    o->error_prog = which;
                break;
            case CEL_FALSE:
            default:
                if (!o->false_prog)
                    o->false_prog = which;
                break;
            }
        }
    }

    /* the step (classify.h) */
    if (o->devices == 0) {
        o->step = CAUSE_DRA_NO_DRIVER;
        return;
    }
    if (a->e->mode == DRA_MODE_ALL) {
        if (o->all_incomplete)
            o->step = CAUSE_DRA_NO_DRIVER;
        else if (o->tainted_free + o->tainted_held > 0)
            o->step = CAUSE_DRA_TAINTED; /* every matching device is taken, tainted ones too */
        else if (o->held_match > 0)
            o->step = CAUSE_DRA_EXHAUSTED;
        else if (o->uncertain_free + o->uncertain_held > 0)
            o->step = CAUSE_GPU_FITS, o->uncertain = true;
        else if (o->error_free || o->free_match == 0)
            o->step = CAUSE_DRA_NO_MATCH;
        else
            o->step = CAUSE_GPU_FITS;
        return;
    }
    size_t k = (size_t)(a->e->count > DRA_MAX_ALL_COUNT ? DRA_MAX_ALL_COUNT + 1 : a->e->count);
    if (o->free_match >= k) {
        o->step = CAUSE_GPU_FITS;
        return;
    }
    if (o->free_match + o->uncertain_free >= k && !o->error_free) {
        o->step = CAUSE_GPU_FITS;
        o->uncertain = true;
        return;
    }
    if (o->error_free && o->free_match + o->uncertain_free >= k) {
        o->step = CAUSE_DRA_NO_MATCH;
        return;
    }
    size_t tainted = o->tainted_free + o->uncertain_tainted;
    if (tainted > 0 && o->free_match + o->uncertain_free + tainted >= k) {
        /* enough free devices: the taints keep the request off (devices whose selectors are
           undecided count as matching, the closest outcome, as above) */
        o->step = CAUSE_DRA_TAINTED;
        o->uncertain = o->uncertain_tainted + o->uncertain_free + o->uncertain_held > 0;
        return;
    }
    if (o->matching > 0 || (o->uncertain_held > 0 && o->free_driver < k))
        o->step = CAUSE_DRA_EXHAUSTED;
    else
        o->step = CAUSE_DRA_NO_MATCH;
    /* too few either way, but undecided devices leave the numbers (and so whether the step is
       no-match or exhausted, and whether waiting helps) uncertain */
    o->uncertain = o->uncertain_held + o->uncertain_free > 0;
}

/* The outcome of one request: the first alternative that fits, else the closest. */
static size_t req_node(const struct dra_prep *p, const struct req *q, const struct knode *node,
                       struct alt_out *o)
{
    size_t best = SIZE_MAX;
    struct alt_out cur;
    for (size_t i = 0; i < q->n_alts; i++) {
        if (!q->alts[i].cls)
            continue;
        alt_node(p, &q->alts[i], node, NULL, NULL, NULL, &cur);
        if (best == SIZE_MAX || cause_rank(cur.step) > cause_rank(o->step)) {
            *o = cur;
            best = i;
        }
        if (cur.step == CAUSE_GPU_FITS)
            break;
    }
    if (best == SIZE_MAX) {
        memset(o, 0, sizeof(*o));
        o->step = CAUSE_GPU_FITS; /* class missing: reported before the nodes */
    }
    return best;
}

static bool req_in_constraint(const struct dra_constraint *c, const struct req *q)
{
    if (c->n_requests == 0)
        return true;
    size_t nl = strlen(q->r->name);
    for (size_t i = 0; i < c->n_requests; i++) {
        const char *r = c->requests[i];
        if (strncmp(r, q->r->name, nl) == 0 && (r[nl] == '\0' || r[nl] == '/'))
            return true;
    }
    return false;
}

/* Free matching devices, as a set of pointers (a matchAttribute group). */
struct devset {
    const struct dra_device *d[DRA_MAX_DEVICES_PER_SLICE * 4];
    size_t n;
    bool overflow;
};

static void devset_add(void *ctx, const struct dra_slice *s, const struct dra_device *d,
                       enum cel_result r, bool free_, bool tainted)
{
    (void)s;
    struct devset *set = ctx;
    if (r != CEL_TRUE || !free_ || tainted)
        return;
    for (size_t i = 0; i < set->n; i++)
        if (set->d[i] == d)
            return;
    if (set->n < sizeof(set->d) / sizeof(set->d[0]))
        set->d[set->n++] = d;
    else
        set->overflow = true;
}

struct collect {
    const char *attr;
    const struct dra_attribute *values[DRA_MAX_CONSTRAINT_VALUES];
    size_t n;
};

static void collect_value(void *ctx, const struct dra_slice *s, const struct dra_device *d,
                          enum cel_result r, bool free_, bool tainted)
{
    (void)s;
    struct collect *c = ctx;
    if (r != CEL_TRUE || !free_ || tainted)
        return;
    const struct dra_attribute *a = dra_device_attribute(d, c->attr);
    if (!a)
        return;
    for (size_t i = 0; i < c->n; i++)
        if (attr_equal(c->values[i], a))
            return;
    if (c->n < DRA_MAX_CONSTRAINT_VALUES)
        c->values[c->n++] = a;
}

/* Whether the requests of one matchAttribute constraint find devices sharing one value. */
static bool constraint_ok(const struct dra_prep *p, const struct dra_constraint *c,
                          const struct knode *node, const size_t *chosen, size_t first)
{
    struct collect col = {.attr = c->match_attribute};
    struct alt_out o;
    alt_node(p, &p->reqs[first].alts[chosen[first]], node, NULL, collect_value, &col, &o);
    struct devset *set = malloc(sizeof(*set));
    if (!set)
        return true; /* not certain: do not fail the node */
    bool ok = false;
    for (size_t v = 0; v < col.n && !ok; v++) {
        struct attr_filter f = {.name = c->match_attribute, .value = col.values[v]};
        bool all = true;
        int64_t wanted = 0;
        set->n = 0;
        set->overflow = false;
        for (size_t i = 0; i < p->n_reqs && all; i++) {
            const struct req *q = &p->reqs[i];
            if (q->spec != p->reqs[first].spec || !req_in_constraint(c, q) || chosen[i] == SIZE_MAX)
                continue;
            const struct alt *a = &q->alts[chosen[i]];
            alt_node(p, a, node, &f, devset_add, set, &o);
            if (o.step != CAUSE_GPU_FITS)
                all = false;
            wanted = int64_add_sat(wanted, a->e->mode == DRA_MODE_ALL ? (int64_t)o.free_match
                                                                      : a->e->count);
            if (a->e->mode == DRA_MODE_ALL) {
                /* All: every matching device must carry the value */
                struct alt_out unfiltered;
                alt_node(p, a, node, NULL, NULL, NULL, &unfiltered);
                if (unfiltered.matching != o.matching)
                    all = false;
            }
        }
        /* together the requests need distinct devices carrying the value */
        if (all && !set->overflow && wanted > (int64_t)set->n)
            all = false;
        ok = all;
    }
    free(set);
    return ok;
}

static void put_holders(struct line *l, const struct alt_out *o)
{
    for (size_t h = 0; h < o->n_holders; h++) {
        const struct dra_claim *c = o->holders[h];
        line_printf(l, "%sclaim %s/%s", h ? ", " : "; held by ", c->ns ? c->ns : "",
                    c->name ? c->name : "");
        if (c->extended && c->owner_pod_name) {
            line_printf(l, " (extended resources of pod %s)", c->owner_pod_name);
            continue;
        }
        size_t k = 0;
        for (size_t i = 0; i < c->n_reserved_for && k < 2; i++) {
            const struct dra_consumer *u = &c->reserved_for[i];
            if (!u->name || (u->resource && strcmp(u->resource, "pods") != 0))
                continue;
            line_printf(l, "%s%s", k ? ", " : " (pod ", u->name);
            k++;
        }
        if (k)
            line_printf(l, ")");
    }
    if (o->held_match > 0 && o->n_holders == DRA_MAX_HOLDERS)
        line_printf(l, ", ...");
}

/* Why a matching device is not free although no claim allocated it whole (dra_share.h). */
static void put_share_held(struct line *l, const struct alt_out *o)
{
    const struct dra_fit_why *w = &o->held_why;
    char a[32], b[32], c[32];
    if (w->counter) {
        line_printf(l,
                    "; %s is free but counter set %s (pool %s) has %s of %s left and it needs %s "
                    "(a whole device and its partitions draw on one counter set)",
                    o->held_dev->name, w->counter->set, w->counter->pool,
                    dra_milli_str(w->counter->left < 0 ? 0 : w->counter->left, a, sizeof(a)),
                    w->counter->counter, dra_milli_str(w->need, b, sizeof(b)));
        if (w->counter->n_holders == 0)
            line_printf(l, "; the counter set is smaller than what the device consumes");
    } else if (w->capacity) {
        int64_t left = w->cap_total - w->cap_used;
        line_printf(l, "; shared device %s has %s of %s %s left and the request takes %s",
                    o->held_dev->name, dra_milli_str(left < 0 ? 0 : left, a, sizeof(a)),
                    dra_milli_str(w->cap_total, b, sizeof(b)), w->capacity,
                    dra_milli_str(w->cap_need, c, sizeof(c)));
    }
}

/* Why the request's capacity can never be had from a device (dra_share.h). */
static void put_share_never(struct line *l, const struct alt_out *o)
{
    const struct dra_fit_why *w = &o->never_why;
    char a[32], b[32];
    if (w->missing)
        line_printf(l, "; the request asks capacity %s, which device %s does not have", w->missing,
                    o->never_dev->name);
    else if (w->policy)
        line_printf(l, "; the request's %s %s is not allowed by the requestPolicy of device %s",
                    w->capacity, dra_milli_str(w->cap_need, a, sizeof(a)), o->never_dev->name);
    else
        line_printf(l, "; the request takes %s of %s, device %s has %s",
                    dra_milli_str(w->cap_need, a, sizeof(a)), w->capacity, o->never_dev->name,
                    dra_milli_str(w->cap_total, b, sizeof(b)));
}

/* Distinct values of the string attributes the failing selector mentions. */
struct hint {
    const char *src;
    const char *seen[4];
    const char *names[4];
    size_t n;
};

static void collect_hint(void *ctx, const struct dra_slice *s, const struct dra_device *d,
                         enum cel_result r, bool free_, bool tainted)
{
    (void)s;
    (void)free_;
    (void)tainted;
    struct hint *h = ctx;
    if (r == CEL_TRUE || !h->src)
        return;
    for (size_t i = 0; i < d->n_attrs && h->n < 4; i++) {
        const struct dra_attribute *a = &d->attrs[i];
        if (a->kind != DRA_ATTR_STRING && a->kind != DRA_ATTR_VERSION)
            continue;
        const char *shortname = strrchr(a->name, '/');
        shortname = shortname ? shortname + 1 : a->name;
        if (!*shortname || !strstr(h->src, shortname) || !a->s)
            continue;
        bool dup = false;
        for (size_t j = 0; j < h->n; j++)
            dup = dup || (strcmp(h->seen[j], a->s) == 0 && strcmp(h->names[j], shortname) == 0);
        if (!dup) {
            h->seen[h->n] = a->s;
            h->names[h->n] = shortname;
            h->n++;
        }
    }
}

static void describe(const struct dra_prep *p, const struct req *q, size_t alt,
                     const struct alt_out *o, const struct knode *node, struct line *l)
{
    const char *name = node->name ? node->name : "(unnamed)";
    const struct alt *a = alt == SIZE_MAX ? NULL : &q->alts[alt];
    const char *cls = a && a->e->class_name ? a->e->class_name : "";
    const char *drv = o->driver ? o->driver : "(any driver)";
    if (q->ext_resource) {
        line_printf(l, "%s is served by DeviceClass %s (request %s", q->ext_resource, cls,
                    q->r->name);
    } else {
        line_printf(l, "%s %s request %s", q->from_template ? "claim template" : "claim", q->claim,
                    q->r->name);
        if (a && a->e->name)
            line_printf(l, "/%s", a->e->name);
        line_printf(l, " (class %s", cls);
    }
    if (a && a->e->mode == DRA_MODE_ALL)
        line_printf(l, ", all devices)");
    else if (a)
        line_printf(l, ", %lld device%s)", (long long)a->e->count, a->e->count == 1 ? "" : "s");
    switch (o->step) {
    case CAUSE_DRA_NO_DRIVER:
        if (o->all_incomplete)
            line_printf(l,
                        " on node %s: pool %s of driver %s is incomplete (%lld of %lld "
                        "ResourceSlices); allocationMode All waits until it is complete",
                        name, o->incomplete_slice->pool, drv, (long long)o->incomplete_have,
                        (long long)o->incomplete_slice->slice_count);
        else if (o->driver)
            line_printf(l, ": no ResourceSlice of driver %s reaches node %s", drv, name);
        else
            line_printf(l,
                        ": class %s names no single driver and no device of any driver reaches "
                        "node %s",
                        cls, name);
        break;
    case CAUSE_DRA_NO_MATCH: {
        if (o->constraint) {
            line_printf(l,
                        " on node %s: constraints[].matchAttribute %s: no devices that satisfy "
                        "the selectors of all its requests share one value (%zu of %zu %s "
                        "devices match this request, %zu free)",
                        name, o->constraint, o->matching, o->devices, drv, o->free_match);
            break;
        }
        line_printf(l, ": none of the %zu %s devices on node %s %s the selectors", o->devices, drv,
                    name, o->uncertain ? "is known to satisfy" : "satisfies");
        const struct prog *g = o->error_free ? o->error_prog : o->false_prog;
        if (g) {
            line_printf(l, "; %s `%s`", o->error_free ? "runtime error in" : "asks", g->src);
            if (o->error_free)
                line_printf(l, " (a device lacks what it reads: the scheduler fails the node "
                               "with a CEL runtime error)");
            struct hint h = {.src = g->src};
            struct alt_out tmp;
            alt_node(p, a, node, NULL, collect_hint, &h, &tmp);
            for (size_t i = 0; i < h.n; i++)
                line_printf(l, "%s%s %s", i ? ", " : "; devices here have ", h.names[i], h.seen[i]);
        }
        if (o->never_dev)
            put_share_never(l, o);
        if (o->matching > 0)
            line_printf(l, "; %zu match", o->matching);
        break;
    }
    case CAUSE_DRA_TAINTED:
        if (a && a->e->mode == DRA_MODE_ALL)
            line_printf(l,
                        " on node %s: allocationMode All takes every matching device, and %zu of "
                        "the %zu matching %s devices carry a taint the request does not tolerate",
                        name, o->tainted_free + o->tainted_held, o->matching, drv);
        else if (o->free_match == 0 && o->uncertain_tainted > 0)
            line_printf(l,
                        " on node %s: every free %s device the selectors may match (%zu, %zu of "
                        "them undecided) carries a taint the request does not tolerate",
                        name, drv, o->tainted_free + o->uncertain_tainted, o->uncertain_tainted);
        else if (o->free_match == 0)
            line_printf(l,
                        " on node %s: every free matching %s device (%zu of %zu matching) carries "
                        "a taint the request does not tolerate",
                        name, drv, o->tainted_free, o->matching);
        else
            line_printf(l,
                        " on node %s: %zu of the %zu free matching %s devices carry a taint the "
                        "request does not tolerate, leaving %zu",
                        name, o->tainted_free, o->tainted_free + o->free_match, drv, o->free_match);
        if (o->taint) {
            line_printf(l, "; ");
            dra_put_device_taint(l, o->taint_slice, o->taint_dev, o->taint, o->taint_rule);
        }
        break;
    case CAUSE_DRA_EXHAUSTED:
        line_printf(l, " on node %s: %s devices %zu, matching %zu, free %zu", name, drv, o->devices,
                    o->matching, o->free_match);
        if (o->held_dev)
            put_share_held(l, o);
        put_holders(l, o);
        if (o->tainted_free > 0 && o->taint) {
            line_printf(l, "; %zu more free but with a taint the request does not tolerate: ",
                        o->tainted_free);
            dra_put_device_taint(l, o->taint_slice, o->taint_dev, o->taint, o->taint_rule);
        }
        if (o->uncertain && o->free_driver == 0)
            line_printf(l, "; every device of the driver on the node is allocated");
        else if (!o->uncertain && a && a->e->mode == DRA_MODE_EXACT_COUNT &&
                 (int64_t)o->matching < a->e->count)
            line_printf(l, "; the request asks more devices than match on the node, so waiting "
                           "will not help");
        break;
    case CAUSE_GPU_FITS:
    default:
        if (o->uncertain)
            line_printf(l,
                        " may fit on node %s (%zu matching %s devices free, %zu more free that "
                        "the selectors could not decide)",
                        name, o->free_match, drv, o->uncertain_free);
        else
            line_printf(l, " fits on node %s (%zu of %zu matching %s devices free)", name,
                        o->free_match, o->matching, drv);
        break;
    }
    if (o->too_costly)
        line_printf(l,
                    "; %s (the CEL budget of this classification is spent), so only what is "
                    "certain is reported",
                    CEL_TOO_COSTLY);
    else if (o->uncertain && o->share_unknown && !o->uncertain_prog)
        line_printf(l, "; a counter or capacity quantity could not be compared, so only what is "
                       "certain is reported");
    else if (o->uncertain && (o->uncertain_prog || a->progs_missing))
        line_printf(l, "; could not evaluate `%s`%s%s, so only what is certain is reported",
                    o->uncertain_prog ? o->uncertain_prog->src : "(too many selectors)",
                    o->uncertain_prog && o->uncertain_prog->err[0] ? ": " : "",
                    o->uncertain_prog ? o->uncertain_prog->err : "");
    if (o->old_slice)
        line_printf(
            l, "; ResourceSlice %s (pool %s generation %lld) skipped: a newer generation exists",
            o->old_slice->name ? o->old_slice->name : "", o->old_slice->pool,
            (long long)o->old_slice->generation);
    if (o->incomplete_slice && !o->all_incomplete)
        line_printf(l, "; pool %s is incomplete (%lld of %lld ResourceSlices)",
                    o->incomplete_slice->pool, (long long)o->incomplete_have,
                    (long long)o->incomplete_slice->slice_count);
}

static void node_step(const struct dra_prep *p, const struct knode *node, struct node_verdict *v,
                      struct line *l);

void dra_node(const struct dra_prep *p, const struct knode *node, struct node_verdict *v,
              struct line *l)
{
    v->dra_step = CAUSE_GPU_FITS;
    if (!p || p->n_reqs == 0)
        return;
    if (!l) {
        v->dra_cel_left = p->budget->left;
        node_step(p, node, v, NULL);
        return;
    }
    /* Describing a node evaluated before: replay it with the budget it had then, so the
       detail says what the verdict found (the budget spent since would make it differ) */
    struct cel_budget replay;
    cel_budget_init(&replay, v->dra_cel_left);
    struct dra_prep q = *p;
    q.budget = &replay;
    node_step(&q, node, v, l);
    cel_budget_charge(p->describe, replay.spent);
    if (p->budget->exhausted && !v->dra_too_costly)
        line_printf(l, "; %s on other nodes (the CEL budget of this classification is spent)",
                    CEL_TOO_COSTLY);
}

static void node_step(const struct dra_prep *p, const struct knode *node, struct node_verdict *v,
                      struct line *l)
{
    size_t chosen[DRA_MAX_POD_CLAIMS * DRA_MAX_REQUESTS];
    size_t worst = SIZE_MAX;
    struct alt_out worst_o = {0}, o;
    for (size_t i = 0; i < p->n_reqs && i < sizeof(chosen) / sizeof(chosen[0]); i++) {
        if (!req_applies(&p->reqs[i], node)) {
            chosen[i] = SIZE_MAX;
            continue;
        }
        chosen[i] = req_node(p, &p->reqs[i], node, &o);
        if (worst == SIZE_MAX || cause_rank(o.step) < cause_rank(worst_o.step)) {
            worst = i;
            worst_o = o;
        }
    }
    size_t n = p->n_reqs < sizeof(chosen) / sizeof(chosen[0]) ? p->n_reqs
                                                              : sizeof(chosen) / sizeof(chosen[0]);
    if (worst == SIZE_MAX)
        return; /* no request applies on this node (dra_step stays CAUSE_GPU_FITS) */
    const char *extra = NULL;
    if (worst_o.step == CAUSE_GPU_FITS && !worst_o.uncertain) {
        /* requests of one driver together: certainly too few free devices of it at all */
        for (size_t i = 0; i < n && !extra; i++) {
            if (chosen[i] == SIZE_MAX)
                continue;
            const struct alt *a = &p->reqs[i].alts[chosen[i]];
            if (!a->cls || !a->cls->driver || a->e->mode != DRA_MODE_EXACT_COUNT)
                continue;
            int64_t sum = 0;
            size_t last = i;
            for (size_t j = 0; j < n; j++) {
                if (chosen[j] == SIZE_MAX)
                    continue;
                const struct alt *b = &p->reqs[j].alts[chosen[j]];
                if (b->cls && b->cls->driver && b->e->mode == DRA_MODE_EXACT_COUNT &&
                    strcmp(b->cls->driver, a->cls->driver) == 0) {
                    sum = int64_add_sat(sum, b->e->count);
                    last = j;
                }
            }
            alt_node(p, a, node, NULL, NULL, NULL, &o);
            /* a shared device may serve several requests: not counted here */
            if (sum > (int64_t)o.free_driver && o.shareable_free == 0) {
                worst = last;
                alt_node(p, &p->reqs[last].alts[chosen[last]], node, NULL, NULL, NULL, &worst_o);
                worst_o.step = CAUSE_DRA_EXHAUSTED;
                extra = "together the pod's requests ask more devices of the driver than are free";
            }
        }
        /* constraints[].matchAttribute */
        for (size_t i = 0; i < n && !extra; i++) {
            const struct dra_claim_spec *spec = p->reqs[i].spec;
            if (i > 0 && p->reqs[i - 1].spec == spec)
                continue; /* first request of each spec */
            for (size_t c = 0; c < spec->n_constraints && !extra; c++) {
                const struct dra_constraint *ct = &spec->constraints[c];
                if (!ct->match_attribute)
                    continue;
                size_t first = SIZE_MAX;
                for (size_t j = i; j < n && p->reqs[j].spec == spec; j++)
                    if (req_in_constraint(ct, &p->reqs[j]) && chosen[j] != SIZE_MAX) {
                        first = j;
                        break;
                    }
                if (first == SIZE_MAX || constraint_ok(p, ct, node, chosen, first))
                    continue;
                worst = first;
                alt_node(p, &p->reqs[first].alts[chosen[first]], node, NULL, NULL, NULL, &worst_o);
                worst_o.step = CAUSE_DRA_NO_MATCH;
                worst_o.constraint = ct->match_attribute;
                extra = ct->match_attribute;
            }
        }
    }
    const struct req *q = &p->reqs[worst];
    const struct alt *a = chosen[worst] == SIZE_MAX ? NULL : &q->alts[chosen[worst]];
    v->dra_step = worst_o.step;
    v->dra_request = q->ext_resource ? q->ext_resource : q->r->name;
    v->dra_resource = q->ext_resource;
    v->dra_class = a ? a->e->class_name : NULL;
    v->dra_driver = worst_o.driver;
    v->dra_devices = worst_o.devices;
    v->dra_matching = worst_o.matching;
    v->dra_free = worst_o.free_match;
    v->dra_tainted = worst_o.tainted_free + worst_o.uncertain_tainted +
                     (a && a->e->mode == DRA_MODE_ALL ? worst_o.tainted_held : 0);
    v->dra_wanted = a && a->e->mode == DRA_MODE_EXACT_COUNT ? a->e->count : 0;
    v->dra_exact = a && !q->ext_resource ? a->e : NULL;
    v->dra_cls = a ? a->cls : NULL;
    v->dra_too_costly = worst_o.too_costly;
    if (l) {
        describe(p, q, chosen[worst], &worst_o, node, l);
        if (extra && !worst_o.constraint)
            line_printf(l, "; %s", extra);
    }
}

void dra_put_holders(const struct dra_prep *p, const struct knode *node, struct line *l)
{
    if (!p)
        return;
    /* a node's verdict is not re-decided here: once the budget for describing is spent, the
       node's holders are not named (its devices are undecided, so not exhausted) */
    struct dra_prep q = *p;
    q.budget = p->describe;
    p = &q;
    struct alt_out o;
    for (size_t i = 0; i < p->n_reqs; i++) {
        if (!req_applies(&p->reqs[i], node))
            continue;
        req_node(p, &p->reqs[i], node, &o);
        if (o.step != CAUSE_DRA_EXHAUSTED || o.n_holders == 0)
            continue;
        line_printf(l, "; node %s: %zu matching, %zu free", node->name ? node->name : "(unnamed)",
                    o.matching, o.free_match);
        put_holders(l, &o);
        return;
    }
}

/* A preparation for one alternative without a pod (dra_count_matching, dra_pool_counts). */
static int lone_prep(struct dra_prep *p, struct alt *a, const struct dra_view *view,
                     const struct dra_exact *e, const struct dra_class *cls)
{
    static const struct kpod no_pod;
    *p = (struct dra_prep){.pod = &no_pod, .view = view, .class_missing = SIZE_MAX};
    *a = (struct alt){.e = e, .cls = cls};
    budget_setup(p);
    p->slice_buf = calloc(DRA_MAX_NODE_SLICES, sizeof(*p->slice_buf));
    p->counters = malloc(sizeof(*p->counters));
    if (!p->slice_buf || !p->counters)
        return K_ENOMEM;
    return alt_compile(p, a);
}

static void lone_prep_cleanup(struct dra_prep *p)
{
    for (size_t i = 0; i < p->n_progs; i++)
        cel_program_free(p->progs[i].prog);
    free(p->progs);
    free(p->idx);
    free(p->slice_buf);
    free(p->counters);
}

int dra_node_counters(const struct dra_view *view, const struct knode *node, const char *driver,
                      struct dra_counters *out)
{
    static const struct kpod no_pod;
    dra_counters_reset(out);
    if (!view || !view->node_slices || !node->name)
        return K_OK;
    struct dra_prep p = {.pod = &no_pod, .view = view, .class_missing = SIZE_MAX};
    budget_setup(&p);
    const struct dra_slice **slices = calloc(DRA_MAX_NODE_SLICES, sizeof(*slices));
    if (!slices)
        return K_ENOMEM;
    size_t n = view->node_slices(view->ctx, node->name, driver, slices, DRA_MAX_NODE_SLICES);
    share_prepare(&p, slices, n < DRA_MAX_NODE_SLICES ? n : DRA_MAX_NODE_SLICES, driver, node, out);
    free(slices);
    return K_OK;
}

struct pool_tally {
    struct dra_pool_count *out;
    size_t max, n;
};

static void pool_tally_add(void *ctx, const struct dra_slice *s, const struct dra_device *d,
                           enum cel_result r, bool free_, bool tainted)
{
    (void)d;
    struct pool_tally *t = ctx;
    size_t i = 0;
    while (i < t->n &&
           !(strcmp(t->out[i].driver, s->driver) == 0 && strcmp(t->out[i].pool, s->pool) == 0))
        i++;
    if (i == t->n) {
        if (t->n == t->max)
            return;
        t->out[t->n++] = (struct dra_pool_count){.driver = s->driver, .pool = s->pool};
    }
    t->out[i].devices++;
    if (r == CEL_TRUE) {
        t->out[i].matching++;
        t->out[i].free_matching += free_ && !tainted;
        t->out[i].tainted += free_ && tainted;
    }
}

int dra_pool_counts(const struct dra_view *view, const struct dra_exact *e,
                    const struct dra_class *cls, const struct knode *node,
                    struct dra_pool_count *out, size_t max, size_t *n)
{
    *n = 0;
    struct dra_prep p;
    struct alt a;
    int rc = lone_prep(&p, &a, view, e, cls);
    if (rc == K_OK) {
        struct pool_tally t = {out, max, 0};
        struct alt_out o;
        alt_node(&p, &a, node, NULL, pool_tally_add, &t, &o);
        *n = t.n;
    }
    lone_prep_cleanup(&p);
    return rc;
}

struct device_visit {
    const struct dra_view *view;
    const struct dra_exact *e;
    void (*fn)(void *ctx, const struct dra_device_seen *seen);
    void *ctx;
};

static void device_visit(void *ctx, const struct dra_slice *s, const struct dra_device *d,
                         enum cel_result r, bool free_, bool tainted)
{
    struct device_visit *v = ctx;
    struct dra_device_seen seen = {.slice = s,
                                   .device = d,
                                   .match = r == CEL_TRUE      ? 1
                                            : r == CEL_UNKNOWN ? -1
                                                               : 0,
                                   .free_ = free_};
    /* alt_node judged the taint; name it (the same first blocking taint) */
    if (tainted)
        seen.taint =
            dra_device_blocking_taint(v->view, v->e, s->driver, s->pool, d, &seen.taint_rule);
    v->fn(v->ctx, &seen);
}

int dra_class_devices(const struct dra_view *view, const struct dra_class *cls,
                      const struct knode *node,
                      void (*fn)(void *ctx, const struct dra_device_seen *seen), void *ctx)
{
    const struct dra_exact e = {.class_name = cls->name, .mode = DRA_MODE_EXACT_COUNT, .count = 1};
    struct dra_prep p;
    struct alt a;
    int rc = lone_prep(&p, &a, view, &e, cls);
    if (rc == K_OK) {
        struct device_visit v = {view, &e, fn, ctx};
        struct alt_out o;
        alt_node(&p, &a, node, NULL, device_visit, &v, &o);
    }
    lone_prep_cleanup(&p);
    return rc;
}

int dra_count_matching(const struct dra_view *view, const struct dra_exact *e,
                       const struct dra_class *cls, const struct knode *const *nodes,
                       size_t n_nodes, struct dra_match_count *out)
{
    memset(out, 0, sizeof(*out));
    struct dra_prep p;
    struct alt a;
    int rc = lone_prep(&p, &a, view, e, cls);
    for (size_t i = 0; rc == K_OK && i < n_nodes; i++) {
        struct alt_out o;
        alt_node(&p, &a, nodes[i], NULL, NULL, NULL, &o);
        if (o.devices > 0)
            out->reached = true;
        size_t possible = o.matching + o.uncertain_free + o.uncertain_held + o.uncertain_tainted;
        if (possible > out->most_possible)
            out->most_possible = possible;
        if (!out->node || o.matching > out->most) {
            out->most = o.matching;
            out->node = nodes[i];
            out->devices = o.devices;
        }
        if (!out->undecided && o.uncertain_prog)
            out->undecided = o.uncertain_prog->src;
        out->too_costly = out->too_costly || o.too_costly;
    }
    if (!out->undecided && a.progs_missing)
        out->undecided = "(too many selectors)";
    lone_prep_cleanup(&p);
    return rc;
}
