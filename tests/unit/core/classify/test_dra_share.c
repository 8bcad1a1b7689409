/*
 * test_dra_share.c - core/classify/dra_share.c: shared counters (KEP-4815) and consumable
 * capacity (KEP-5075) as the 1.37 allocator counts them (structured/internal/incubating).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "classify/dra_share.h"
#include "kube/project.h"
#include "model/dra.h"
#include "util/result.h"

#define GI (INT64_C(1) << 30)

static void slice_from(const char *text, struct dra_slice *s)
{
    json_object *o = json_tokener_parse(text);
    assert_non_null(o);
    assert_int_equal(project_dra_slice(o, s), K_OK);
    json_object_put(o);
}

static void claim_from(const char *text, struct dra_claim *c)
{
    json_object *o = json_tokener_parse(text);
    assert_non_null(o);
    assert_int_equal(project_dra_claim(o, c), K_OK);
    json_object_put(o);
}

static void exact_from(const char *capacity_requests, struct dra_exact *e, struct dra_claim *c)
{
    char buf[512];
    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":{\"devices\":{"
             "\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"c\"%s%s%s}}]}}}",
             capacity_requests ? ",\"capacity\":{\"requests\":" : "",
             capacity_requests ? capacity_requests : "", capacity_requests ? "}" : "");
    claim_from(buf, c);
    *e = c->spec.requests[0].exactly;
}

#define COUNTERS                                                                                   \
    "{\"metadata\":{\"name\":\"n0-counters\"},\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":"      \
    "\"n0\",\"generation\":1,\"resourceSliceCount\":2},\"nodeName\":\"n0\",\"sharedCounters\":[{"  \
    "\"name\":\"gpu-0-counters\",\"counters\":{\"memory\":{\"value\":\"40Gi\"},"                   \
    "\"multiprocessors\":{\"value\":\"98\"}}}]}}"

#define USE(mem, mp)                                                                               \
    "\"consumesCounters\":[{\"counterSet\":\"gpu-0-counters\",\"counters\":{\"memory\":{"          \
    "\"value\":\"" mem "\"},\"multiprocessors\":{\"value\":\"" mp "\"}}}]"

#define DEVICES                                                                                    \
    "{\"metadata\":{\"name\":\"n0-s\"},\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":\"n0\","      \
    "\"generation\":1,\"resourceSliceCount\":2},\"nodeName\":\"n0\",\"devices\":["                 \
    "{\"name\":\"gpu-0\"," USE("40Gi", "98") "},"                                                  \
                                             "{\"name\":\"mig-0\"," USE(                           \
                                                 "5Gi", "14") "},"                                 \
                                                              "{\"name\":\"mig-1\"," USE(          \
                                                                  "5Gi", "14") "}]}}"

static void test_counters(void **state)
{
    (void)state;
    struct dra_slice cs, ds;
    slice_from(COUNTERS, &cs);
    slice_from(DEVICES, &ds);
    assert_int_equal(cs.n_counter_sets, 1);
    assert_int_equal(ds.devices[1].n_consumes, 1);
    struct dra_claim holder, rc;
    claim_from("{\"metadata\":{\"name\":\"h\",\"namespace\":\"ns\"},\"spec\":{}}", &holder);
    struct dra_exact e;
    exact_from(NULL, &e, &rc);
    struct dra_counters *c = malloc(sizeof(*c));
    assert_non_null(c);
    struct dra_fit_why why;

    /* nothing allocated: every device fits */
    dra_counters_reset(c);
    dra_counters_add_sets(c, &cs);
    assert_int_equal(c->n, 2);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(dra_share_fit(c, &ds, &ds.devices[i], &e, NULL, 0, &why), DRA_FIT);

    /* the whole GPU allocated: no partition is left */
    dra_counters_charge(c, &ds, &ds.devices[0], &holder);
    assert_int_equal(dra_share_fit(c, &ds, &ds.devices[1], &e, NULL, 0, &why), DRA_FIT_HELD);
    assert_non_null(why.counter);
    assert_string_equal(why.counter->set, "gpu-0-counters");
    assert_string_equal(why.counter->counter, "memory");
    assert_int_equal(why.need, 5 * GI * 1000);
    assert_int_equal(why.counter->left, 0);
    assert_int_equal(why.n_holders, 1);
    assert_ptr_equal(why.holders[0], &holder);

    /* one partition allocated: the other fits, the whole GPU does not */
    dra_counters_reset(c);
    dra_counters_add_sets(c, &cs);
    dra_counters_charge(c, &ds, &ds.devices[1], &holder);
    assert_int_equal(dra_share_fit(c, &ds, &ds.devices[2], &e, NULL, 0, &why), DRA_FIT);
    assert_int_equal(dra_share_fit(c, &ds, &ds.devices[0], &e, NULL, 0, &why), DRA_FIT_HELD);
    assert_true(why.counter->left < why.need);

    /* both partitions allocated, then the counter set of another pool is not looked at */
    dra_counters_charge(c, &ds, &ds.devices[2], NULL);
    assert_int_equal(dra_share_fit(c, &ds, &ds.devices[0], &e, NULL, 0, &why), DRA_FIT_HELD);
    assert_int_equal(why.n_holders, 1); /* NULL holders are not named */

    /* a device drawing on a counter set its pool lacks: an invalid pool upstream, undecided */
    dra_counters_reset(c);
    assert_int_equal(dra_share_fit(c, &ds, &ds.devices[1], &e, NULL, 0, &why), DRA_FIT_UNKNOWN);

    free(c);
    dra_claim_cleanup(&rc);
    dra_claim_cleanup(&holder);
    dra_slice_cleanup(&cs);
    dra_slice_cleanup(&ds);
}

