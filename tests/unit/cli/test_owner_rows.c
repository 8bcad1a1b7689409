/*
 * test_owner_rows.c - cli/owner_rows.c: `kubectl gputri pods` rows for owners whose GPU pods a
 * ResourceQuota refuses, from the FailedCreate Events the real control plane wrote
 * (tests/fixtures/quota), over the recording fake API (tests/lib/fake_kube.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "classify/quota.h"
#include "fake_kube.h"
#include "gpus.h"
#include "objects.h"
#include "pods.h"
#include "printer.h"
#include "util/result.h"

/* The fixture's Event, dated `age` seconds ago (the rows drop refusals older than
 * QUOTA_OWNER_WINDOW). */
static json_object *event_aged(const char *file, int64_t age)
{
    char rel[256];
    snprintf(rel, sizeof(rel), "quota/%s", file);
    json_object *o = test_load_json(FIXTURES_DIR, rel);
    assert_non_null(o);
    test_event_dated(o, (int64_t)time(NULL) - age);
    return o;
}

static char *list_of(json_object *a, json_object *b, json_object *c)
{
    json_object *list = json_object_new_object(), *items = json_object_new_array();
    json_object *meta = json_object_new_object();
    json_object_object_add(meta, "resourceVersion", json_object_new_string("7"));
    json_object_object_add(list, "metadata", meta);
    json_object_object_add(list, "items", items);
    if (a)
        json_object_array_add(items, a);
    if (b)
        json_object_array_add(items, b);
    if (c)
        json_object_array_add(items, c);
    char *s = strdup(json_object_to_json_string(list));
    json_object_put(list);
    return s;
}

/* The fake API, its client and the default DRA GPU classes. */
struct rig {
    struct gpu_set dra;
    struct fake_kube api;
    struct kube_client *c;
};

static int rig_setup(void **state)
{
    struct rig *g = calloc(1, sizeof(*g));
    if (!g || gpu_set_parse(&g->dra, DRA_GPU_SET_DEFAULT) != K_OK)
        return -1;
    fake_kube_init(&g->api);
    g->c = fake_kube_client(&g->api);
    *state = g;
    return 0;
}

static int rig_teardown(void **state)
{
    struct rig *g = *state;
    kube_client_free(g->c);
    fake_kube_cleanup(&g->api);
    gpu_set_cleanup(&g->dra);
    free(g);
    return 0;
}

