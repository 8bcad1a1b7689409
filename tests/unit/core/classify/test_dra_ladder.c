/*
 * test_dra_ladder.c - the DRA steps of the ladder (core/classify/classify.c, dra_ladder.c),
 * driven by the fixtures in tests/fixtures/dra/ (format: tests/fixtures/dra/README.md): recorded
 * ones from the DRA lab on the real control plane, and hand-written allocator cases
 * (hand-*.json).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "cel/cel.h"
#include "classify/classify.h"
#include "classify_world.h"
#include "dra_world.h"
#include "gpus.h"
#include "kube/project.h"
#include "model/dra.h"
#include "objects.h"
#include "util/clock.h"
#include "util/result.h"

static const struct dra_claim *w_claim(void *ctx, const char *ns, const char *name)
{
    const struct dra_world *w = ctx;
    for (size_t i = 0; i < w->n_claims; i++)
        if (strcmp(w->claims[i].name, name) == 0 &&
            strcmp(w->claims[i].ns ? w->claims[i].ns : "", ns) == 0)
            return &w->claims[i];
    return NULL;
}

static const struct dra_template *w_template(void *ctx, const char *ns, const char *name)
{
    const struct dra_world *w = ctx;
    for (size_t i = 0; i < w->n_templates; i++)
        if (strcmp(w->templates[i].name, name) == 0 &&
            strcmp(w->templates[i].ns ? w->templates[i].ns : "", ns) == 0)
            return &w->templates[i];
    return NULL;
}

static const struct dra_class *w_class(void *ctx, const char *name)
{
    const struct dra_world *w = ctx;
    for (size_t i = 0; i < w->n_classes; i++)
        if (strcmp(w->classes[i].name, name) == 0)
            return &w->classes[i];
    return NULL;
}

/* The class serving an extended resource, as the store picks it (dra_store_extended_class). */
static const struct dra_class *w_extended_class(void *ctx, const char *resource)
{
    const struct dra_world *w = ctx;
    const struct dra_class *best = NULL;
    for (size_t i = 0; i < w->n_classes; i++)
        if (dra_extended_class_serves(&w->classes[i], resource) &&
            dra_extended_class_wins(&w->classes[i], best))
            best = &w->classes[i];
    return best;
}

/* A superset on purpose: every slice of the driver; classify applies node selection. */
static size_t w_slices(void *ctx, const char *node, const char *driver,
                       const struct dra_slice **buf, size_t cap)
{
    const struct dra_world *w = ctx;
    (void)node;
    size_t n = 0;
    for (size_t i = 0; i < w->n_slices; i++)
        if (!driver || strcmp(w->slices[i].driver, driver) == 0) {
            if (n < cap)
                buf[n] = &w->slices[i];
            n++;
        }
    return n;
}

static const struct dra_claim *w_holder(void *ctx, const char *driver, const char *pool,
                                        const char *device)
{
    const struct dra_world *w = ctx;
    for (size_t i = 0; i < w->n_claims; i++)
        for (size_t j = 0; j < w->claims[i].n_results; j++) {
            const struct dra_result *r = &w->claims[i].results[j];
            if (!r->admin_access && !r->share_id && strcmp(r->driver, driver) == 0 &&
                strcmp(r->pool, pool) == 0 && strcmp(r->device, device) == 0)
                return &w->claims[i];
        }
    return NULL;
}

static size_t w_shares(void *ctx, const char *driver, const char *pool, const char *device,
                       const struct dra_claim **buf, size_t cap)
{
    const struct dra_world *w = ctx;
    size_t n = 0;
    for (size_t i = 0; i < w->n_claims; i++)
        for (size_t j = 0; j < w->claims[i].n_results; j++) {
            const struct dra_result *r = &w->claims[i].results[j];
            if (!r->admin_access && r->share_id && strcmp(r->driver, driver) == 0 &&
                strcmp(r->pool, pool) == 0 && strcmp(r->device, device) == 0) {
                if (n < cap)
                    buf[n] = &w->claims[i];
                n++;
                break;
            }
        }
    return n;
}

static int64_t w_usage(void *ctx, const char *node, const char *resource)
{
    const struct dra_world *w = ctx;
    int64_t sum = 0;
    for (size_t i = 0; i < w->n_pods; i++)
        if (w->pods[i].node_name && strcmp(w->pods[i].node_name, node) == 0 &&
            !pod_is_terminal(&w->pods[i]))
            sum += resource_list_get(&w->pods[i].gpu_requests, resource);
    return sum;
}

/*
 * The CEL budget (classify.h DRA_CEL_MAX_STEPS, dra_view.cel_budget) on one fixture: an
 * unbounded one changes nothing; with fewer steps than the classification takes, the answer is
 * the same or its detail says the selectors were too costly to check (never a verdict resting
 * on a selector not evaluated). Counts in *costly the runs that said so.
 */
