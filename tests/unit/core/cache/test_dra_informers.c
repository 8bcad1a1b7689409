/*
 * test_dra_informers.c - core/cache/dra_informers.c: the DRA informers follow the version
 * discovery chose (v1beta1 -> v1 -> none -> v1beta2), list at its paths, read its layout into
 * the store, keep the store across a version change and clear it when DRA goes away; an API
 * server without DRA costs discovery GETs only. DeviceTaintRules follow their own version (the
 * newest that lists them: v1beta2 while the core kinds are at v1, as 1.36 with the gate and the
 * betas serves them, then v1, then none), switching their informer alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cache/dra_informers.h"
#include "cache/dra_store.h"
#include "fake_routes.h"
#include "util/result.h"

#define V(v) "{\"groupVersion\":\"resource.k8s.io/" v "\",\"version\":\"" v "\"}"
#define GROUP(versions)                                                                            \
    "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",\"name\":\"resource.k8s.io\",\"versions\":"      \
    "[" versions "]}"
#define LIST(items) "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[" items "]}"
#define SLICE_V1BETA1                                                                              \
    "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"n\","   \
    "\"pool\":{\"name\":\"n\",\"generation\":1,\"resourceSliceCount\":1},\"devices\":[{\"name\":"  \
    "\"gpu-0\",\"basic\":{\"attributes\":{\"type\":{\"string\":\"gpu\"}}}}]}}"
#define SLICE_V1                                                                                   \
    "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"n\","   \
    "\"pool\":{\"name\":\"n\",\"generation\":2,\"resourceSliceCount\":1},\"devices\":[{\"name\":"  \
    "\"gpu-0\",\"attributes\":{\"type\":{\"string\":\"gpu\"}}}]}}"

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void wait_synced(struct dra_informers *w)
{
    while (!dra_informers_synced(w)) /* bounded by ctest's timeout */
        sleep_ms(10);
}

/* The one slice's first device: its attribute count, and the pool generation, under the lock. */
static int64_t slice_generation(struct dra_store *ds, size_t *n_attrs)
{
    dra_store_read_lock(ds);
    const struct dra_slice *buf[1];
    size_t n = dra_store_node_slices(ds, "n", NULL, buf, 1);
    int64_t g = n == 1 ? buf[0]->generation : -1;
    *n_attrs = n == 1 && buf[0]->n_devices == 1 ? buf[0]->devices[0].n_attrs : 0;
    dra_store_read_unlock(ds);
    return g;
}

static void set_lists(struct fake_routes *api, const char *v, const char *slices)
{
    char prefix[128];
    static const char *const kinds[] = {"resourceclaims", "resourceclaimtemplates",
                                        "deviceclasses"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(prefix, sizeof(prefix), "/apis/resource.k8s.io/%s/%s", v, kinds[i]);
        fake_routes_set(api, prefix, 200, LIST(""));
    }
    snprintf(prefix, sizeof(prefix), "/apis/resource.k8s.io/%s/resourceslices", v);
    fake_routes_set(api, prefix, 200, slices);
}

/* Informers of the first `kinds` kinds over `api` feeding a new store (*ds) through feeds[];
 * discovery every interval_ms (0: the default). */
static struct dra_informers *new_informers_of(struct fake_routes *api, int kinds,
                                              struct dra_store_feed feeds[DRA_KIND_COUNT],
                                              int64_t interval_ms, struct dra_store **ds)
{
    *ds = dra_store_new();
    assert_non_null(*ds);
    struct informer_handlers h[DRA_KIND_COUNT] = {0};
    for (int k = 0; k < kinds; k++) {
        feeds[k] = (struct dra_store_feed){*ds, (enum dra_kind)k};
        h[k] = dra_store_handlers(&feeds[k]);
    }
    struct dra_informers_options o = {.discovery_transport = &api->transport,
                                      .transport = &api->transport,
                                      .discovery_ms = interval_ms};
    struct dra_informers *w = dra_informers_new(&api->cfg, *ds, h, &o);
    assert_non_null(w);
    return w;
}

