/*
 * test_dra_layout.c - core/kube/dra_layout.c: DRA objects read at v1beta1 and v1beta2 in the
 * layout of v1. The fixtures tests/fixtures/dra-versions/<release>/<version>.json are the DRA
 * lab's objects as each release's API server serves them at each version it serves
 * (tests/fixtures/record-dra-versions; README.md there); projected through dra_json_as_v1() and
 * project_dra_*:
 *   - every version of a release gives the same records (every recorded release: the
 *     directories of dra-versions are listed, and the releases of README.md's table required);
 *   - every release gives the same records as the reference (1.34.4 at v1) for the lab's objects
 *     it has too (classes, slices and templates written by hand, and the claims made from them);
 *   - the newer shapes (1.36+: extended resources, device taints and tolerations, counters and
 *     partitions, shared devices and capacity requests, DeviceTaintRules) give the same records
 *     from 1.36.3 (v1; with the betas on, v1beta2 and v1beta1 too) and 1.37.2.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "kube/dra_api.h"
#include "kube/project.h"
#include "model/dra.h"
#include "util/result.h"

/* ---- a canonical text of the records ------------------------------------------------------- */

struct text {
    char buf[65536];
    size_t n;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->n, sizeof(t->buf) - t->n, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < sizeof(t->buf) - t->n);
    t->n += (size_t)n;
}

#define S(s) ((s) ? (s) : "-")

static void put_quantities(struct text *t, const char *what, const struct dra_quantity *q, size_t n)
{
    if (!n)
        return;
    put(t, " %s=[", what);
    for (size_t i = 0; i < n; i++)
        put(t, "%s=%s;", q[i].name, q[i].value);
    put(t, "]");
}

static void put_binding(struct text *t, const struct dra_binding *b)
{
    if (!b->binds_to_node && !b->n_conditions && !b->n_failure_conditions)
        return;
    put(t, " binding(node=%d", b->binds_to_node);
    for (size_t i = 0; i < b->n_conditions; i++)
        put(t, " ok:%s", b->conditions[i]);
    for (size_t i = 0; i < b->n_failure_conditions; i++)
        put(t, " fail:%s", b->failure_conditions[i]);
    put(t, ")");
}

static void put_taint(struct text *t, const struct dra_taint *x)
{
    /* timeAdded: whether set (the API server sets it to the time of writing) */
    put(t, "%s=%s:%d@%d", S(x->key), S(x->value), (int)x->effect, x->time_added != NULL);
}

/* `core`: what every release from 1.32 serves; `ext`: the fields of the newer shapes (1.34+:
 * tolerations, capacity requests; 1.36+: extended resources, taints, counters, shared devices,
 * binding), empty where an object has none of them. */
static void put_exact(struct text *core, struct text *ext, const struct dra_exact *e)
{
    put(core, "{%s class=%s mode=%d count=%lld admin=%d sel=[", S(e->name), S(e->class_name),
        (int)e->mode, (long long)e->count, e->admin_access);
    for (size_t i = 0; i < e->n_selectors; i++)
        put(core, "%s;", e->selectors[i]);
    put(core, "]}");
    if (!e->n_tolerations && !e->n_capacity)
        return;
    put(ext, " {%s", S(e->name));
    for (size_t i = 0; i < e->n_tolerations; i++) {
        const struct dra_toleration *x = &e->tolerations[i];
        put(ext, " tol %s op=%d %s any=%d effect=%d", S(x->key), (int)x->op, S(x->value),
            x->any_effect, (int)x->effect);
    }
    put_quantities(ext, "capacity", e->capacity, e->n_capacity);
    put(ext, "}");
}