static int check_budgets(const char *path, const struct classify_input *in,
                         const struct classify_result *full, size_t *costly)
{
    int failures = 0;
    struct cel_budget b;
    cel_budget_init(&b, UINT64_MAX);
    struct dra_view view = *in->dra;
    view.cel_budget = &b;
    struct classify_input bin = *in;
    bin.dra = &view;
    struct classify_result r = {0};
    assert_int_equal(classify(&bin, &r), K_OK);
    if (r.cause != full->cause || strcmp(r.detail, full->detail) != 0) {
        print_error("%s: with an unbounded CEL budget: %s: %s\n", path, cause_word(r.cause),
                    r.detail);
        failures++;
    }
    uint64_t spent = b.spent;
    const uint64_t tries[] = {0, spent / 3, spent / 2, spent ? spent - 1 : 0};
    for (size_t t = 0; t < sizeof(tries) / sizeof(tries[0]); t++) {
        cel_budget_init(&b, tries[t]);
        memset(&r, 0, sizeof(r));
        assert_int_equal(classify(&bin, &r), K_OK);
        if (r.cause == full->cause && strcmp(r.detail, full->detail) == 0)
            continue;
        if (!strstr(r.detail, CEL_TOO_COSTLY)) {
            print_error("%s: with %llu of %llu CEL steps: %s: %s\n", path,
                        (unsigned long long)tries[t], (unsigned long long)spent,
                        cause_word(r.cause), r.detail);
            failures++;
            continue;
        }
        (*costly)++;
    }
    return failures;
}

static int run_fixture(const char *path, void *ctx)
{
    size_t *costly = ctx;
    json_object *root = json_object_from_file(path);
    if (!root) {
        print_error("%s: not JSON\n", path);
        return 1;
    }
    struct dra_world w;
    char err[256];
    if (dra_world_load(root, &test_gpus, &w, err, sizeof(err)) != 0) {
        print_error("%s: %s\n", path, err);
        json_object_put(root);
        return 1;
    }
    int failures = 0;
    struct node_verdict *verdicts = calloc(w.n_nodes + 1, sizeof(*verdicts));
    assert_non_null(verdicts);
    struct dra_view view = {
        .gpu_classes = &w.dra_gpus,
        .ctx = &w,
        .claim = w_claim,
        .claim_template = w_template,
        .device_class = w_class,
        .node_slices = w_slices,
        .device_holder = w_holder,
        .device_shares = w_shares,
        .device_taint_rules = dra_world_taint_rules,
        .extended_class = w_extended_class,
    };
    struct classify_input in = {
        .pod = &w.pod,
        .nodes = w.node_ptrs,
        .n_nodes = w.n_nodes,
        .usage = w_usage,
        .usage_ctx = &w,
        .dra = &view,
    };
    /* "now" (RFC 3339; binding fixtures: the time of the snapshot) and the pods being deleted on
     * the nominated node, as core/triage/triage.c triage_fill_facts finds them */
    json_object *now = NULL;
    if (json_object_object_get_ex(root, "now", &now))
        assert_true(clock_parse_rfc3339(json_object_get_string(now), &in.now));
    const char *victims[8];
    for (size_t i = 0; w.pod.nominated_node && i < w.n_pods; i++) {
        const struct kpod *p = &w.pods[i];
        if (!p->node_name || strcmp(p->node_name, w.pod.nominated_node) != 0 || !p->deleting ||
            pod_is_terminal(p))
            continue;
        if (in.n_victims < sizeof(victims) / sizeof(victims[0]))
            victims[in.n_victims++] = p->name;
        in.victims_total++;
    }
    in.victims = victims;
    struct classify_result res = {.verdicts = verdicts};
    assert_int_equal(classify(&in, &res), K_OK);

    json_object *expect = NULL, *want = NULL, *contains = NULL;
    json_object_object_get_ex(root, "expect", &expect);
    json_object_object_get_ex(expect, "cause", &want);
    json_object_object_get_ex(expect, "detail_contains", &contains);
    const char *got = cause_word(res.cause);
    failures += classify_check_expect(path, &res, want, contains);
    failures += classify_check_counts(path, &res);
    if (cause_rank(res.cause) > cause_rank(CAUSE_LABEL_MISMATCH) &&
        (!res.closest.node || res.closest.step != res.cause)) {
        print_error("%s: closest verdict does not carry the cause\n", path);
        failures++;
    }
    /* a DRA cause per node is carried by the deciding verdict, with its numbers */
    if ((res.cause == CAUSE_DRA_NO_DRIVER || res.cause == CAUSE_DRA_NO_MATCH ||
         res.cause == CAUSE_DRA_TAINTED || res.cause == CAUSE_DRA_EXHAUSTED) &&
        (res.closest.dra_step != res.cause || !res.closest.dra_request)) {
        print_error("%s: closest verdict lacks the DRA step\n", path);
        failures++;
    }
    if (res.cause == CAUSE_DRA_EXHAUSTED && res.closest.dra_free >= res.closest.dra_matching &&
        res.closest.dra_matching > 0 && res.closest.dra_wanted <= (int64_t)res.closest.dra_free &&
        !strstr(res.detail, "together the pod's requests ask more devices")) {
        print_error("%s: exhausted, yet %zu of %zu matching devices free\n", path,
                    res.closest.dra_free, res.closest.dra_matching);
        failures++;
    }
    failures += check_budgets(path, &in, &res, costly);
    /* without the view the pod is classified as before DRA */
    struct classify_input plain = in;
    plain.dra = NULL;
    struct classify_result r2 = {0};
    assert_int_equal(classify(&plain, &r2), K_OK);
    if (w.pod.gpu_requests.n == 0 && r2.cause != CAUSE_NO_REQUEST) {
        print_error("%s: without a DRA view got %s\n", path, cause_word(r2.cause));
        failures++;
    }
    if (res.cause == CAUSE_DRA_TAINTED && res.closest.dra_tainted == 0) {
        print_error("%s: dra-tainted without a tainted device\n", path);
        failures++;
    }
    printf("  %-48s %-20s %s\n", strrchr(path, '/') + 1, got, res.detail);
    free(verdicts);
    dra_world_cleanup(&w);
    json_object_put(root);
    return failures;
}