/* Informers of every kind (new_informers_of). */
static struct dra_informers *new_informers(struct fake_routes *api,
                                           struct dra_store_feed feeds[DRA_KIND_COUNT],
                                           int64_t interval_ms, struct dra_store **ds)
{
    return new_informers_of(api, DRA_KIND_COUNT, feeds, interval_ms, ds);
}

static void test_follow_versions(void **state)
{
    (void)state;
    struct fake_routes api;
    fake_routes_init(&api);
    struct dra_store_feed feeds[DRA_KIND_COUNT];
    struct dra_store *ds;
    struct dra_informers *w = new_informers(&api, feeds, 0, &ds);
    assert_int_equal(dra_informers_version(w), DRA_API_NONE);
    assert_false(dra_informers_synced(w));

    /* 1.32: v1beta1 */
    fake_routes_set(&api, "/apis/resource.k8s.io", 200, GROUP(V("v1beta1") "," V("v1alpha3")));
    set_lists(&api, "v1beta1", LIST(SLICE_V1BETA1));
    unsigned g0 = dra_informers_generation(w);
    assert_int_equal(dra_informers_check(w), K_OK);
    assert_int_equal(dra_informers_version(w), DRA_API_V1BETA1);
    assert_int_not_equal(dra_informers_generation(w), g0);
    wait_synced(w);
    size_t na;
    assert_int_equal(slice_generation(ds, &na), 1);
    assert_int_equal(na, 1); /* the attribute inside `basic` */
    assert_int_equal(dra_store_api_version(ds), DRA_API_V1BETA1);
    assert_true(fake_routes_count(&api, "/apis/resource.k8s.io/v1beta1/resourceslices") >= 1);
    assert_true(fake_routes_count(&api, "/apis/resource.k8s.io/v1beta1/resourceclaimtemplates") >=
                1);

    /* the API server upgraded: v1. The store keeps the slice until the relist replaces it. */
    unsigned g1 = dra_informers_generation(w);
    fake_routes_set(&api, "/apis/resource.k8s.io", 200,
                    GROUP(V("v1") "," V("v1beta2") "," V("v1beta1")));
    set_lists(&api, "v1", LIST(SLICE_V1));
    assert_int_equal(dra_informers_check(w), K_OK);
    assert_int_equal(dra_informers_version(w), DRA_API_V1);
    assert_int_not_equal(dra_informers_generation(w), g1);
    wait_synced(w);
    while (slice_generation(ds, &na) != 2) /* the relist's sync_end came before synced */
        sleep_ms(10);
    assert_int_equal(na, 1);
    assert_true(fake_routes_count(&api, "/apis/resource.k8s.io/v1/deviceclasses") >= 1);

    /* the same answer: nothing changes */
    unsigned g2 = dra_informers_generation(w);
    assert_int_equal(dra_informers_check(w), K_OK);
    assert_int_equal(dra_informers_generation(w), g2);
    assert_true(dra_informers_synced(w));

    /* DRA turned off: no informer; no kind of the store is synced (its objects stay) */
    fake_routes_set(&api, "/apis/resource.k8s.io", 0, NULL);
    assert_int_equal(dra_informers_check(w), K_OK);
    assert_int_equal(dra_informers_version(w), DRA_API_NONE);
    assert_false(dra_informers_synced(w));
    dra_store_read_lock(ds);
    for (int k = 0; k < DRA_KIND_COUNT; k++)
        assert_false(dra_store_synced(ds, (enum dra_kind)k));
    dra_store_read_unlock(ds);
    /* and nothing but discovery is asked from now on */
    fake_routes_forget(&api);
    assert_int_equal(dra_informers_check(w), K_OK);
    sleep_ms(50);
    assert_int_equal(fake_routes_count(&api, "/apis/"), 1);
    assert_int_equal(fake_routes_count(&api, "/apis/resource.k8s.io/"), 0);

    dra_informers_free(w);
    dra_store_free(ds);
    fake_routes_cleanup(&api);
}

