/*
 * Tests for webhook/autoscaler.c: the --autoscaler modes and names, one discovery check against
 * a recording fake API (present, absent, 403 taken as absent, other failures keep the last
 * answer), and the discovery thread's first check and stop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "autoscaler.h"
#include "fake_kube.h"
#include "util/result.h"

#define APIGROUP "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",\"name\":\"karpenter.sh\"}"
#define CONFIGMAP                                                                                  \
    "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"                        \
    "\"cluster-autoscaler-status\",\"namespace\":\"kube-system\"},\"data\":{\"status\":\"x\"}}"
#define STATUS(code) "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"code\":" #code "}"

static void test_modes_and_names(void **state)
{
    (void)state;
    enum wh_autoscaler_mode m = WH_AUTOSCALER_MODE_NONE;
    assert_int_equal(wh_autoscaler_mode_parse("auto", &m), K_OK);
    assert_int_equal(m, WH_AUTOSCALER_MODE_AUTO);
    assert_int_equal(wh_autoscaler_mode_parse("karpenter", &m), K_OK);
    assert_int_equal(m, WH_AUTOSCALER_MODE_KARPENTER);
    assert_int_equal(wh_autoscaler_mode_parse("cluster-autoscaler", &m), K_OK);
    assert_int_equal(m, WH_AUTOSCALER_MODE_CA);
    assert_int_equal(wh_autoscaler_mode_parse("none", &m), K_OK);
    assert_int_equal(m, WH_AUTOSCALER_MODE_NONE);
    static const char *const bad[] = {"", "Karpenter", "ca", "auto ", "cluster_autoscaler"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(wh_autoscaler_mode_parse(bad[i], &m), K_EINVAL);
        assert_int_equal(m, WH_AUTOSCALER_MODE_NONE); /* unchanged */
    }
    assert_int_equal(wh_autoscaler_mode_parse(NULL, &m), K_EINVAL);

    assert_int_equal(wh_autoscaler_mode_bits(WH_AUTOSCALER_MODE_AUTO), 0);
    assert_int_equal(wh_autoscaler_mode_bits(WH_AUTOSCALER_MODE_NONE), 0);
    assert_int_equal(wh_autoscaler_mode_bits(WH_AUTOSCALER_MODE_KARPENTER),
                     WH_AUTOSCALER_KARPENTER);
    assert_int_equal(wh_autoscaler_mode_bits(WH_AUTOSCALER_MODE_CA), WH_AUTOSCALER_CA);

    assert_null(wh_autoscaler_name(0));
    assert_string_equal(wh_autoscaler_name(WH_AUTOSCALER_KARPENTER), "Karpenter");
    assert_string_equal(wh_autoscaler_name(WH_AUTOSCALER_CA), "Cluster Autoscaler");
    assert_string_equal(wh_autoscaler_name(WH_AUTOSCALER_KARPENTER | WH_AUTOSCALER_CA),
                        "Karpenter or Cluster Autoscaler");
}

/* One check: two GETs, Karpenter's API group then the status ConfigMap. */
static unsigned check(struct fake_kube *f, struct kube_client *c, struct wh_autoscaler_probe *p,
                      long karpenter, const char *kbody, long ca, const char *cbody)
{
    size_t before = fake_kube_count(f);
    fake_kube_answer(f, karpenter, 0, kbody);
    fake_kube_answer(f, ca, 0, cbody);
    unsigned got = wh_autoscaler_discover(c, p);
    assert_int_equal(fake_kube_count(f), before + 2);
    const struct fake_request *r = fake_kube_request(f, before);
    assert_string_equal(r->method, "GET");
    assert_string_equal(r->path, WH_AUTOSCALER_KARPENTER_PATH);
    r = fake_kube_request(f, before + 1);
    assert_string_equal(r->method, "GET");
    assert_string_equal(r->path, WH_AUTOSCALER_CA_STATUS_PATH);
    assert_int_equal(got, p->present);
    assert_true(p->checked);
    return got;
}

static void test_discover(void **state)
{
    (void)state;
    struct fake_kube f;
    fake_kube_init(&f);
    struct kube_client *c = fake_kube_client(&f);
    assert_non_null(c);
    struct wh_autoscaler_probe p = {0};

    /* neither: 404 and 404 */
    assert_int_equal(check(&f, c, &p, 404, STATUS(404), 404, STATUS(404)), 0);
    /* Karpenter's CRDs installed */
    assert_int_equal(check(&f, c, &p, 200, APIGROUP, 404, STATUS(404)), WH_AUTOSCALER_KARPENTER);
    /* a failure that says nothing (5xx, then a transport error) keeps what was found */
    assert_int_equal(check(&f, c, &p, 503, STATUS(503), 404, STATUS(404)), WH_AUTOSCALER_KARPENTER);
    /* Cluster Autoscaler's status ConfigMap appears as well */
    assert_int_equal(check(&f, c, &p, 200, APIGROUP, 200, CONFIGMAP),
                     WH_AUTOSCALER_KARPENTER | WH_AUTOSCALER_CA);
    assert_int_equal(check(&f, c, &p, 200, APIGROUP, 500, STATUS(500)),
                     WH_AUTOSCALER_KARPENTER | WH_AUTOSCALER_CA);
    /* Karpenter removed */
    assert_int_equal(check(&f, c, &p, 404, STATUS(404), 200, CONFIGMAP), WH_AUTOSCALER_CA);
    assert_false(p.forbidden_said);
    /* the ConfigMap cannot be read: unknown, taken as absent (and said once) */
    assert_int_equal(check(&f, c, &p, 404, STATUS(404), 403, STATUS(403)), 0);
    assert_true(p.forbidden_said);
    assert_int_equal(check(&f, c, &p, 200, APIGROUP, 403, STATUS(403)), WH_AUTOSCALER_KARPENTER);
    assert_true(p.forbidden_said);

    /* a first check whose GETs fail finds nothing */
    struct wh_autoscaler_probe fresh = {0};
    assert_int_equal(check(&f, c, &fresh, 500, STATUS(500), 500, STATUS(500)), 0);
    assert_true(fresh.checked);

    kube_client_free(c);
    fake_kube_cleanup(&f);
}

/* The thread checks at once, stores what it found, and stops when freed (without waiting out the
 * interval). */
static void test_watch(void **state)
{
    (void)state;
    struct kube_config cfg = {0};
    atomic_uint present = 0;
    /* no server: every GET fails in transport, so the first check finds nothing */
    cfg.server = "http://127.0.0.1:1";
    struct wh_autoscaler_watch *w = wh_autoscaler_watch_new(&cfg, 3600000, &present);
    assert_non_null(w);
    assert_false(wh_autoscaler_watch_checked(w));
    assert_int_equal(wh_autoscaler_watch_start(w), K_OK);
    while (!wh_autoscaler_watch_checked(w)) /* bounded by ctest's timeout */
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    assert_int_equal(atomic_load(&present), 0);
    wh_autoscaler_watch_free(w); /* returns at once, not after an hour */
    wh_autoscaler_watch_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modes_and_names),
        cmocka_unit_test(test_discover),
        cmocka_unit_test(test_watch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
