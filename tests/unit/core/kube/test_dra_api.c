/*
 * test_dra_api.c - core/kube/dra_api.c: the DRA API version chosen from the APIGroup document
 * (recorded from every release's API server, tests/fixtures/dra-versions/RELEASE/discovery.json
 * or the 404 of a group not served, discovery-404.txt; and written by hand), the paths per
 * version, and the discovery check that logs only changes.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "fake_kube.h"
#include "kube/dra_api.h"
#include "util/result.h"

#define V(v) "{\"groupVersion\":\"resource.k8s.io/" v "\",\"version\":\"" v "\"}"
#define GROUP(versions)                                                                            \
    "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",\"name\":\"resource.k8s.io\",\"versions\":"      \
    "[" versions                                                                                   \
    "],\"preferredVersion\":{\"groupVersion\":\"resource.k8s.io/v1\",\"version\":\"v1\"}}"

static unsigned served_of(const char *text)
{
    json_object *o = json_tokener_parse(text);
    unsigned s = dra_api_served(o);
    json_object_put(o);
    return s;
}

#define BIT(v) (1u << (v))

static void test_choose(void **state)
{
    (void)state;
    /* 1.34+ by default: v1 only */
    unsigned s = served_of(GROUP(V("v1")));
    assert_int_equal(s, BIT(DRA_API_V1));
    assert_int_equal(dra_api_choose(s), DRA_API_V1);
    /* 1.33 with both betas on (v1alpha3 is never read) */
    s = served_of(GROUP(V("v1beta2") "," V("v1beta1") "," V("v1alpha3")));
    assert_int_equal(s, BIT(DRA_API_V1BETA1) | BIT(DRA_API_V1BETA2));
    assert_int_equal(dra_api_choose(s), DRA_API_V1BETA2);
    /* 1.32 */
    s = served_of(GROUP(V("v1beta1") "," V("v1alpha3")));
    assert_int_equal(dra_api_choose(s), DRA_API_V1BETA1);
    /* 1.34 with every version on: v1 wins whatever the order */
    s = served_of(GROUP(V("v1beta1") "," V("v1") "," V("v1beta2")));
    assert_int_equal(dra_api_choose(s), DRA_API_V1);
    /* only alpha, another group, not a document */
    assert_int_equal(dra_api_choose(served_of(GROUP(V("v1alpha3")))), DRA_API_NONE);
    assert_int_equal(served_of("{\"kind\":\"APIGroup\",\"name\":\"karpenter.sh\",\"versions\":["
                               "{\"version\":\"v1\"}]}"),
                     0);
    assert_int_equal(served_of("[]"), 0);
    assert_int_equal(dra_api_served(NULL), 0);
    assert_int_equal(dra_api_choose(0), DRA_API_NONE);

    char buf[64];
    assert_string_equal(
        dra_api_describe(BIT(DRA_API_V1BETA2) | BIT(DRA_API_V1BETA1), buf, sizeof(buf)),
        "v1beta1, v1beta2");
    assert_string_equal(dra_api_describe(0, buf, sizeof(buf)), "none");
    assert_string_equal(dra_api_describe(BIT(DRA_API_V1), buf, 3), "v1"); /* just fits */
}

static void test_names_and_paths(void **state)
{
    (void)state;
    assert_string_equal(dra_kind_path(DRA_KIND_SLICE, DRA_API_V1),
                        "/apis/resource.k8s.io/v1/resourceslices");
    assert_string_equal(dra_kind_path(DRA_KIND_CLAIM, DRA_API_V1BETA1),
                        "/apis/resource.k8s.io/v1beta1/resourceclaims");
    assert_string_equal(dra_kind_path(DRA_KIND_TEMPLATE, DRA_API_V1BETA2),
                        "/apis/resource.k8s.io/v1beta2/resourceclaimtemplates");
    assert_string_equal(dra_kind_path(DRA_KIND_TAINT_RULE, DRA_API_V1),
                        "/apis/resource.k8s.io/v1/devicetaintrules");
    assert_string_equal(dra_kind_path(DRA_KIND_CLASS, DRA_API_NONE), "");
    assert_string_equal(dra_kind_path(DRA_KIND_COUNT, DRA_API_V1), "");
    assert_string_equal(dra_kind_name(DRA_KIND_CLASS), "deviceclasses");
    assert_string_equal(dra_kind_name(DRA_KIND_COUNT), "");
    for (int v = DRA_API_V1BETA1; v < DRA_API_VERSION_COUNT; v++)
        assert_int_equal(dra_api_version_parse(dra_api_version_name((enum dra_api_version)v)), v);
    assert_int_equal(dra_api_version_parse("v1alpha3"), DRA_API_NONE);
    assert_int_equal(dra_api_version_parse(NULL), DRA_API_NONE);
    assert_string_equal(dra_api_version_name(DRA_API_NONE), "none");
}

