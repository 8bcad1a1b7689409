/*
 * Tests for webhook/warnings_dra.c over core's DRA store (core/cache/dra_store.h): a DRA kind
 * that is not synced (resource.k8s.io/v1 not served, or not listed yet) turns off the checks
 * that read it; a driver publishing only slices with per-device node selection still publishes;
 * the work budget per object and the CEL budget. The checks' answers on whole reviews are in
 * test_admission.c (tests/fixtures/admission/dra_*.json).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/clock.h"
#include "cache/dra_store.h"
#include "gpus.h"
#include "model/gpu.h"
#include "util/result.h"
#include "warnings.h"

#define CLAIM_SPEC(cls)                                                                            \
    "{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"g\",\"exactly\":{\"deviceClassName\":"      \
    "\"" cls "\",\"count\":2}}]}}}"

static json_object *parse(const char *js)
{
    json_object *o = json_tokener_parse(js);
    assert_non_null(o);
    return o;
}

static void apply(struct dra_store *ds, enum dra_kind kind, const char *js)
{
    json_object *o = parse(js);
    assert_int_equal(dra_store_apply_json(ds, kind, o, 0), K_OK);
    json_object_put(o);
}

/* The warnings a ResourceClaim of CLAIM_SPEC gets in namespace "ns"; their reasons joined. */
static void claim_reasons(const struct wh_snapshot *snap, const char *claim, char *out, size_t len)
{
    json_object *o = parse(claim);
    struct warn_list w;
    warn_list_init(&w);
    dra_store_read_lock(snap->dra);
    assert_int_equal(wh_check_dra_object(snap, "ns", o, false, DRA_API_V1, &w), K_OK);
    dra_store_read_unlock(snap->dra);
    out[0] = '\0';
    for (size_t i = 0; i < w.n; i++)
        snprintf(out + strlen(out), len - strlen(out), "%s%s", i ? "," : "", w.items[i].reason);
    json_object_put(o);
}

/* Until a kind has listed, nothing is said that depends on it: not served is not missing. */
static void test_unsynced_kinds_say_nothing(void **state)
{
    (void)state;
    struct dra_store *ds = dra_store_new();
    assert_non_null(ds);
    struct gpu_set dra = {0};
    assert_int_equal(gpu_set_parse(&dra, DRA_GPU_SET_DEFAULT), K_OK);
    struct wh_snapshot snap = {
        .gpus = &test_gpus, .nodes_synced = true, .dra_gpus = &dra, .dra = ds};
    char got[256];
    claim_reasons(&snap, CLAIM_SPEC("gpu.nvidia.com"), got, sizeof(got));
    assert_string_equal(got, ""); /* DeviceClasses never listed */
    assert_int_equal(dra_store_relist_items(ds, DRA_KIND_CLASS, NULL), K_OK);
    claim_reasons(&snap, CLAIM_SPEC("gpu.nvidia.com"), got, sizeof(got));
    assert_string_equal(got, WARN_REASON_DRA_CLASS);

    /* the class exists: its driver is judged only once slices have listed */
    apply(ds, DRA_KIND_CLASS,
          "{\"metadata\":{\"name\":\"gpu.nvidia.com\"},\"spec\":{\"selectors\":[{\"cel\":{"
          "\"expression\":\"device.driver == 'gpu.nvidia.com'\"}}]}}");
    claim_reasons(&snap, CLAIM_SPEC("gpu.nvidia.com"), got, sizeof(got));
    assert_string_equal(got, "");
    assert_int_equal(dra_store_relist_items(ds, DRA_KIND_SLICE, NULL), K_OK);
    claim_reasons(&snap, CLAIM_SPEC("gpu.nvidia.com"), got, sizeof(got));
    assert_string_equal(got, WARN_REASON_DRA_NO_DRIVER);
    /* a slice with per-device node selection reaches no node here, but the driver publishes;
     * with no node at all nothing more is said (an autoscaler may be on its way) */
    apply(ds, DRA_KIND_SLICE,
          "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"gpu.nvidia.com\","
          "\"perDeviceNodeSelection\":true,\"pool\":{\"name\":\"p\",\"generation\":1,"
          "\"resourceSliceCount\":1}}}");
    claim_reasons(&snap, CLAIM_SPEC("gpu.nvidia.com"), got, sizeof(got));
    assert_string_equal(got, "");

    /* no DRA checks at all without the GPU class set or the store */
    snap.dra_gpus = NULL;
    claim_reasons(&snap, CLAIM_SPEC("gpu.example.com"), got, sizeof(got));
    assert_string_equal(got, "");
    gpu_set_cleanup(&dra);
    dra_store_free(ds);
}