static void put_spec(struct text *core, struct text *ext, const struct dra_claim_spec *s)
{
    for (size_t i = 0; i < s->n_requests; i++) {
        const struct dra_request *r = &s->requests[i];
        put(core, " req %s", S(r->name));
        if (r->has_exactly)
            put_exact(core, ext, &r->exactly);
        for (size_t j = 0; j < r->n_first_available; j++)
            put_exact(core, ext, &r->first_available[j]);
    }
    for (size_t i = 0; i < s->n_constraints; i++)
        put(core, " constraint %s", S(s->constraints[i].match_attribute));
}

static void put_device(struct text *core, struct text *ext, const struct dra_device *d)
{
    put(core, "  device %s", d->name);
    for (size_t j = 0; j < d->n_attrs; j++)
        put(core, " %s=%d:%d:%lld:%s", d->attrs[j].name, (int)d->attrs[j].kind, d->attrs[j].b,
            (long long)d->attrs[j].i, S(d->attrs[j].s));
    for (size_t j = 0; j < d->n_caps; j++)
        put(core, " %s=%s", d->caps[j].name, d->caps[j].value);
    put(core, "\n");
    struct text *one = calloc(1, sizeof(*one));
    assert_non_null(one);
    for (size_t j = 0; j < d->n_caps; j++) {
        const struct dra_capacity *c = &d->caps[j];
        if (!c->has_policy)
            continue;
        put(one, " policy %s default=%s range=%s..%s/%s values=[", c->name, S(c->policy_default),
            S(c->range_min), S(c->range_max), S(c->range_step));
        for (size_t k = 0; k < c->n_valid_values; k++)
            put(one, "%s;", c->valid_values[k]);
        put(one, "]");
    }
    for (size_t j = 0; j < d->n_consumes; j++) {
        put(one, " consumes %s", d->consumes[j].counter_set);
        put_quantities(one, "counters", d->consumes[j].counters, d->consumes[j].n_counters);
    }
    if (d->allow_multiple)
        put(one, " multiple");
    for (size_t j = 0; j < d->n_taints; j++) {
        put(one, " taint ");
        put_taint(one, &d->taints[j]);
    }
    put_binding(one, &d->binding);
    if (one->n)
        put(ext, "  device %s%s\n", d->name, one->buf);
    free(one);
}

/*
 * One object of `kind` read at `v`: its canonical lines into core and ext (see put_exact), and
 * its key: the name, for a claim the generateName (claims' names are generated by the API server,
 * so they are compared only within one recording: `with_names` puts them into core then).
 */