static void test_rows(void **state)
{
    struct rig *g = *state;
    struct fake_kube *const api = &g->api;
    struct kube_client *c = g->c;
    struct gpu_set *const dra = &g->dra;

    /* a Job and a StatefulSet refused for GPUs, a ReplicaSet for CPU only, an old refusal */
    char *events =
        list_of(event_aged("job-refused.json", 5), event_aged("statefulset-refused.json", 5),
                event_aged("replicaset-refused-cpu.json", 5));
    fake_kube_answer(api, 200, 0, events);
    free(events);
    /* the namespace's pods: the StatefulSet got one after its refusal */
    char pods[1024];
    char when[32];
    test_rfc3339((int64_t)time(NULL), when);
    json_object *sts = test_load_json(FIXTURES_DIR, "quota/statefulset-refused.json");
    json_object *io = NULL, *uid = NULL;
    json_object_object_get_ex(sts, "involvedObject", &io);
    json_object_object_get_ex(io, "uid", &uid);
    snprintf(pods, sizeof(pods),
             "{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[{\"metadata\":{\"name\":\"sts-"
             "0\",\"namespace\":\"qsnap\",\"uid\":\"p1\","
             "\"creationTimestamp\":\"%s\",\"ownerReferences\":[{\"kind\":\"StatefulSet\","
             "\"name\":\"sts\",\"uid\":\"%s\",\"controller\":true}]},\"spec\":{\"containers\":"
             "[{\"name\":\"c\"}]}}]}",
             when, json_object_get_string(uid));
    json_object_put(sts);
    fake_kube_answer(api, 200, 0, pods);
    /* the Job still exists (GET) */
    json_object *job = test_load_json(FIXTURES_DIR, "quota/job-refused.json");
    json_object_object_get_ex(job, "involvedObject", &io);
    json_object_object_get_ex(io, "uid", &uid);
    char job_obj[512];
    snprintf(job_obj, sizeof(job_obj), "{\"metadata\":{\"name\":\"job\",\"uid\":\"%s\"}}",
             json_object_get_string(uid));
    json_object_put(job);
    fake_kube_answer(api, 200, 0, job_obj);

    struct pod_rows rows = {0};
    struct kube_error err = {0};
    assert_int_equal(pods_fetch_owner_rows(c, &test_gpus, dra, "qsnap", &rows, &err), K_OK);
    assert_int_equal(fake_kube_count(api), 3);
    assert_string_equal(fake_kube_request(api, 0)->path,
                        "/api/v1/namespaces/qsnap/events?fieldSelector=type%3DWarning%2Creason%3D"
                        "FailedCreate&limit=500");
    assert_true(strncmp(fake_kube_request(api, 1)->path, "/api/v1/namespaces/qsnap/pods", 29) == 0);
    assert_string_equal(fake_kube_request(api, 2)->path,
                        "/apis/batch/v1/namespaces/qsnap/jobs/job");
    assert_int_equal(rows.n, 1);
    assert_string_equal(rows.items[0].ns, "qsnap");
    assert_string_equal(rows.items[0].name, "Job/job");
    assert_string_equal(rows.items[0].cause, "quota-exceeded");
    assert_string_equal(rows.items[0].phase, "NoPod");
    assert_int_equal(rows.items[0].source, POD_ROW_EVENTS);
    assert_int_equal(resource_list_get(&rows.items[0].gpus, "nvidia.com/gpu"), 2);
    assert_non_null(strstr(rows.items[0].detail, "ResourceQuota gpu-quota refuses the GPU pods"));
    assert_true(rows.items[0].since > 0); /* the refusal's time: AGE */
    json_object *item = pods_item(&rows.items[0]), *meta, *st, *v;
    assert_non_null(item);
    assert_true(json_object_object_get_ex(item, "metadata", &meta));
    assert_true(json_object_object_get_ex(meta, "name", &v));
    assert_string_equal(json_object_get_string(v), "job");
    assert_true(json_object_object_get_ex(item, "status", &st));
    assert_true(json_object_object_get_ex(st, "ownerKind", &v));
    assert_string_equal(json_object_get_string(v), "Job");
    assert_true(json_object_object_get_ex(st, "source", &v));
    assert_string_equal(json_object_get_string(v), "events");
    struct printer pr;
    char perr[128];
    assert_int_equal(printer_parse("name", &pr, perr, sizeof(perr)), K_OK);
    struct buf out;
    buf_init(&out, 1 << 20);
    assert_int_equal(printer_print_item(&pr, item, &pods_table, false, &out, perr, sizeof(perr)),
                     K_OK);
    assert_string_equal(buf_cstr(&out), "job.batch/job\n");
    buf_reset(&out);
    pr.format = PRINTER_TABLE;
    assert_int_equal(printer_print_item(&pr, item, &pods_table, true, &out, perr, sizeof(perr)),
                     K_OK);
    assert_non_null(strstr(buf_cstr(&out), "Job/job"));
    buf_cleanup(&out);
    json_object_put(item);
    pod_rows_cleanup(&rows);

    /* the Job deleted since (404), then replaced by another of the same name: no row */
    for (int replaced = 0; replaced < 2; replaced++) {
        events = list_of(event_aged("job-refused.json", 5), NULL, NULL);
        fake_kube_answer(api, 200, 0, events);
        free(events);
        fake_kube_answer(api, 200, 0, "{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[]}");
        if (replaced)
            fake_kube_answer(api, 200, 0, "{\"metadata\":{\"name\":\"job\",\"uid\":\"new\"}}");
        else
            fake_kube_answer(api, 404, 0, "{\"kind\":\"Status\",\"code\":404}");
        assert_int_equal(pods_fetch_owner_rows(c, &test_gpus, dra, "qsnap", &rows, &err), K_OK);
        assert_int_equal(rows.n, 0);
        pod_rows_cleanup(&rows);
    }
    /* no RBAC get on Jobs: the row stays */
    events = list_of(event_aged("job-refused.json", 5), NULL, NULL);
    fake_kube_answer(api, 200, 0, events);
    free(events);
    fake_kube_answer(api, 200, 0, "{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[]}");
    fake_kube_answer(api, 403, 0, "{\"kind\":\"Status\",\"code\":403}");
    assert_int_equal(pods_fetch_owner_rows(c, &test_gpus, dra, "qsnap", &rows, &err), K_OK);
    assert_int_equal(rows.n, 1);
    pod_rows_cleanup(&rows);

    /* a refusal older than the window: no row, no GET, and no LIST of its namespace's pods */
    size_t before = fake_kube_count(api);
    events = list_of(event_aged("job-refused.json", QUOTA_OWNER_WINDOW + 60), NULL, NULL);
    fake_kube_answer(api, 200, 0, events);
    free(events);
    assert_int_equal(pods_fetch_owner_rows(c, &test_gpus, dra, NULL, &rows, &err), K_OK);
    assert_int_equal(rows.n, 0);
    assert_int_equal(fake_kube_count(api), before + 1);
    assert_string_equal(fake_kube_request(api, before)->path,
                        "/api/v1/events?fieldSelector=type%3DWarning%2Creason%3DFailedCreate&"
                        "limit=500");
    pod_rows_cleanup(&rows);

    /* Events may not be listed: the error, no rows */
    fake_kube_answer(api, 403, 0, "{\"kind\":\"Status\",\"reason\":\"Forbidden\"}");
    assert_int_not_equal(pods_fetch_owner_rows(c, &test_gpus, dra, "qsnap", &rows, &err), K_OK);
    assert_int_equal(rows.n, 0);
    pod_rows_cleanup(&rows);
}

