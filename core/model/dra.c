/* dra.c - cleanup and small helpers for the DRA records of dra.h. */
#include "model/dra.h"

#include <stdlib.h>
#include <string.h>

static void strv_free(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

void dra_class_cleanup(struct dra_class *c)
{
    if (!c)
        return;
    free(c->name);
    strv_free(c->selectors, c->n_selectors);
    free(c->driver);
    free(c->extended_resource_name);
    memset(c, 0, sizeof(*c));
}

void dra_binding_cleanup(struct dra_binding *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n_conditions; i++)
        free(b->conditions[i]);
    for (size_t i = 0; i < b->n_failure_conditions; i++)
        free(b->failure_conditions[i]);
    memset(b, 0, sizeof(*b));
}

void dra_device_statuses_free(struct dra_device_status *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++) {
        free(s[i].driver);
        free(s[i].pool);
        free(s[i].device);
        free(s[i].share_id);
        for (size_t j = 0; s[i].conditions && j < s[i].n_conditions; j++) {
            free(s[i].conditions[j].type);
            free(s[i].conditions[j].reason);
            free(s[i].conditions[j].message);
        }
        free(s[i].conditions);
    }
    free(s);
}

static bool str_is(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

const struct dra_device_status *dra_claim_device_status(const struct dra_claim *claim,
                                                        const struct dra_result *r)
{
    for (size_t i = 0; claim && r && i < claim->n_device_statuses; i++) {
        const struct dra_device_status *s = &claim->device_statuses[i];
        if (str_is(s->driver, r->driver) && str_is(s->pool, r->pool) &&
            str_is(s->device, r->device))
            return s;
    }
    return NULL;
}

const struct dra_condition *dra_device_condition(const struct dra_device_status *s,
                                                 const char *type)
{
    for (size_t i = 0; s && i < s->n_conditions; i++)
        if (str_is(s->conditions[i].type, type))
            return &s->conditions[i];
    return NULL;
}

void dra_quantities_free(struct dra_quantity *q, size_t n)
{
    for (size_t i = 0; q && i < n; i++) {
        free(q[i].name);
        free(q[i].value);
    }
    free(q);
}

static void taint_cleanup(struct dra_taint *t)
{
    free(t->key);
    free(t->value);
    free(t->time_added);
    memset(t, 0, sizeof(*t));
}

static void device_cleanup(struct dra_device *d)
{
    dra_binding_cleanup(&d->binding);
    free(d->name);
    for (size_t i = 0; i < d->n_attrs; i++) {
        free(d->attrs[i].name);
        free(d->attrs[i].s);
    }
    free(d->attrs);
    for (size_t i = 0; i < d->n_caps; i++) {
        struct dra_capacity *c = &d->caps[i];
        free(c->name);
        free(c->value);
        free(c->policy_default);
        strv_free(c->valid_values, c->n_valid_values);
        free(c->range_min);
        free(c->range_max);
        free(c->range_step);
    }
    free(d->caps);
    for (size_t i = 0; d->consumes && i < d->n_consumes; i++) {
        free(d->consumes[i].counter_set);
        dra_quantities_free(d->consumes[i].counters, d->consumes[i].n_counters);
    }
    free(d->consumes);
    for (size_t i = 0; d->taints && i < d->n_taints; i++)
        taint_cleanup(&d->taints[i]);
    free(d->taints);
}

void dra_slice_cleanup(struct dra_slice *s)
{
    if (!s)
        return;
    free(s->name);
    free(s->driver);
    free(s->pool);
    free(s->node_name);
    node_affinity_cleanup(&s->nodes);
    for (size_t i = 0; s->devices && i < s->n_devices; i++)
        device_cleanup(&s->devices[i]);
    free(s->devices);
    for (size_t i = 0; s->counter_sets && i < s->n_counter_sets; i++) {
        free(s->counter_sets[i].name);
        dra_quantities_free(s->counter_sets[i].counters, s->counter_sets[i].n_counters);
    }
    free(s->counter_sets);
    memset(s, 0, sizeof(*s));
}

static void exact_cleanup(struct dra_exact *e)
{
    free(e->name);
    free(e->class_name);
    strv_free(e->selectors, e->n_selectors);
    dra_quantities_free(e->capacity, e->n_capacity);
    for (size_t i = 0; e->tolerations && i < e->n_tolerations; i++) {
        free(e->tolerations[i].key);
        free(e->tolerations[i].value);
    }
    free(e->tolerations);
    memset(e, 0, sizeof(*e));
}

void dra_claim_spec_cleanup(struct dra_claim_spec *s)
{
    if (!s)
        return;
    for (size_t i = 0; s->requests && i < s->n_requests; i++) {
        struct dra_request *r = &s->requests[i];
        free(r->name);
        exact_cleanup(&r->exactly);
        for (size_t j = 0; r->first_available && j < r->n_first_available; j++)
            exact_cleanup(&r->first_available[j]);
        free(r->first_available);
    }
    free(s->requests);
    for (size_t i = 0; s->constraints && i < s->n_constraints; i++) {
        strv_free(s->constraints[i].requests, s->constraints[i].n_requests);
        free(s->constraints[i].match_attribute);
    }
    free(s->constraints);
    memset(s, 0, sizeof(*s));
}

void dra_claim_cleanup(struct dra_claim *c)
{
    if (!c)
        return;
    free(c->ns);
    free(c->name);
    free(c->uid);
    free(c->owner_pod_uid);
    free(c->pod_claim_name);
    free(c->owner_pod_name);
    dra_claim_spec_cleanup(&c->spec);
    for (size_t i = 0; c->results && i < c->n_results; i++) {
        free(c->results[i].request);
        free(c->results[i].driver);
        free(c->results[i].pool);
        free(c->results[i].device);
        dra_binding_cleanup(&c->results[i].binding);
        free(c->results[i].share_id);
        dra_quantities_free(c->results[i].consumed, c->results[i].n_consumed);
    }
    free(c->results);
    node_affinity_cleanup(&c->alloc_nodes);
    for (size_t i = 0; c->reserved_for && i < c->n_reserved_for; i++) {
        free(c->reserved_for[i].resource);
        free(c->reserved_for[i].name);
        free(c->reserved_for[i].uid);
    }
    free(c->reserved_for);
    dra_device_statuses_free(c->device_statuses, c->n_device_statuses);
    memset(c, 0, sizeof(*c));
}

void dra_template_cleanup(struct dra_template *t)
{
    if (!t)
        return;
    free(t->ns);
    free(t->name);
    dra_claim_spec_cleanup(&t->spec);
    memset(t, 0, sizeof(*t));
}

void pod_claim_refs_free(struct pod_claim_ref *r, size_t n)
{
    for (size_t i = 0; r && i < n; i++) {
        free(r[i].name);
        free(r[i].claim_name);
        free(r[i].template_name);
    }
    free(r);
}

void pod_claim_statuses_free(struct pod_claim_status *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++) {
        free(s[i].name);
        free(s[i].claim_name);
    }
    free(s);
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* `device.driver` at p: returns the position after it, or NULL. */
static const char *eat_device_driver(const char *p)
{
    static const char word[] = "device.driver";
    if (strncmp(p, word, sizeof(word) - 1) != 0)
        return NULL;
    p += sizeof(word) - 1;
    char c = *p;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')
        return NULL;
    return p;
}

/* A quoted literal without escapes at p: sets *s, *len and returns the position after it. */
static const char *eat_literal(const char *p, const char **s, size_t *len)
{
    char q = *p;
    if (q != '\'' && q != '"')
        return NULL;
    const char *start = p + 1;
    const char *end = strchr(start, q);
    if (!end || memchr(start, '\\', (size_t)(end - start)) ||
        memchr(start, '\n', (size_t)(end - start)))
        return NULL;
    /* not a triple-quoted string */
    if (end == start && end[1] == q)
        return NULL;
    *s = start;
    *len = (size_t)(end - start);
    return end + 1;
}

/* Whether `p` has no `||` or `?` outside string literals and parentheses, and balanced
 * parentheses: then `device.driver == 'x' && p` is false whenever the driver differs. */
static bool conjunct_rest_ok(const char *p)
{
    int depth = 0;
    while (*p) {
        char c = *p;
        if (c == '\'' || c == '"') {
            p++;
            while (*p && *p != c) {
                if (*p == '\\' && p[1])
                    p++;
                p++;
            }
            if (!*p)
                return false;
            p++;
            continue;
        }
        if (c == '(' || c == '[')
            depth++;
        else if (c == ')' || c == ']')
            depth--;
        else if (depth == 0 && (c == '?' || (c == '|' && p[1] == '|')))
            return false;
        if (depth < 0)
            return false;
        p++;
    }
    return depth == 0;
}

char *dra_selector_driver(const char *expr)
{
    if (!expr)
        return NULL;
    const char *p = skip_ws(expr);
    bool paren = false;
    if (*p == '(') {
        paren = true;
        p = skip_ws(p + 1);
    }
    const char *lit = NULL;
    size_t len = 0;
    const char *q = eat_device_driver(p);
    if (q) {
        q = skip_ws(q);
        if (strncmp(q, "==", 2) != 0)
            return NULL;
        q = eat_literal(skip_ws(q + 2), &lit, &len);
        if (!q)
            return NULL;
    } else {
        q = eat_literal(p, &lit, &len);
        if (!q)
            return NULL;
        q = skip_ws(q);
        if (strncmp(q, "==", 2) != 0)
            return NULL;
        q = eat_device_driver(skip_ws(q + 2));
        if (!q)
            return NULL;
    }
    q = skip_ws(q);
    if (paren) {
        if (*q != ')')
            return NULL;
        q = skip_ws(q + 1);
    }
    if (len == 0)
        return NULL;
    if (*q == '&' && q[1] == '&' && conjunct_rest_ok(q + 2))
        return strndup(lit, len);
    if (*q != '\0')
        return NULL;
    return strndup(lit, len);
}

const struct dra_attribute *dra_device_attribute(const struct dra_device *d, const char *qname)
{
    for (size_t i = 0; d && qname && i < d->n_attrs; i++)
        if (d->attrs[i].name && strcmp(d->attrs[i].name, qname) == 0)
            return &d->attrs[i];
    return NULL;
}

const struct dra_capacity *dra_device_capacity(const struct dra_device *d, const char *qname)
{
    for (size_t i = 0; d && qname && i < d->n_caps; i++)
        if (d->caps[i].name && strcmp(d->caps[i].name, qname) == 0)
            return &d->caps[i];
    return NULL;
}

char *dra_qualify(const char *driver, const char *name)
{
    if (!name)
        return NULL;
    if (strchr(name, '/') || !driver || !*driver)
        return strdup(name);
    size_t dl = strlen(driver), nl = strlen(name);
    char *s = malloc(dl + 1 + nl + 1);
    if (!s)
        return NULL;
    memcpy(s, driver, dl);
    s[dl] = '/';
    memcpy(s + dl + 1, name, nl + 1);
    return s;
}

bool dra_qname_is(const char *driver, const char *name, const char *qname)
{
    if (!name || !qname)
        return false;
    if (strcmp(name, qname) == 0)
        return true;
    if (strchr(name, '/') || !driver)
        return false;
    size_t dl = strlen(driver);
    return strncmp(qname, driver, dl) == 0 && qname[dl] == '/' && strcmp(qname + dl + 1, name) == 0;
}

void dra_taint_rule_cleanup(struct dra_taint_rule *r)
{
    if (!r)
        return;
    free(r->name);
    free(r->driver);
    free(r->pool);
    free(r->device);
    taint_cleanup(&r->taint);
    memset(r, 0, sizeof(*r));
}