static void put_object(struct text *core, struct text *ext, char **key, enum dra_kind kind,
                       enum dra_api_version v, json_object *obj, bool with_names)
{
    json_object *v1 = NULL;
    assert_int_equal(dra_json_as_v1(kind, v, obj, &v1), K_OK);
    switch (kind) {
    case DRA_KIND_CLASS: {
        struct dra_class c;
        assert_int_equal(project_dra_class(v1, &c), K_OK);
        put(core, "class %s driver=%s sel=%zu\n", c.name, S(c.driver), c.n_selectors);
        if (c.extended_resource_name)
            put(ext, "class %s extended=%s\n", c.name, c.extended_resource_name);
        *key = strdup(c.name);
        dra_class_cleanup(&c);
        break;
    }
    case DRA_KIND_SLICE: {
        struct dra_slice s;
        assert_int_equal(project_dra_slice(v1, &s), K_OK);
        put(core, "slice %s %s pool=%s/%lld/%lld node=%s all=%d\n", s.name, s.driver, s.pool,
            (long long)s.generation, (long long)s.slice_count, S(s.node_name), s.all_nodes);
        for (size_t i = 0; i < s.n_devices; i++)
            put_device(core, ext, &s.devices[i]);
        for (size_t i = 0; i < s.n_counter_sets; i++) {
            put(ext, "slice %s counter set %s", s.name, s.counter_sets[i].name);
            put_quantities(ext, "counters", s.counter_sets[i].counters,
                           s.counter_sets[i].n_counters);
            put(ext, "\n");
        }
        if (s.nodes.present || s.per_device_nodes)
            put(ext, "slice %s selector=%zu per-device=%d\n", s.name, s.nodes.n_terms,
                s.per_device_nodes);
        *key = strdup(s.name);
        dra_slice_cleanup(&s);
        break;
    }
    case DRA_KIND_TEMPLATE: {
        struct dra_template tp;
        assert_int_equal(project_dra_template(v1, &tp), K_OK);
        put(core, "template %s/%s", tp.ns, tp.name);
        put_spec(core, ext, &tp.spec);
        put(core, "\n");
        if (ext->n)
            put(ext, "\n");
        *key = strdup(tp.name);
        dra_template_cleanup(&tp);
        break;
    }
    case DRA_KIND_TAINT_RULE: {
        struct dra_taint_rule r;
        assert_int_equal(project_dra_taint_rule(v1, &r), K_OK);
        put(core, "rule %s selector=%d %s/%s/%s ", r.name, r.has_selector, S(r.driver), S(r.pool),
            S(r.device));
        put_taint(core, &r.taint);
        put(core, "\n");
        *key = strdup(r.name);
        dra_taint_rule_cleanup(&r);
        break;
    }
    default: {
        struct dra_claim c;
        assert_int_equal(project_dra_claim(v1, &c), K_OK);
        put(core, "claim %s pod-claim=%s owner=%d allocated=%d", with_names ? c.name : "",
            S(c.pod_claim_name), c.owner_pod_uid != NULL, c.allocated);
        put_spec(core, ext, &c.spec);
        for (size_t i = 0; i < c.n_results; i++)
            put(core, " result %s %s/%s/%s", c.results[i].request, c.results[i].driver,
                c.results[i].pool, c.results[i].device);
        put(core, " reserved=%zu\n", c.n_reserved_for);
        if (c.extended)
            put(ext, " extended pod=%s", S(c.owner_pod_name));
        for (size_t i = 0; i < c.n_results; i++) {
            const struct dra_result *r = &c.results[i];
            struct text *one = calloc(1, sizeof(*one));
            assert_non_null(one);
            if (r->admin_access)
                put(one, " admin");
            if (r->share_id) /* a UID the scheduler makes: whether set */
                put(one, " shared");
            put_quantities(one, "consumed", r->consumed, r->n_consumed);
            put_binding(one, &r->binding);
            if (one->n)
                put(ext, " result %s%s", r->device, one->buf);
            free(one);
        }
        for (size_t i = 0; i < c.n_device_statuses; i++)
            put(ext, " status %s/%s conditions=%zu", c.device_statuses[i].device,
                c.device_statuses[i].share_id ? "shared" : "-", c.device_statuses[i].n_conditions);
        if (ext->n)
            put(ext, "\n");
        const char *gen = json_object_get_string(
            json_object_object_get(json_object_object_get(obj, "metadata"), "generateName"));
        *key = strdup(gen ? gen : c.name);
        dra_claim_cleanup(&c);
        break;
    }
    }
    assert_non_null(*key);
    json_object_put(v1);
}

/* One object's records: its key, the core lines and the lines of the newer shapes. */
struct record {
    char *key;
    char *core;
    char *ext;
};

struct records {
    bool
        served; /* the file lists the kind (DeviceTaintRules: only where the version serves them) */
    struct record *r;
    size_t n;
};

static int cmp_record(const void *a, const void *b)
{
    const struct record *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : strcmp(x->core, y->core);
}

static void records_free(struct records *rs)
{
    for (size_t i = 0; i < rs->n; i++) {
        free(rs->r[i].key);
        free(rs->r[i].core);
        free(rs->r[i].ext);
    }
    free(rs->r);
    memset(rs, 0, sizeof(*rs));
}

/* The records of every object of `kind` in dra-versions/<release>/<version>.json, sorted by
 * key. False when the file does not exist. */