enum { BUDGET_NODES = 100 };

/* BUDGET_NODES nodes, `slices` cluster-wide slices of `devices` devices each (all reach every
 * node), the DeviceClass gpu.nvidia.com, and a snapshot over them. */
struct budget_world {
    struct knode nodes[BUDGET_NODES];
    const struct knode *np[BUDGET_NODES];
    char names[BUDGET_NODES][16];
    struct dra_store *ds;
    struct gpu_set dra;
    struct wh_snapshot snap;
};

static struct budget_world *budget_world_new(size_t slices, int devices)
{
    struct budget_world *b = calloc(1, sizeof(*b));
    assert_non_null(b);
    for (size_t i = 0; i < BUDGET_NODES; i++) {
        snprintf(b->names[i], sizeof(b->names[i]), "n%03zu", i);
        b->nodes[i].name = b->names[i];
        b->np[i] = &b->nodes[i];
    }
    b->ds = dra_store_new();
    assert_non_null(b->ds);
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < slices; i++) {
        char js[1024];
        int n = snprintf(js, sizeof(js),
                         "{\"metadata\":{\"name\":\"s%03zu\"},\"spec\":{\"driver\":"
                         "\"gpu.nvidia.com\",\"pool\":{\"name\":\"s%03zu\",\"generation\":1,"
                         "\"resourceSliceCount\":1},\"allNodes\":true,\"devices\":[",
                         i, i);
        for (int d = 0; d < devices; d++)
            n += snprintf(js + n, sizeof(js) - (size_t)n, "%s{\"name\":\"gpu-%d\"}", d ? "," : "",
                          d);
        snprintf(js + n, sizeof(js) - (size_t)n, "]}}");
        json_object_array_add(arr, parse(js));
    }
    assert_int_equal(dra_store_relist_items(b->ds, DRA_KIND_SLICE, arr), K_OK);
    json_object_put(arr);
    arr = parse("[{\"metadata\":{\"name\":\"gpu.nvidia.com\"},\"spec\":{\"selectors\":[{\"cel\":{"
                "\"expression\":\"device.driver == 'gpu.nvidia.com'\"}}]}}]");
    assert_int_equal(dra_store_relist_items(b->ds, DRA_KIND_CLASS, arr), K_OK);
    json_object_put(arr);
    assert_int_equal(gpu_set_parse(&b->dra, DRA_GPU_SET_DEFAULT), K_OK);
    b->snap = (struct wh_snapshot){.gpus = &test_gpus,
                                   .nodes = b->np,
                                   .n_nodes = BUDGET_NODES,
                                   .nodes_synced = true,
                                   .dra_gpus = &b->dra,
                                   .dra = b->ds};
    return b;
}

static void budget_world_free(struct budget_world *b)
{
    dra_store_free(b->ds);
    gpu_set_cleanup(&b->dra);
    free(b);
}