/* Every release's answer to GET /apis/resource.k8s.io as recorded (tests/fixtures/dra-versions/
 * RELEASE/discovery.json, or where the group is not served at all, the 404's body in
 * discovery-404.txt), through dra_api_discover as the daemons ask it: the version gputri reads. */
static const struct {
    const char *release;
    long status; /* of the answer recorded */
    unsigned served;
    enum dra_api_version want;
} RECORDED[] = {
    /* no DRA by default; with the gate and the alpha group on, only v1alpha2 / v1alpha3 */
    {"1.30.14", 404, 0, DRA_API_NONE},
    {"1.30.14-alpha", 200, 0, DRA_API_NONE},
    {"1.31.13", 404, 0, DRA_API_NONE},
    {"1.31.13-alpha", 200, 0, DRA_API_NONE},
    {"1.32.13", 200, BIT(DRA_API_V1BETA1), DRA_API_V1BETA1},
    {"1.33.13", 200, BIT(DRA_API_V1BETA1) | BIT(DRA_API_V1BETA2), DRA_API_V1BETA2},
    {"1.34.4-betas", 200, BIT(DRA_API_V1BETA1) | BIT(DRA_API_V1BETA2) | BIT(DRA_API_V1),
     DRA_API_V1},
    {"1.35.4", 200, BIT(DRA_API_V1), DRA_API_V1},
    {"1.35.4-betas", 200, BIT(DRA_API_V1BETA1) | BIT(DRA_API_V1BETA2) | BIT(DRA_API_V1),
     DRA_API_V1},
    {"1.36.3", 200, BIT(DRA_API_V1), DRA_API_V1},
    {"1.36.3-betas", 200, BIT(DRA_API_V1BETA1) | BIT(DRA_API_V1BETA2) | BIT(DRA_API_V1),
     DRA_API_V1},
    {"1.37.2", 200, BIT(DRA_API_V1), DRA_API_V1},
};
#define N_RECORDED (sizeof(RECORDED) / sizeof(RECORDED[0]))

/* The body of dra-versions/<release>/<file> (malloc'd), NULL when there is none. */
static char *slurp(const char *release, const char *file)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/dra-versions/%s/%s", FIXTURES_DIR, release, file);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = calloc(1, 65536);
    assert_non_null(buf);
    size_t n = fread(buf, 1, 65535, f);
    assert_true(n > 0 && n < 65535);
    fclose(f);
    return buf;
}