static bool load(const char *release, const char *version, enum dra_kind kind, bool with_names,
                 struct records *out)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/dra-versions/%s/%s.json", FIXTURES_DIR, release, version);
    memset(out, 0, sizeof(*out));
    json_object *root = json_object_from_file(path);
    if (!root)
        return false;
    json_object *items = NULL;
    out->served = json_object_object_get_ex(root, dra_kind_name(kind), &items);
    /* the core kinds are in every recording */
    assert_true(out->served || kind == DRA_KIND_TAINT_RULE);
    size_t n = out->served ? json_object_array_length(items) : 0;
    out->r = calloc(n ? n : 1, sizeof(*out->r));
    assert_non_null(out->r);
    struct text *core = calloc(1, sizeof(*core)), *ext = calloc(1, sizeof(*ext));
    assert_non_null(core);
    assert_non_null(ext);
    for (size_t i = 0; i < n; i++) {
        core->n = ext->n = 0;
        core->buf[0] = ext->buf[0] = '\0';
        put_object(core, ext, &out->r[i].key, kind, dra_api_version_parse(version),
                   json_object_array_get_idx(items, i), with_names);
        out->r[i].core = strdup(core->buf);
        out->r[i].ext = strdup(ext->buf);
        assert_non_null(out->r[i].core);
        assert_non_null(out->r[i].ext);
    }
    out->n = n;
    qsort(out->r, n, sizeof(*out->r), cmp_record);
    free(core);
    free(ext);
    json_object_put(root);
    return true;
}

static const struct record *find(const struct records *rs, const char *key)
{
    for (size_t i = 0; i < rs->n; i++)
        if (strcmp(rs->r[i].key, key) == 0)
            return &rs->r[i];
    return NULL;
}

/* Every record of a and b, in order, the same (core and ext). */
static bool same_records(const struct records *a, const struct records *b)
{
    if (a->served != b->served || a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->r[i].key, b->r[i].key) || strcmp(a->r[i].core, b->r[i].core) ||
            strcmp(a->r[i].ext, b->r[i].ext))
            return false;
    return true;
}

static void dump(const char *what, const struct records *rs)
{
    print_message("%s (%zu):\n", what, rs->n);
    for (size_t i = 0; i < rs->n; i++)
        print_message("  [%s] %s%s", rs->r[i].key, rs->r[i].core, rs->r[i].ext);
}

/* ---- the recordings ------------------------------------------------------------------------ */

static const char *const VERSIONS[] = {"v1", "v1beta2", "v1beta1"};
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_RELEASES 32

/* The releases recorded with DRA objects: every directory of dra-versions with a VERSION.json
 * (those with only a discovery document are test_dra_api.c's), sorted. */
static size_t recorded_releases(char names[][64])
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/dra-versions", FIXTURES_DIR);
    DIR *d = opendir(path);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        bool any = false;
        for (size_t v = 0; v < N(VERSIONS) && !any; v++) {
            char f[2048];
            snprintf(f, sizeof(f), "%s/%s/%s.json", path, e->d_name, VERSIONS[v]);
            any = access(f, R_OK) == 0;
        }
        if (!any)
            continue;
        assert_true(n < MAX_RELEASES && strlen(e->d_name) < 64);
        strcpy(names[n++], e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof(names[0]), (int (*)(const void *, const void *))strcmp);
    return n;
}

/* The minor version of "1.X.Y[-what]". */
static int minor_of(const char *release)
{
    int major = 0, minor = 0;
    assert_int_equal(sscanf(release, "%d.%d", &major, &minor), 2);
    assert_int_equal(major, 1);
    return minor;
}

/* The releases that must be there (README.md's table). */
static const char *const REQUIRED[] = {"1.32.13",      "1.33.13", "1.34.4-betas", "1.35.4",
                                       "1.35.4-betas", "1.36.3",  "1.36.3-betas", "1.37.2"};
#define REFERENCE "1.34.4-betas" /* at v1: the hand-written objects of the lab before 1.36 */