/* The one warning wh_check_dra_object gives `claim` over b; its text. */
static void one_not_checked(struct budget_world *b, json_object *claim, const char *text)
{
    struct warn_list w;
    warn_list_init(&w);
    dra_store_read_lock(b->ds);
    assert_int_equal(wh_check_dra_object(&b->snap, "ns", claim, false, DRA_API_V1, &w), K_OK);
    dra_store_read_unlock(b->ds);
    assert_int_equal(w.n, 1);
    assert_string_equal(w.items[0].reason, WARN_REASON_NOT_CHECKED);
    assert_non_null(strstr(w.items[0].text, text));
}

/* Many cluster-wide slices make matching cost their square on every node: past the work
 * budget the request is not matched, and one warning says so (nothing is guessed). */
static void test_dra_work_budget(void **state)
{
    (void)state;
    struct budget_world *b = budget_world_new(600, 0);
    json_object *claim = parse(CLAIM_SPEC("gpu.nvidia.com"));
    one_not_checked(b, claim, "spec.devices: 1 device request not matched");
    json_object_put(claim);
    budget_world_free(b);
}

/* Selectors that cost a hundred times a plain one (10 KiB of `||` comparisons, all run): the
 * CEL budget stops the matching, the devices left are undecided (no "no device matches"), and
 * one warning says the selectors were too costly to check. */
static void test_dra_cel_budget(void **state)
{
    (void)state;
    struct budget_world *b = budget_world_new(10, 8);
    /* every comparison false but the last */
    static char expr[10 * 1024 + 1];
    size_t n = 0;
    for (size_t k = 0; n + 64 < sizeof(expr); k++)
        n += (size_t)snprintf(expr + n, sizeof(expr) - n, "device.driver == 'd%05zu' || ", k);
    snprintf(expr + n, sizeof(expr) - n, "device.driver == 'gpu.nvidia.com'");
    json_object *sels = json_object_new_array();
    for (int i = 0; i < 16; i++) {
        json_object *c = json_object_new_object();
        json_object_object_add(c, "expression", json_object_new_string(expr));
        json_object *s = json_object_new_object();
        json_object_object_add(s, "cel", c);
        json_object_array_add(sels, s);
    }
    json_object *claim = parse(CLAIM_SPEC("gpu.nvidia.com"));
    json_object *req = json_object_array_get_idx(
        json_object_object_get(
            json_object_object_get(json_object_object_get(claim, "spec"), "devices"), "requests"),
        0);
    json_object_object_add(json_object_object_get(req, "exactly"), "selectors", sels);
    one_not_checked(b, claim,
                    "spec.devices: 1 device request not fully matched against node devices, "
                    "selectors too costly to check");
    json_object_put(claim);
    budget_world_free(b);
}

/* A review answered shed (dra_busy): class and driver are checked, the devices not matched,
 * and one warning says why. */
static void test_dra_busy(void **state)
{
    (void)state;
    struct budget_world *b = budget_world_new(10, 8);
    b->snap.dra_busy = true;
    json_object *claim = parse(CLAIM_SPEC("gpu.nvidia.com"));
    one_not_checked(b, claim,
                    "spec.devices: 1 device request not matched against node devices: "
                    "gputri-webhook was busy");
    json_object_put(claim);
    budget_world_free(b);
}

/* A CEL deadline already past: the first device's selectors run, the rest are undecided, and
 * the warning names the timeout rather than the steps. */
static void test_dra_cel_deadline(void **state)
{
    (void)state;
    struct budget_world *b = budget_world_new(10, 8);
    b->snap.cel_deadline_ns = clock_mono_ns(NULL) - 1;
    json_object *claim = parse(CLAIM_SPEC("gpu.nvidia.com"));
    one_not_checked(b, claim,
                    "selectors too costly to check (not done within half the API server's "
                    "timeout)");
    json_object_put(claim);
    budget_world_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unsynced_kinds_say_nothing),
        cmocka_unit_test(test_dra_work_budget),
        cmocka_unit_test(test_dra_cel_budget),
        cmocka_unit_test(test_dra_busy),
        cmocka_unit_test(test_dra_cel_deadline),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
