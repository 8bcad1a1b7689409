/*
 * test_dra_layout.c - core/kube/dra_layout.c: DRA objects read at v1beta1 and v1beta2 in the
 * layout of v1. The fixtures tests/fixtures/dra-versions/<release>/<version>.json are the DRA
 * lab's objects as each release's API server serves them at each version it serves
 * (tests/fixtures/record-dra-versions); projected through dra_json_as_v1() and project_dra_*,
 * every version of a release must give the same records, and every release the same records as
 * the reference (1.34.4 at v1) for the objects written by hand (classes, slices, templates).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void put_exact(struct text *t, const struct dra_exact *e)
{
    put(t, "{%s class=%s mode=%d count=%lld admin=%d sel=[", S(e->name), S(e->class_name),
        (int)e->mode, (long long)e->count, e->admin_access);
    for (size_t i = 0; i < e->n_selectors; i++)
        put(t, "%s;", e->selectors[i]);
    put(t, "]}");
}

static void put_spec(struct text *t, const struct dra_claim_spec *s)
{
    for (size_t i = 0; i < s->n_requests; i++) {
        const struct dra_request *r = &s->requests[i];
        put(t, " req %s", S(r->name));
        if (r->has_exactly)
            put_exact(t, &r->exactly);
        for (size_t j = 0; j < r->n_first_available; j++)
            put_exact(t, &r->first_available[j]);
    }
    for (size_t i = 0; i < s->n_constraints; i++)
        put(t, " constraint %s", S(s->constraints[i].match_attribute));
}

/* One object of `kind` read at `v`, as text; `with_names`: claims with their names (which the
 * API server generates, so only within one recording). */
static void put_object(struct text *t, enum dra_kind kind, enum dra_api_version v, json_object *obj,
                       bool with_names)
{
    json_object *v1 = NULL;
    assert_int_equal(dra_json_as_v1(kind, v, obj, &v1), K_OK);
    switch (kind) {
    case DRA_KIND_CLASS: {
        struct dra_class c;
        assert_int_equal(project_dra_class(v1, &c), K_OK);
        put(t, "class %s driver=%s sel=%zu\n", c.name, S(c.driver), c.n_selectors);
        dra_class_cleanup(&c);
        break;
    }
    case DRA_KIND_SLICE: {
        struct dra_slice s;
        assert_int_equal(project_dra_slice(v1, &s), K_OK);
        put(t, "slice %s %s pool=%s/%lld/%lld node=%s all=%d\n", s.name, s.driver, s.pool,
            (long long)s.generation, (long long)s.slice_count, S(s.node_name), s.all_nodes);
        for (size_t i = 0; i < s.n_devices; i++) {
            const struct dra_device *d = &s.devices[i];
            put(t, "  device %s", d->name);
            for (size_t j = 0; j < d->n_attrs; j++)
                put(t, " %s=%d:%d:%lld:%s", d->attrs[j].name, (int)d->attrs[j].kind, d->attrs[j].b,
                    (long long)d->attrs[j].i, S(d->attrs[j].s));
            for (size_t j = 0; j < d->n_caps; j++)
                put(t, " %s=%s", d->caps[j].name, d->caps[j].value);
            put(t, "\n");
        }
        dra_slice_cleanup(&s);
        break;
    }
    case DRA_KIND_TEMPLATE: {
        struct dra_template tp;
        assert_int_equal(project_dra_template(v1, &tp), K_OK);
        put(t, "template %s/%s", tp.ns, tp.name);
        put_spec(t, &tp.spec);
        put(t, "\n");
        dra_template_cleanup(&tp);
        break;
    }
    default: {
        struct dra_claim c;
        assert_int_equal(project_dra_claim(v1, &c), K_OK);
        put(t, "claim %s pod-claim=%s owner=%d allocated=%d", with_names ? c.name : "",
            S(c.pod_claim_name), c.owner_pod_uid != NULL, c.allocated);
        put_spec(t, &c.spec);
        for (size_t i = 0; i < c.n_results; i++)
            put(t, " result %s %s/%s/%s", c.results[i].request, c.results[i].driver,
                c.results[i].pool, c.results[i].device);
        put(t, " reserved=%zu\n", c.n_reserved_for);
        dra_claim_cleanup(&c);
        break;
    }
    }
    json_object_put(v1);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of every object of `kind` in the file, sorted (claims' names vary between runs).
 * False when the file does not exist. */
static bool render(const char *release, const char *version, enum dra_kind kind, bool with_names,
                   struct text *out)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/dra-versions/%s/%s.json", FIXTURES_DIR, release, version);
    json_object *root = json_object_from_file(path);
    if (!root)
        return false;
    json_object *items = NULL;
    assert_true(json_object_object_get_ex(root, dra_kind_name(kind), &items));
    size_t n = json_object_array_length(items);
    char **lines = calloc(n ? n : 1, sizeof(*lines));
    assert_non_null(lines);
    for (size_t i = 0; i < n; i++) {
        struct text *one = calloc(1, sizeof(*one));
        assert_non_null(one);
        put_object(one, kind, dra_api_version_parse(version), json_object_array_get_idx(items, i),
                   with_names);
        lines[i] = strdup(one->buf);
        free(one);
    }
    qsort(lines, n, sizeof(*lines), cmp_str);
    out->n = 0;
    out->buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        put(out, "%s", lines[i]);
        free(lines[i]);
    }
    free(lines);
    json_object_put(root);
    return true;
}