#define RULE                                                                                       \
    "{\"metadata\":{\"name\":\"r\"},\"spec\":{\"deviceSelector\":{\"pool\":\"n\"},"                \
    "\"taint\":{\"key\":\"maintenance\",\"effect\":\"NoSchedule\"}}}"
#define RESOURCES(names) "{\"kind\":\"APIResourceList\",\"resources\":[" names "]}"
#define RES(name) "{\"name\":\"" name "\"}"

/* What the DeviceTaintRule tests run on: informers of the first `kinds` kinds over a fake API. */
struct rig {
    struct fake_routes api;
    struct dra_store_feed feeds[DRA_KIND_COUNT];
    struct dra_store *ds;
    struct dra_informers *w;
};

static void rig_up(struct rig *r, int kinds)
{
    fake_routes_init(&r->api);
    r->w = new_informers_of(&r->api, kinds, r->feeds, 0, &r->ds);
}

static void rig_down(struct rig *r)
{
    dra_informers_free(r->w);
    dra_store_free(r->ds);
    fake_routes_cleanup(&r->api);
}

static size_t rules_in_store(struct dra_store *ds)
{
    dra_store_read_lock(ds);
    size_t n = dra_store_count(ds, DRA_KIND_TAINT_RULE);
    dra_store_read_unlock(ds);
    return n;
}

static void test_taint_rules_own_version(void **state)
{
    (void)state;
    struct rig r;
    rig_up(&r, DRA_KIND_COUNT);
    struct fake_routes *api = &r.api;
    struct dra_store *ds = r.ds;
    struct dra_informers *w = r.w;
    /* 1.36 with DRADeviceTaintRules and the betas: the core kinds at v1, the rules at v1beta2 */
    fake_routes_set(api, "/apis/resource.k8s.io", 200,
                    GROUP(V("v1") "," V("v1beta2") "," V("v1beta1")));
    fake_routes_set(api, "/apis/resource.k8s.io/v1", 200, RESOURCES(RES("resourceslices")));
    fake_routes_set(api, "/apis/resource.k8s.io/v1beta2", 200,
                    RESOURCES(RES("resourceslices") "," RES("devicetaintrules")));
    fake_routes_set(api, "/apis/resource.k8s.io/v1beta2/devicetaintrules", 200, LIST(RULE));
    set_lists(api, "v1", LIST(SLICE_V1));
    assert_int_equal(dra_informers_check(w), K_OK);
    assert_int_equal(dra_informers_version(w), DRA_API_V1);
    wait_synced(w);
    while (rules_in_store(ds) != 1)
        sleep_ms(10);
    assert_int_equal(dra_store_kind_version(ds, DRA_KIND_TAINT_RULE), DRA_API_V1BETA2);
    assert_int_equal(dra_store_kind_version(ds, DRA_KIND_SLICE), DRA_API_V1);
    assert_int_equal(fake_routes_count(api, "/apis/resource.k8s.io/v1/devicetaintrules"), 0);
    assert_int_equal(fake_routes_count(api, "/apis/resource.k8s.io/v1beta1"), 0);

    /* the same answer: nothing changes */
    unsigned g = dra_informers_generation(w);
    assert_int_equal(dra_informers_check(w), K_OK);
    assert_int_equal(dra_informers_generation(w), g);

    /* 1.37: v1 lists them; the rules' informer alone switches, the store keeps the rule */
    fake_routes_set(api, "/apis/resource.k8s.io/v1", 200,
                    RESOURCES(RES("resourceslices") "," RES("devicetaintrules")));
    fake_routes_set(api, "/apis/resource.k8s.io/v1/devicetaintrules", 200, LIST(RULE));
    fake_routes_forget(api);
    assert_int_equal(dra_informers_check(w), K_OK);
    assert_int_not_equal(dra_informers_generation(w), g);
    assert_int_equal(dra_informers_version(w), DRA_API_V1);
    assert_int_equal(dra_store_kind_version(ds, DRA_KIND_TAINT_RULE), DRA_API_V1);
    assert_int_equal(rules_in_store(ds), 1);
    wait_synced(w);
    while (fake_routes_count(api, "/apis/resource.k8s.io/v1/devicetaintrules") == 0)
        sleep_ms(10);
    assert_int_equal(fake_routes_count(api, "/apis/resource.k8s.io/v1beta2"), 0);

    /* served nowhere any more: the informer goes, and so does the rule */
    fake_routes_set(api, "/apis/resource.k8s.io/v1", 200, RESOURCES(RES("resourceslices")));
    fake_routes_set(api, "/apis/resource.k8s.io/v1beta2", 200, RESOURCES(RES("resourceslices")));
    assert_int_equal(dra_informers_check(w), K_OK);
    assert_int_equal(dra_informers_version(w), DRA_API_V1);
    assert_int_equal(rules_in_store(ds), 0);
    assert_true(dra_informers_synced(w));
    size_t na;
    assert_int_equal(slice_generation(ds, &na), 2); /* the core kinds untouched */

    rig_down(&r);
}