/* One namespace's forged FailedCreate Events for 1,000 owners (half dated in the year 9999) take
 * its share of the rows (OWNER_ROWS_MAX / QUOTA_OWNER_NS_SHARE), not the row of another
 * namespace's refused Job listed after them. */
static void test_forged_flood(void **state)
{
    struct rig *g = *state;
    struct fake_kube *const api = &g->api;
    struct kube_client *c = g->c;
    struct gpu_set *const dra = &g->dra;
    json_object *list = json_object_new_object(), *items = json_object_new_array();
    json_object *list_meta = json_object_new_object();
    json_object_object_add(list_meta, "resourceVersion", json_object_new_string("7"));
    json_object_object_add(list, "metadata", list_meta);
    json_object_object_add(list, "items", items);
    for (int i = 0; i < 1000; i++) {
        json_object *ev = event_aged("job-refused.json", 5), *io = NULL, *meta = NULL;
        if (i % 2)
            test_event_dated(ev, 253402300799);
        char name[32];
        snprintf(name, sizeof(name), "forged-%04d", i);
        json_object_object_get_ex(ev, "metadata", &meta);
        json_object_object_add(meta, "namespace", json_object_new_string("aaa"));
        json_object_object_add(meta, "name", json_object_new_string(name));
        json_object_object_get_ex(ev, "involvedObject", &io);
        json_object_object_add(io, "namespace", json_object_new_string("aaa"));
        json_object_object_add(io, "name", json_object_new_string(name));
        json_object_object_add(io, "uid", json_object_new_string(name));
        json_object_array_add(items, ev);
    }
    json_object_array_add(items, event_aged("job-refused.json", 5));
    fake_kube_answer(api, 200, 0, json_object_to_json_string(list));
    json_object_put(list);
    const char *empty = "{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[]}";
    fake_kube_answer(api, 200, 0, empty); /* pods of aaa */
    fake_kube_answer(api, 200, 0, empty); /* pods of qsnap */
    for (int i = 0; i < 60; i++)          /* the lookups: the first forged owners are gone */
        fake_kube_answer(api, 404, 0, "{\"kind\":\"Status\",\"code\":404}");
    struct pod_rows rows = {0};
    struct kube_error err = {0};
    assert_int_equal(pods_fetch_owner_rows(c, &test_gpus, dra, NULL, &rows, &err), K_OK);
    size_t share = 1024 / QUOTA_OWNER_NS_SHARE, real = 0;
    for (size_t i = 0; i < rows.n; i++)
        real += strcmp(rows.items[i].ns, "qsnap") == 0;
    assert_int_equal(real, 1);
    /* 60 lookups answered 404, the last 4 of the 64 with an empty object */
    assert_in_range(rows.n - real, share - 64, share - 60);
    pod_rows_cleanup(&rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rows, rig_setup, rig_teardown),
        cmocka_unit_test_setup_teardown(test_forged_flood, rig_setup, rig_teardown)};
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
