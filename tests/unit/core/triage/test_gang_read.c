/* test_gang_read.c - core/triage/gang_read.c: a pod's gang read once for the CLI: discovery once
 * per kind, the group, its Events, the namespace's pods; a kind not served or forbidden says
 * nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "cache/gang_store.h"
#include "fake_kube.h"
#include "gpus.h"
#include "triage/triage.h"
#include "util/result.h"

#define POD(name, gates)                                                                           \
    "{\"metadata\":{\"name\":\"" name                                                              \
    "\",\"namespace\":\"ns\",\"annotations\":{\"pod-group-name\":"                                 \
    "\"pg\"}},\"spec\":{" gates "\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{"      \
    "\"nvidia.com/gpu\":\"1\"}}}]}}"

static void put(struct store *s, const char *json)
{
    json_object *o = json_tokener_parse(json);
    unsigned ch;
    assert_int_equal(store_pod_apply_json(s, o, 0, NULL, &ch), K_OK);
    json_object_put(o);
}

static void test_read(void **state)
{
    (void)state;
    struct fake_kube f;
    fake_kube_init(&f);
    struct kube_client *c = fake_kube_client(&f);
    struct store *s = store_new(&test_gpus);
    struct gang_store *gs = gang_store_new();
    put(s, POD("a", ""));
    fake_kube_answer(&f, 200, 0, "{\"resources\":[{\"name\":\"podgroups\"}]}");
    fake_kube_answer(&f, 200, 0,
                     "{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\"},\"spec\":"
                     "{\"minMember\":4,\"queue\":\"q\"}}");
    fake_kube_answer(
        &f, 200, 0,
        "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[{\"metadata\":{\"namespace\":"
        "\"ns\",\"name\":\"pg.1\"},\"involvedObject\":{\"apiVersion\":"
        "\"scheduling.run.ai/v2alpha2\",\"kind\":\"PodGroup\",\"namespace\":\"ns\","
        "\"name\":\"pg\"},\"reason\":\"NotReady\",\"message\":\"Job is not ready "
        "for scheduling. Waiting for 4 pods, currently 2 exist, 1 are gated\"},{\"metadata\":"
        "{\"namespace\":\"other\",\"name\":\"pg.2\"},\"involvedObject\":{\"apiVersion\":"
        "\"scheduling.run.ai/v2alpha2\",\"kind\":\"PodGroup\",\"namespace\":\"ns\","
        "\"name\":\"pg\"},\"reason\":\"StaleJob\",\"message\":\"forged in another "
        "namespace\",\"lastTimestamp\":\"2099-01-01T00:00:00Z\"}]}");
    fake_kube_answer(&f, 200, 0,
                     "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[" POD("a", "") "," POD(
                         "b", "\"schedulingGates\":[{\"name\":\"g\"}],") "]}");
    struct kube_error err = {0};
    int rc = triage_read_gang(c, s, gs, store_pod_get(s, "ns", "a"), true, &err);
    if (rc)
        print_error("%s\n", err.message);
    assert_int_equal(rc, K_OK);
    assert_string_equal(fake_kube_request(&f, 0)->path, "/apis/scheduling.run.ai/v2alpha2");
    assert_string_equal(fake_kube_request(&f, 1)->path,
                        "/apis/scheduling.run.ai/v2alpha2/namespaces/ns/podgroups/pg");
    assert_non_null(strstr(fake_kube_request(&f, 2)->path,
                           "involvedObject.kind%3DPodGroup%2CinvolvedObject.name%3Dpg"));
    struct gang_facts facts;
    store_read_lock(s);
    assert_true(triage_gang_facts(s, gs, store_pod_get(s, "ns", "a"), &facts));
    store_read_unlock(s);
    assert_true(facts.read);
    assert_true(facts.found);
    assert_int_equal(facts.exist, 2);
    assert_int_equal(facts.gated, 1);
    assert_string_equal(facts.event_reason, "NotReady");
    /* the group held and the kind known: no request for a second pod of it */
    size_t before = fake_kube_count(&f);
    assert_int_equal(triage_read_gang(c, s, gs, store_pod_get(s, "ns", "b"), false, &err), K_OK);
    assert_int_equal(fake_kube_count(&f), before);
    gang_store_free(gs);

    /* Volcano not served: nothing read, nothing said */
    gs = gang_store_new();
    put(s, "{\"metadata\":{\"name\":\"v\",\"namespace\":\"ns\",\"annotations\":{"
           "\"scheduling.k8s.io/group-name\":\"vg\"}},\"spec\":{\"containers\":[]}}");
    fake_kube_answer(&f, 404, 0, "{}");
    assert_int_equal(triage_read_gang(c, s, gs, store_pod_get(s, "ns", "v"), true, &err), K_OK);
    assert_int_equal(gang_store_served(gs, GANG_VOLCANO, NULL, 0), 0);
    assert_false(gang_store_is_read(gs, GANG_VOLCANO));
    gang_store_free(gs);

    /* the group forbidden: the kind is not read */
    gs = gang_store_new();
    fake_kube_answer(&f, 200, 0, "{\"resources\":[{\"name\":\"podgroups\"}]}");
    fake_kube_answer(&f, 403, 0, "{}");
    assert_int_equal(triage_read_gang(c, s, gs, store_pod_get(s, "ns", "a"), true, &err), K_OK);
    assert_false(gang_store_is_read(gs, GANG_KAI));
    gang_store_free(gs);

    store_free(s);
    kube_client_free(c);
    fake_kube_cleanup(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