static void test_recorded_versions(void **state)
{
    (void)state;
    char releases[MAX_RELEASES][64];
    size_t n_releases = recorded_releases(releases);
    for (size_t i = 0; i < N(REQUIRED); i++) {
        bool found = false;
        for (size_t r = 0; r < n_releases; r++)
            found = found || strcmp(releases[r], REQUIRED[i]) == 0;
        if (!found)
            fail_msg("no recording of %s in dra-versions", REQUIRED[i]);
    }
    size_t compared = 0, with_reference = 0;
    for (int k = 0; k < DRA_KIND_COUNT; k++) {
        enum dra_kind kind = (enum dra_kind)k;
        struct records ref, first, got;
        assert_true(load(REFERENCE, "v1", kind, false, &ref));
        assert_true(kind == DRA_KIND_TAINT_RULE || ref.n > 0);
        for (size_t r = 0; r < n_releases; r++) {
            /* one release, one truth: every version it serves gives the same records (claims
             * with their names: one recording) */
            bool have_first = false;
            for (size_t v = 0; v < N(VERSIONS); v++) {
                if (!load(releases[r], VERSIONS[v], kind, true, &got))
                    continue;
                if (!got.served) { /* DeviceTaintRules not at this version (1.36: v1beta2) */
                    records_free(&got);
                    continue;
                }
                compared++;
                if (!have_first) {
                    first = got;
                    have_first = true;
                    continue;
                }
                if (!same_records(&first, &got)) {
                    dump(VERSIONS[v], &got);
                    dump("the first version", &first);
                    fail_msg("%s: %s at %s differ from its first version's", releases[r],
                             dra_kind_name(kind), VERSIONS[v]);
                }
                records_free(&got);
            }
            assert_true(have_first || kind == DRA_KIND_TAINT_RULE);
            if (have_first)
                records_free(&first);
            /* every release: the lab's objects that 1.34.4 has too give the same core records
             * (claims: the same request and the same allocation); before 1.36 nothing more
             * either (the API server drops the newer fields there) */
            bool older = minor_of(releases[r]) < 36;
            assert_true(load(releases[r], VERSIONS[0], kind, false, &got) ||
                        load(releases[r], "v1beta2", kind, false, &got) ||
                        load(releases[r], "v1beta1", kind, false, &got));
            for (size_t i = 0; i < ref.n; i++) {
                const struct record *g = find(&got, ref.r[i].key);
                if (!g) /* the lab writes all of them on every release with DRA */
                    fail_msg("%s has no %s %s", releases[r], dra_kind_name(kind), ref.r[i].key);
                if (strcmp(g->core, ref.r[i].core) != 0)
                    fail_msg("%s: %s %s differs from %s's:\n%s---\n%s", releases[r],
                             dra_kind_name(kind), ref.r[i].key, REFERENCE, g->core, ref.r[i].core);
                if (older && strcmp(g->ext, ref.r[i].ext) != 0)
                    fail_msg("%s: %s %s has more than %s's:\n%s---\n%s", releases[r],
                             dra_kind_name(kind), ref.r[i].key, REFERENCE, g->ext, ref.r[i].ext);
                with_reference++;
            }
            records_free(&got);
        }
        records_free(&ref);
    }
    assert_true(compared >= N(REQUIRED) * DRA_KIND_CORE_COUNT);
    assert_true(with_reference >= (N(REQUIRED) - 1) * (8 + 5 + 3 + 5));
}

/*
 * The records of `release` at `version` against 1.37.2's at v1 (for one kind): the same for
 * every object both have, and nothing that 1.37.2 lacks. Returns how many were compared.
 */