/* An owner that does not read DeviceTaintRules (the webhook) asks nothing about them. */
static void test_no_rules_no_questions(void **state)
{
    (void)state;
    struct rig r;
    rig_up(&r, DRA_KIND_CORE_COUNT);
    fake_routes_set(&r.api, "/apis/resource.k8s.io", 200, GROUP(V("v1") "," V("v1beta2")));
    fake_routes_set(&r.api, "/apis/resource.k8s.io/v1beta2", 200,
                    RESOURCES(RES("devicetaintrules")));
    set_lists(&r.api, "v1", LIST(SLICE_V1));
    assert_int_equal(dra_informers_check(r.w), K_OK);
    wait_synced(r.w);
    assert_int_equal(fake_routes_count(&r.api, "/apis/resource.k8s.io/v1beta2"), 0);
    assert_int_equal(fake_routes_count(&r.api, "devicetaintrules"), 0);
    rig_down(&r);
}

/* Started: the thread checks again soon after an informer's 404 (DRA_INFORMERS_POKE_MS). */
static void test_thread_and_poke(void **state)
{
    (void)state;
    struct fake_routes api;
    fake_routes_init(&api);
    struct dra_store_feed feeds[DRA_KIND_COUNT];
    struct dra_store *ds;
    struct dra_informers *w = new_informers(&api, feeds, 3600 * 1000, &ds);
    fake_routes_set(&api, "/apis/resource.k8s.io", 200, GROUP(V("v1beta2")));
    set_lists(&api, "v1beta2", LIST(""));
    assert_int_equal(dra_informers_start(w, false), K_OK); /* the first check, on the thread */
    while (dra_informers_version(w) != DRA_API_V1BETA2)
        sleep_ms(10);
    wait_synced(w);
    /* the version goes away: the watches' relists get 404, which pokes discovery */
    fake_routes_set(&api, "/apis/resource.k8s.io", 0, NULL);
    for (int k = 0; k < DRA_KIND_COUNT; k++) {
        char prefix[128];
        snprintf(prefix, sizeof(prefix), "/apis/resource.k8s.io/v1beta2/%s",
                 dra_kind_name((enum dra_kind)k));
        fake_routes_set(&api, prefix, 0, NULL);
    }
    while (dra_informers_version(w) != DRA_API_NONE) /* within about DRA_INFORMERS_POKE_MS */
        sleep_ms(50);
    dra_informers_stop(w);
    dra_informers_stop(w); /* idempotent */
    dra_informers_free(w);
    dra_store_free(ds);
    fake_routes_cleanup(&api);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_follow_versions),
        cmocka_unit_test(test_thread_and_poke),
        cmocka_unit_test(test_taint_rules_own_version),
        cmocka_unit_test(test_no_rules_no_questions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