static void test_recorded(void **state)
{
    (void)state;
    struct fake_kube f;
    fake_kube_init(&f);
    struct kube_client *c = fake_kube_client(&f);
    for (size_t i = 0; i < N_RECORDED; i++) {
        char *doc = slurp(RECORDED[i].release, "discovery.json");
        char *not_found = slurp(RECORDED[i].release, "discovery-404.txt");
        if (!doc == !not_found)
            fail_msg("%s: want exactly one of discovery.json, discovery-404.txt",
                     RECORDED[i].release);
        assert_int_equal(doc ? 200 : 404, RECORDED[i].status);
        fake_kube_answer(&f, RECORDED[i].status, 0, doc ? doc : not_found);
        struct kube_error err = {0};
        unsigned served = 99;
        assert_int_equal(dra_api_discover(c, &served, &err), K_OK);
        if (served != RECORDED[i].served || dra_api_choose(served) != RECORDED[i].want)
            fail_msg("%s: served %#x, chose %s", RECORDED[i].release, served,
                     dra_api_version_name(dra_api_choose(served)));
        /* the probe the daemons run says the same */
        struct dra_api_probe p = {0};
        fake_kube_answer(&f, RECORDED[i].status, 0, doc ? doc : not_found);
        assert_true(dra_api_probe_step(c, &p));
        assert_int_equal(p.version, RECORDED[i].want);
        free(doc);
        free(not_found);
    }
    kube_client_free(c);
    fake_kube_cleanup(&f);

    /* and every recording is in the table */
    char path[1024];
    snprintf(path, sizeof(path), "%s/dra-versions", FIXTURES_DIR);
    DIR *d = opendir(path);
    assert_non_null(d);
    struct dirent *e;
    size_t dirs = 0;
    while ((e = readdir(d)) != NULL) {
        char sub[2048];
        struct stat st;
        snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
        if (e->d_name[0] == '.' || stat(sub, &st) != 0 || !S_ISDIR(st.st_mode))
            continue; /* ., .., README.md */
        dirs++;
        bool known = false;
        for (size_t i = 0; i < N_RECORDED; i++)
            known = known || strcmp(e->d_name, RECORDED[i].release) == 0;
        if (!known)
            fail_msg("dra-versions/%s: no expectation in test_dra_api.c", e->d_name);
    }
    closedir(d);
    assert_int_equal(dirs, N_RECORDED);
}

static void test_discover_and_probe(void **state)
{
    (void)state;
    struct fake_kube f;
    fake_kube_init(&f);
    struct kube_client *c = fake_kube_client(&f);
    struct kube_error err = {0};
    unsigned served = 99;
    /* no DRA: the group answers 404 */
    fake_kube_answer(&f, 404, 0, "{\"kind\":\"Status\",\"code\":404}");
    assert_int_equal(dra_api_discover(c, &served, &err), K_OK);
    assert_int_equal(served, 0);
    assert_string_equal(fake_kube_request(&f, 0)->path, "/apis/resource.k8s.io");
    /* a failure leaves what was known */
    served = 5;
    fake_kube_answer(&f, 500, 0, "{\"kind\":\"Status\",\"code\":500}");
    assert_int_equal(dra_api_discover(c, &served, &err), K_ESERVER);
    assert_int_equal(served, 5);

    struct dra_api_probe p = {0};
    fake_kube_answer(&f, 404, 0, "{}");
    assert_true(dra_api_probe_step(c, &p)); /* the first answer is a change, even none */
    assert_int_equal(p.version, DRA_API_NONE);
    fake_kube_answer(&f, 404, 0, "{}");
    assert_false(dra_api_probe_step(c, &p));
    fake_kube_answer(&f, 200, 0, GROUP(V("v1beta1")));
    assert_true(dra_api_probe_step(c, &p));
    assert_int_equal(p.version, DRA_API_V1BETA1);
    fake_kube_fail(&f, K_EIO); /* keeps v1beta1 */
    assert_false(dra_api_probe_step(c, &p));
    assert_int_equal(p.version, DRA_API_V1BETA1);
    assert_true(p.failure_said);
    fake_kube_answer(&f, 200, 0, GROUP(V("v1beta1") "," V("v1beta2")));
    assert_true(dra_api_probe_step(c, &p));
    assert_int_equal(p.version, DRA_API_V1BETA2);
    assert_false(p.failure_said);
    fake_kube_answer(&f, 200, 0, GROUP(V("v1beta2") "," V("v1beta1")));
    assert_false(dra_api_probe_step(c, &p)); /* same choice */
    fake_kube_answer(&f, 404, 0, "{}");
    assert_true(dra_api_probe_step(c, &p));
    assert_int_equal(p.version, DRA_API_NONE);
    kube_client_free(c);
    fake_kube_cleanup(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_choose),
        cmocka_unit_test(test_names_and_paths),
        cmocka_unit_test(test_recorded),
        cmocka_unit_test(test_discover_and_probe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
