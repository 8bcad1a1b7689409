/* test_gang_informers.c - core/cache/gang_informers.c: paths, discovery per kind (the best
 * version served, 404 and a document without the resource as not served, other errors as not
 * known), and a discovery pass that starts and stops informers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cache/gang_informers.h"
#include "fake_kube.h"
#include "util/result.h"

static void test_paths(void **state)
{
    (void)state;
    char p[256];
    assert_true(gang_api_path(p, sizeof(p), GANG_KAI, "v2alpha2", NULL, NULL));
    assert_string_equal(p, "/apis/scheduling.run.ai/v2alpha2/podgroups");
    assert_true(gang_api_path(p, sizeof(p), GANG_PODGROUP, "v1alpha2", "ns", "pg"));
    assert_string_equal(p, "/apis/scheduling.k8s.io/v1alpha2/namespaces/ns/podgroups/pg");
    assert_false(gang_api_path(p, 8, GANG_KAI, "v2alpha2", NULL, NULL));
    assert_false(gang_api_path(p, sizeof(p), GANG_NONE, "v1", NULL, NULL));
}

#define PODGROUPS "{\"resources\":[{\"name\":\"podgroups\"},{\"name\":\"workloads\"}]}"

static void test_probe(void **state)
{
    (void)state;
    struct fake_kube f;
    fake_kube_init(&f);
    struct kube_client *c = fake_kube_client(&f);
    bool served;
    char v[16];
    struct kube_error err = {0};
    /* 1.36: v1beta1 not there, v1alpha2 is */
    fake_kube_answer(&f, 404, 0, "{}");
    fake_kube_answer(&f, 200, 0, PODGROUPS);
    assert_int_equal(gang_api_probe(c, GANG_PODGROUP, &served, v, sizeof(v), &err), K_OK);
    assert_true(served);
    assert_string_equal(v, "v1alpha2");
    assert_string_equal(fake_kube_request(&f, 0)->path, "/apis/scheduling.k8s.io/v1beta1");
    /* the group served without the resource (1.37 without the gate: only priorityclasses) */
    fake_kube_answer(&f, 200, 0, "{\"resources\":[{\"name\":\"priorityclasses\"}]}");
    fake_kube_answer(&f, 404, 0, "{}");
    assert_int_equal(gang_api_probe(c, GANG_PODGROUP, &served, v, sizeof(v), &err), K_OK);
    assert_false(served);
    /* forbidden: not known */
    fake_kube_answer(&f, 403, 0, "{}");
    assert_int_not_equal(gang_api_probe(c, GANG_KAI, &served, v, sizeof(v), &err), K_OK);
    assert_false(served);
    kube_client_free(c);
    fake_kube_cleanup(&f);
}

static int calls;
static void changed(void *ctx, enum gang_kind k, const char *ns, const char *name)
{
    (void)ctx;
    (void)k;
    (void)ns;
    (void)name;
    calls++;
}

static void test_check(void **state)
{
    (void)state;
    struct fake_kube disc, objs;
    fake_kube_init(&disc);
    fake_kube_init(&objs);
    struct gang_store *s = gang_store_new();
    struct gang_informers_options o = {
        .discovery_transport = &disc.transport, .transport = &objs.transport, .no_events = true};
    struct gang_informers *w = gang_informers_new(&disc.cfg, s, &o, changed, NULL);
    assert_non_null(w);
    /* KAI served; Volcano 404; Workload 404; PodGroup 404 twice */
    fake_kube_answer(&disc, 200, 0, PODGROUPS);
    for (int i = 0; i < 4; i++)
        fake_kube_answer(&disc, 404, 0, "{}");
    /* the KAI informer's LIST */
    fake_kube_answer(&objs, 200, 0,
                     "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[{\"metadata\":{\"name\":"
                     "\"pg\",\"namespace\":\"ns\"},\"spec\":{\"minMember\":2}}]}");
    assert_int_equal(gang_informers_check(w), K_OK);
    assert_true(gang_informers_served(w, GANG_KAI));
    assert_false(gang_informers_served(w, GANG_VOLCANO));
    fake_kube_wait(&objs, 1);
    while (!gang_informers_synced(w))
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    assert_true(gang_store_is_read(s, GANG_KAI));
    assert_int_equal(gang_store_count(s, GANG_KAI), 1);
    /* KAI goes away: not read any more, everyone of the kind told */
    int before = calls;
    for (int i = 0; i < 5; i++)
        fake_kube_answer(&disc, 404, 0, "{}");
    assert_int_equal(gang_informers_check(w), K_OK);
    assert_false(gang_informers_served(w, GANG_KAI));
    assert_false(gang_store_is_read(s, GANG_KAI));
    assert_true(calls > before);
    gang_informers_free(w);
    gang_store_free(s);
    fake_kube_cleanup(&objs);
    fake_kube_cleanup(&disc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_probe),
        cmocka_unit_test(test_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