static size_t compare_with_newest(const char *release, const char *version, enum dra_kind kind,
                                  const struct records *newest)
{
    struct records a;
    if (!load(release, version, kind, false, &a))
        return 0;
    size_t both = 0;
    for (size_t i = 0; i < newest->n; i++) {
        const struct record *x = find(&a, newest->r[i].key);
        if (!x)
            continue;
        both++;
        if (strcmp(x->core, newest->r[i].core) || strcmp(x->ext, newest->r[i].ext))
            fail_msg("%s %s: %s at %s and 1.37.2 differ:\n%s%s---\n%s%s", dra_kind_name(kind),
                     newest->r[i].key, release, version, x->core, x->ext, newest->r[i].core,
                     newest->r[i].ext);
    }
    for (size_t i = 0; i < a.n; i++)
        if (!find(newest, a.r[i].key))
            fail_msg("1.37.2 has no %s %s (%s has)", dra_kind_name(kind), a.r[i].key, release);
    records_free(&a);
    return both;
}

/* The newer shapes (1.36+: extended resources, device taints, counters and partitions, shared
 * devices; DeviceTaintRules) as 1.36.3 (at every version it serves: v1, and with the betas on,
 * v1beta2 and v1beta1) and 1.37.2 serve them: the same records for every object both have, and
 * the shapes really there. */
static void test_newer_shapes(void **state)
{
    (void)state;
    struct text *all = calloc(1, sizeof(*all));
    assert_non_null(all);
    size_t both = 0;
    for (int k = 0; k < DRA_KIND_COUNT; k++) {
        enum dra_kind kind = (enum dra_kind)k;
        struct records newest;
        assert_true(load("1.37.2", "v1", kind, false, &newest));
        assert_true(newest.served);
        for (size_t i = 0; i < newest.n; i++)
            put(all, "%s%s", newest.r[i].core, newest.r[i].ext);
        both += compare_with_newest("1.36.3", "v1", kind, &newest);
        for (size_t v = 0; v < N(VERSIONS); v++)
            both += compare_with_newest("1.36.3-betas", VERSIONS[v], kind, &newest);
        records_free(&newest);
    }
    /* 1.36.3: classes, slices, templates and claims; with the betas, three times, and the
     * DeviceTaintRule once (v1beta2) */
    assert_true(both >= (19 + 13 + 4 + 11) + 3 * (20 + 13 + 4 + 11) + 1);
    struct records rules;
    assert_true(load("1.36.3", "v1", DRA_KIND_TAINT_RULE, false, &rules));
    assert_false(rules.served); /* v1beta2 only, and off by default */
    records_free(&rules);
    static const char *const versions_1_36[] = {"v1", "v1beta2", "v1beta1"};
    static const bool rules_1_36[] = {false, true, false};
    for (size_t v = 0; v < N(versions_1_36); v++) {
        assert_true(load("1.36.3-betas", versions_1_36[v], DRA_KIND_TAINT_RULE, false, &rules));
        assert_int_equal(rules.served, rules_1_36[v]);
        records_free(&rules);
    }
    static const char *const shapes[] = {
        "extended=nvidia.com/gpu",             /* a class serving an extended resource */
        " extended pod=ext-exhausted",         /* the claim the scheduler made for it */
        " counter set ",                       /* a slice of shared counters */
        " consumes ",                          /* partitions drawing on them */
        " multiple",                           /* a shared device */
        " policy ",                            /* its capacity's request policy */
        " shared consumed=[",                  /* a share of it in a result */
        " taint gpu.nvidia.com/xid=79:2@",     /* a driver's NoSchedule taint */
        ":1@",                                 /* an effect-None taint */
        " tol gpu.nvidia.com/xid",             /* a toleration in a request */
        " capacity=[",                         /* a capacity request */
        "rule dra-lab-maintenance selector=1", /* a DeviceTaintRule */
    };
    for (size_t i = 0; i < N(shapes); i++)
        if (!strstr(all->buf, shapes[i]))
            fail_msg("1.37.2's records lack '%s':\n%s", shapes[i], all->buf);
    free(all);
}

/* ---- by hand: the documented shapes -------------------------------------------------------- */