static void test_fixtures(void **state)
{
    (void)state;
    size_t n, costly = 0;
    int failures = test_fixtures_each(FIXTURES_DIR, "dra", run_fixture, &costly, &n);
    assert_true(n >= 12);
    assert_int_equal(failures, 0);
    /* some fixtures need their selectors for the verdict */
    assert_true(costly >= 10);
}

static void test_words(void **state)
{
    (void)state;
    const char *words[] = {"dra-template-missing", "dra-claim-missing", "dra-class-missing",
                           "dra-no-driver",        "dra-no-match",      "dra-tainted",
                           "dra-exhausted"};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        int c = cause_from_word(words[i]);
        assert_true(c >= 0);
        assert_true(cause_is_blocking((enum cause)c));
        assert_string_not_equal(cause_event_reason((enum cause)c), "Unknown");
    }
    /* the ladder order */
    assert_true(cause_rank(CAUSE_OK) < cause_rank(CAUSE_DRA_TEMPLATE_MISSING));
    assert_true(cause_rank(CAUSE_DRA_CLASS_MISSING) < cause_rank(CAUSE_LABEL_MISMATCH));
    assert_true(cause_rank(CAUSE_EXHAUSTED) < cause_rank(CAUSE_DRA_NO_DRIVER));
    assert_true(cause_rank(CAUSE_DRA_NO_MATCH) < cause_rank(CAUSE_DRA_TAINTED));
    assert_true(cause_rank(CAUSE_DRA_TAINTED) < cause_rank(CAUSE_DRA_EXHAUSTED));
    assert_true(cause_rank(CAUSE_DRA_EXHAUSTED) < cause_rank(CAUSE_GPU_FITS));
    assert_string_equal(cause_event_reason(CAUSE_DRA_TAINTED), "DRADeviceTainted");
    assert_int_equal(cause_rank(CAUSE_COUNT), -1);
}

/* A view that serves nothing: claims cannot be inspected, and pods without claims are as before. */
static void test_empty_view(void **state)
{
    (void)state;
    struct gpu_set set;
    assert_int_equal(gpu_set_parse(&set, DRA_GPU_SET_DEFAULT), K_OK);
    struct dra_view view = {.gpu_classes = &set};
    json_object *o = json_tokener_parse(
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u\"},\"spec\":{"
        "\"containers\":[{\"name\":\"c\"}],\"resourceClaims\":[{\"name\":\"g\","
        "\"resourceClaimTemplateName\":\"t\"}]}}");
    assert_non_null(o);
    struct kpod pod;
    assert_int_equal(project_pod(o, &test_gpus, &pod), K_OK);
    json_object_put(o);
    struct classify_input in = {.pod = &pod, .dra = &view};
    struct classify_result res = {0};
    assert_int_equal(classify(&in, &res), K_OK);
    assert_int_equal(res.cause, CAUSE_DRA_TEMPLATE_MISSING);
    assert_non_null(strstr(res.detail, "names no ResourceClaimTemplate in namespace ns"));
    /* no view: not a GPU pod */
    in.dra = NULL;
    assert_int_equal(classify(&in, &res), K_OK);
    assert_int_equal(res.cause, CAUSE_NO_REQUEST);
    assert_string_equal(res.detail, "no container requests a GPU resource");
    pod_cleanup(&pod);
    /* a pod without claims, with a view: unchanged */
    struct kpod plain = {.name = "q"};
    in.pod = &plain;
    in.dra = &view;
    assert_int_equal(classify(&in, &res), K_OK);
    assert_int_equal(res.cause, CAUSE_NO_REQUEST);
    assert_string_equal(res.detail, "no container requests a GPU resource");
    gpu_set_cleanup(&set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_words),
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_empty_view),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