#define SHARED(policy)                                                                             \
    "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":\"n0\","         \
    "\"generation\":1,\"resourceSliceCount\":1},\"nodeName\":\"n0\",\"devices\":[{\"name\":"       \
    "\"v0\",\"allowMultipleAllocations\":true,\"capacity\":{\"memory\":{\"value\":\"40Gi\"" policy \
    "}}}]}}"

static void share_claim(const char *name, const char *consumed, struct dra_claim *c)
{
    char buf[640];
    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\"},\"spec\":{},\"status\":{"
             "\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\",\"driver\":\"d\","
             "\"pool\":\"n0\",\"device\":\"v0\",\"shareID\":\"u-%s\",\"consumedCapacity\":{"
             "\"memory\":\"%s\"}}]}}}}",
             name, name, consumed);
    claim_from(buf, c);
}

static void test_capacity(void **state)
{
    (void)state;
    struct dra_slice s;
    slice_from(SHARED(",\"requestPolicy\":{\"default\":\"8Gi\",\"validRange\":{\"min\":\"4Gi\","
                      "\"max\":\"40Gi\",\"step\":\"4Gi\"}}"),
               &s);
    const struct dra_device *d = &s.devices[0];
    assert_true(d->allow_multiple);
    assert_true(d->caps[0].has_policy);
    struct dra_counters *c = malloc(sizeof(*c));
    assert_non_null(c);
    dra_counters_reset(c);
    struct dra_claim a, rc;
    share_claim("a", "32Gi", &a);
    const struct dra_claim *shares[] = {&a};
    struct dra_fit_why why;
    struct dra_exact e;

    /* 9Gi rounds up to 12Gi; 8Gi are left */
    exact_from("{\"memory\":\"9Gi\"}", &e, &rc);
    assert_int_equal(dra_share_fit(c, &s, d, &e, shares, 1, &why), DRA_FIT_HELD);
    assert_int_equal(why.cap_need, 12 * GI * 1000);
    assert_int_equal(why.cap_used, 32 * GI * 1000);
    assert_ptr_equal(why.holders[0], &a);
    /* alone it fits */
    assert_int_equal(dra_share_fit(c, &s, d, &e, NULL, 0, &why), DRA_FIT);
    dra_claim_cleanup(&rc);

    /* below min reads as min; no request takes the default */
    exact_from("{\"memory\":\"1\"}", &e, &rc);
    assert_int_equal(dra_share_fit(c, &s, d, &e, shares, 1, &why), DRA_FIT);
    dra_claim_cleanup(&rc);
    exact_from(NULL, &e, &rc);
    assert_int_equal(dra_share_fit(c, &s, d, &e, shares, 1, &why), DRA_FIT);
    dra_claim_cleanup(&rc);

    /* above max: never */
    exact_from("{\"memory\":\"41Gi\"}", &e, &rc);
    assert_int_equal(dra_share_fit(c, &s, d, &e, NULL, 0, &why), DRA_FIT_NEVER);
    assert_true(why.policy);
    dra_claim_cleanup(&rc);

    /* a capacity the device lacks: never */
    exact_from("{\"bandwidth\":\"1\"}", &e, &rc);
    assert_int_equal(dra_share_fit(c, &s, d, &e, NULL, 0, &why), DRA_FIT_NEVER);
    assert_string_equal(why.missing, "bandwidth");
    dra_claim_cleanup(&rc);

    /* a quantity not representable in milli-units: undecided */
    exact_from("{\"memory\":\"1n\"}", &e, &rc);
    assert_int_equal(dra_share_fit(c, &s, d, &e, NULL, 0, &why), DRA_FIT_UNKNOWN);
    dra_claim_cleanup(&rc);

    dra_claim_cleanup(&a);
    dra_slice_cleanup(&s);

    /* a driver's negative validRange.min (fuzz_dra, once a signed overflow): 9Gi rounds up from
       -4Gi to 12Gi; a user's request whose distance from min overflows is undecided */
    slice_from(SHARED(",\"requestPolicy\":{\"default\":\"8Gi\",\"validRange\":{\"min\":\"-4Gi\","
                      "\"max\":\"40Gi\",\"step\":\"4Gi\"}}"),
               &s);
    d = &s.devices[0];
    exact_from("{\"memory\":\"9Gi\"}", &e, &rc);
    assert_int_equal(dra_share_fit(c, &s, d, &e, NULL, 0, &why), DRA_FIT);
    dra_claim_cleanup(&rc);
    exact_from(NULL, &e, &rc);
    assert_int_equal(dra_share_fit(c, &s, d, &e, NULL, 0, &why), DRA_FIT);
    dra_claim_cleanup(&rc);
    exact_from("{\"memory\":\"9223372036854775\"}", &e, &rc);
    assert_int_equal(dra_share_fit(c, &s, d, &e, NULL, 0, &why), DRA_FIT_UNKNOWN);
    dra_claim_cleanup(&rc);
    dra_slice_cleanup(&s);

    /* validValues: round up to the next; above all of them violates the policy */
    slice_from(SHARED(",\"requestPolicy\":{\"default\":\"10Gi\",\"validValues\":[\"10Gi\","
                      "\"20Gi\",\"40Gi\"]}"),
               &s);
    d = &s.devices[0];
    share_claim("a", "20Gi", &a);
    exact_from("{\"memory\":\"11Gi\"}", &e, &rc);
    assert_int_equal(dra_share_fit(c, &s, d, &e, shares, 1, &why), DRA_FIT);
    dra_claim_cleanup(&rc);
    exact_from("{\"memory\":\"21Gi\"}", &e, &rc);
    assert_int_equal(dra_share_fit(c, &s, d, &e, shares, 1, &why), DRA_FIT_HELD);
    assert_int_equal(why.cap_need, 40 * GI * 1000);
    dra_claim_cleanup(&rc);
    dra_claim_cleanup(&a);
    dra_slice_cleanup(&s);

    /* no policy: a request without capacity takes the whole device */
    slice_from(SHARED(""), &s);
    d = &s.devices[0];
    share_claim("a", "1Gi", &a);
    exact_from(NULL, &e, &rc);
    assert_int_equal(dra_share_fit(c, &s, d, &e, NULL, 0, &why), DRA_FIT);
    assert_int_equal(dra_share_fit(c, &s, d, &e, shares, 1, &why), DRA_FIT_HELD);
    dra_claim_cleanup(&rc);
    exact_from("{\"memory\":\"39Gi\"}", &e, &rc);
    assert_int_equal(dra_share_fit(c, &s, d, &e, shares, 1, &why), DRA_FIT);
    dra_claim_cleanup(&rc);
    dra_claim_cleanup(&a);
    dra_slice_cleanup(&s);
    free(c);
}