/* ---- the recordings ------------------------------------------------------------------------ */

static const char *const RELEASES[] = {"1.34.4-betas", "1.37.2", "1.33.13", "1.32.13"};
static const char *const VERSIONS[] = {"v1", "v1beta2", "v1beta1"};
#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_recorded_versions(void **state)
{
    (void)state;
    struct text *ref = calloc(1, sizeof(*ref)), *got = calloc(1, sizeof(*got));
    assert_non_null(ref);
    assert_non_null(got);
    size_t compared = 0;
    for (int k = 0; k < DRA_KIND_CORE_COUNT; k++) { /* DeviceTaintRules: not recorded */
        bool names = k == DRA_KIND_CLAIM;
        /* the reference: 1.34.4 at v1 (hand-written objects: the same in every release) */
        assert_true(render("1.34.4-betas", "v1", (enum dra_kind)k, names, ref));
        assert_true(ref->n > 0);
        for (size_t r = 0; r < N(RELEASES); r++) {
            struct text *first = calloc(1, sizeof(*first));
            assert_non_null(first);
            bool have_first = false;
            for (size_t v = 0; v < N(VERSIONS); v++) {
                if (!render(RELEASES[r], VERSIONS[v], (enum dra_kind)k, names, got))
                    continue;
                compared++;
                if (!have_first) {
                    memcpy(first, got, sizeof(*got));
                    have_first = true;
                } else if (strcmp(first->buf, got->buf) != 0) { /* one release, one truth */
                    fail_msg("%s %s at %s differs from %s:\n%s\n---\n%s", RELEASES[r],
                             dra_kind_name((enum dra_kind)k), VERSIONS[v], VERSIONS[0], got->buf,
                             first->buf);
                }
            }
            if (have_first && k != DRA_KIND_CLAIM && strcmp(first->buf, ref->buf) != 0)
                fail_msg("%s %s differ from 1.34.4's:\n%s\n---\n%s", RELEASES[r],
                         dra_kind_name((enum dra_kind)k), first->buf, ref->buf);
            free(first);
        }
    }
    assert_true(compared >= 3 * DRA_KIND_CORE_COUNT); /* 1.34.4 at least, at three versions */
    free(ref);
    free(got);
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
        cmocka_unit_test(test_recorded_versions),
        cmocka_unit_test(test_v1beta1_request),
        cmocka_unit_test(test_v1beta1_device),
        cmocka_unit_test(test_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