static json_object *as_v1(enum dra_kind k, enum dra_api_version v, const char *text)
{
    json_object *o = json_tokener_parse(text);
    assert_non_null(o);
    json_object *v1 = NULL;
    assert_int_equal(dra_json_as_v1(k, v, o, &v1), K_OK);
    json_object_put(o);
    return v1;
}

static void test_v1beta1_request(void **state)
{
    (void)state;
    /* a flat request, a firstAvailable one (the same in both layouts), and one already in v1's */
    json_object *v1 = as_v1(
        DRA_KIND_CLAIM, DRA_API_V1BETA1,
        "{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\"},\"spec\":{\"devices\":{\"requests\":["
        "{\"name\":\"a\",\"deviceClassName\":\"gpu.nvidia.com\",\"allocationMode\":\"All\","
        "\"adminAccess\":true,\"selectors\":[{\"cel\":{\"expression\":\"true\"}}]},"
        "{\"name\":\"b\",\"firstAvailable\":[{\"name\":\"x\",\"deviceClassName\":\"big\"},"
        "{\"name\":\"y\",\"deviceClassName\":\"small\",\"count\":2}]},"
        "{\"name\":\"c\",\"exactly\":{\"deviceClassName\":\"e\"}}],"
        "\"constraints\":[{\"requests\":[\"a\"],\"matchAttribute\":\"d/x\"}]}},"
        "\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"a\",\"driver\":\"d\","
        "\"pool\":\"p\",\"device\":\"g\"}]}}}}");
    assert_string_equal(json_object_to_json_string_ext(
                            json_object_object_get(json_object_object_get(v1, "spec"), "devices"),
                            JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
                        "{\"requests\":[{\"name\":\"a\",\"exactly\":{\"deviceClassName\":\"gpu."
                        "nvidia.com\",\"allocationMode\":\"All\",\"adminAccess\":true,"
                        "\"selectors\":[{\"cel\":{\"expression\":\"true\"}}]}},{\"name\":\"b\","
                        "\"firstAvailable\":[{\"name\":\"x\",\"deviceClassName\":\"big\"},{"
                        "\"name\":\"y\",\"deviceClassName\":\"small\",\"count\":2}]},{\"name\":"
                        "\"c\",\"exactly\":{\"deviceClassName\":\"e\"}}],\"constraints\":[{"
                        "\"requests\":[\"a\"],\"matchAttribute\":\"d/x\"}]}");
    struct dra_claim c;
    assert_int_equal(project_dra_claim(v1, &c), K_OK);
    assert_int_equal(c.spec.n_requests, 3);
    assert_true(c.spec.requests[0].has_exactly);
    assert_int_equal(c.spec.requests[0].exactly.mode, DRA_MODE_ALL);
    assert_true(c.spec.requests[0].exactly.admin_access);
    assert_int_equal(c.spec.requests[0].exactly.n_selectors, 1);
    assert_int_equal(c.spec.requests[1].n_first_available, 2);
    assert_int_equal(c.spec.requests[1].first_available[1].count, 2);
    assert_string_equal(c.spec.requests[2].exactly.class_name, "e");
    assert_int_equal(c.n_results, 1);
    assert_string_equal(c.results[0].device, "g");
    dra_claim_cleanup(&c);
    json_object_put(v1);

    /* a template: spec.spec */
    v1 = as_v1(DRA_KIND_TEMPLATE, DRA_API_V1BETA1,
               "{\"metadata\":{\"name\":\"t\",\"namespace\":\"ns\"},\"spec\":{\"metadata\":{},"
               "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"deviceClassName\":"
               "\"gpu.nvidia.com\"}]}}}}");
    struct dra_template t;
    assert_int_equal(project_dra_template(v1, &t), K_OK);
    assert_true(t.spec.requests[0].has_exactly);
    assert_string_equal(t.spec.requests[0].exactly.class_name, "gpu.nvidia.com");
    assert_int_equal(t.spec.requests[0].exactly.count, 1);
    dra_template_cleanup(&t);
    json_object_put(v1);
}

static void test_v1beta1_device(void **state)
{
    (void)state;
    json_object *v1 = as_v1(
        DRA_KIND_SLICE, DRA_API_V1BETA1,
        "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":"
        "\"n\",\"pool\":{\"name\":\"n\",\"generation\":1,\"resourceSliceCount\":1},\"devices\":["
        "{\"name\":\"gpu-0\",\"basic\":{\"attributes\":{\"type\":{\"string\":\"gpu\"}},"
        "\"capacity\":{\"memory\":{\"value\":\"80Gi\"}}}},{\"name\":\"gpu-1\"}]}}");
    json_object *devs = json_object_object_get(json_object_object_get(v1, "spec"), "devices");
    assert_string_equal(json_object_to_json_string_ext(devs, JSON_C_TO_STRING_PLAIN |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE),
                        "[{\"name\":\"gpu-0\",\"attributes\":{\"type\":{\"string\":\"gpu\"}},"
                        "\"capacity\":{\"memory\":{\"value\":\"80Gi\"}}},{\"name\":\"gpu-1\"}]");
    struct dra_slice s;
    assert_int_equal(project_dra_slice(v1, &s), K_OK);
    assert_int_equal(s.n_devices, 2);
    assert_string_equal(s.devices[0].attrs[0].name, "gpu.nvidia.com/type");
    assert_string_equal(s.devices[0].caps[0].value, "80Gi");
    assert_int_equal(s.devices[1].n_attrs, 0);
    dra_slice_cleanup(&s);
    json_object_put(v1);
}

/* v1beta2 and v1 are read as they are: the same object, nothing copied; so is a class. */
static void test_unchanged(void **state)
{
    (void)state;
    json_object *o = json_tokener_parse(
        "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"a\","
        "\"deviceClassName\":\"x\"}]}}}");
    json_object *out = NULL;
    assert_int_equal(dra_json_as_v1(DRA_KIND_CLAIM, DRA_API_V1BETA2, o, &out), K_OK);
    assert_ptr_equal(out, o);
    json_object_put(out);
    assert_int_equal(dra_json_as_v1(DRA_KIND_CLAIM, DRA_API_V1, o, &out), K_OK);
    assert_ptr_equal(out, o);
    json_object_put(out);
    assert_int_equal(dra_json_as_v1(DRA_KIND_CLASS, DRA_API_V1BETA1, o, &out), K_OK);
    assert_ptr_equal(out, o);
    json_object_put(out);
    /* v1beta1: obj itself is left as it was */
    assert_int_equal(dra_json_as_v1(DRA_KIND_CLAIM, DRA_API_V1BETA1, o, &out), K_OK);
    assert_ptr_not_equal(out, o);
    assert_non_null(json_object_object_get(
        json_object_array_get_idx(
            json_object_object_get(
                json_object_object_get(json_object_object_get(o, "spec"), "devices"), "requests"),
            0),
        "deviceClassName"));
    json_object_put(out);
    /* odd shapes are left for the projection to judge */
    json_object_put(o);
    o = json_tokener_parse("{\"spec\":{\"devices\":7}}");
    assert_int_equal(dra_json_as_v1(DRA_KIND_SLICE, DRA_API_V1BETA1, o, &out), K_OK);
    assert_string_equal(json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE),
                        "{\"spec\":{\"devices\":7}}");
    json_object_put(out);
    json_object_put(o);
    assert_int_equal(dra_json_as_v1(DRA_KIND_SLICE, DRA_API_V1BETA1, NULL, &out), K_OK);
    assert_null(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recorded_versions), cmocka_unit_test(test_newer_shapes),
        cmocka_unit_test(test_v1beta1_request),   cmocka_unit_test(test_v1beta1_device),
        cmocka_unit_test(test_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