/* Property: over random counter sets and allocations, a device fits exactly when every counter
 * of its pool, less what the allocated devices and it draw, stays non-negative; and allocating
 * one more device never turns a held device free. */
static void test_counters_property(void **state)
{
    (void)state;
    struct dra_counters *c = malloc(sizeof(*c));
    assert_non_null(c);
    struct dra_exact e = {0};
    unsigned seed = 12345;
    for (int round = 0; round < 300; round++) {
        seed = seed * 1103515245u + 12345u;
        int total = (int)(seed >> 16) % 20;
        char text[2048];
        int k = snprintf(text, sizeof(text),
                         "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d\",\"pool\":{"
                         "\"name\":\"p\",\"generation\":1,\"resourceSliceCount\":1},"
                         "\"nodeName\":\"n\",\"sharedCounters\":[{\"name\":\"cs\",\"counters\":{"
                         "\"x\":{\"value\":\"%d\"}}}],\"devices\":[",
                         total);
        int draws[6];
        for (int i = 0; i < 6; i++) {
            seed = seed * 1103515245u + 12345u;
            draws[i] = (int)(seed >> 16) % 8;
            k += snprintf(text + k, sizeof(text) - (size_t)k,
                          "%s{\"name\":\"d%d\",\"consumesCounters\":[{\"counterSet\":\"cs\","
                          "\"counters\":{\"x\":{\"value\":\"%d\"}}}]}",
                          i ? "," : "", i, draws[i]);
        }
        snprintf(text + k, sizeof(text) - (size_t)k, "]}}");
        struct dra_slice s;
        slice_from(text, &s);
        dra_counters_reset(c);
        dra_counters_add_sets(c, &s);
        int used = 0;
        bool held_before[6] = {false};
        for (int n_alloc = 0; n_alloc < 6; n_alloc++) {
            for (int i = n_alloc; i < 6; i++) {
                struct dra_fit_why why;
                enum dra_fit f = dra_share_fit(c, &s, &s.devices[i], &e, NULL, 0, &why);
                bool fits = total - used - draws[i] >= 0;
                assert_int_equal(f, fits ? DRA_FIT : DRA_FIT_HELD);
                assert_false(held_before[i] && fits);
                held_before[i] = !fits;
            }
            dra_counters_charge(c, &s, &s.devices[n_alloc], NULL);
            used += draws[n_alloc];
        }
        dra_slice_cleanup(&s);
    }
    free(c);
}

static void test_milli_str(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(dra_milli_str(40 * GI * 1000, b, sizeof(b)), "40Gi");
    assert_string_equal(dra_milli_str(98000, b, sizeof(b)), "98");
    assert_string_equal(dra_milli_str(500, b, sizeof(b)), "500m");
    assert_string_equal(dra_milli_str(0, b, sizeof(b)), "0");
    assert_string_equal(dra_milli_str(3 * GI * 1000, b, sizeof(b)), "3Gi");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counters),
        cmocka_unit_test(test_capacity),
        cmocka_unit_test(test_counters_property),
        cmocka_unit_test(test_milli_str),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
