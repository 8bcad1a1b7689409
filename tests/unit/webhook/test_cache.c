/*
 * Tests for webhook/cache.c: what a snapshot holds after the informers listed nodes,
 * RuntimeClasses, ResourceQuotas, Namespaces and the DRA objects from a plain-HTTP server that
 * answers every GET of a collection with its list, and the node autoscaler it discovered (or the
 * one a fixed mode names).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cache.h"
#include "cache/dra_store.h"
#include "http/server.h"
#include "kube/config.h"
#include "util/result.h"

#define LIST(kind, items)                                                                          \
    "{\"kind\":\"" kind "\",\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[" items "]}"

static const struct {
    const char *path, *body;
} lists[] = {
    {"/api/v1/nodes",
     LIST("NodeList", "{\"metadata\":{\"name\":\"n1\",\"labels\":{\"gpu\":\"yes\"}},\"status\":{"
                      "\"capacity\":{\"nvidia.com/gpu\":\"2\"},\"allocatable\":{\"nvidia.com/gpu\":"
                      "\"2\"}}}")},
    {"/apis/node.k8s.io/v1/runtimeclasses",
     LIST("RuntimeClassList", "{\"metadata\":{\"name\":\"nvidia\"},\"handler\":\"nvidia\","
                              "\"scheduling\":{\"nodeSelector\":{\"gpu\":\"yes\"}}}")},
    {"/api/v1/resourcequotas",
     LIST("ResourceQuotaList",
          "{\"metadata\":{\"name\":\"q\",\"namespace\":\"team\"},\"spec\":{\"hard\":{"
          "\"requests.nvidia.com/gpu\":\"4\"}},\"status\":{\"hard\":{\"requests.nvidia.com/gpu\":"
          "\"4\"},\"used\":{\"requests.nvidia.com/gpu\":\"1\"}}}")},
    {"/api/v1/namespaces",
     LIST("NamespaceList", "{\"metadata\":{\"name\":\"team\",\"labels\":{\"env\":\"lab\"}}},"
                           "{\"metadata\":{\"name\":\"default\"}}")},
    {"/apis/resource.k8s.io",
     "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",\"name\":\"resource.k8s.io\",\"versions\":[{"
     "\"groupVersion\":\"resource.k8s.io/v1\",\"version\":\"v1\"}]}"},
    {"/apis/resource.k8s.io/v1/deviceclasses",
     LIST("DeviceClassList", "{\"metadata\":{\"name\":\"gpu.nvidia.com\"},\"spec\":{}}")},
    {"/apis/resource.k8s.io/v1/resourceslices",
     LIST("ResourceSliceList",
          "{\"metadata\":{\"name\":\"s1\"},\"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":"
          "\"n1\",\"pool\":{\"name\":\"n1\",\"generation\":1,\"resourceSliceCount\":1},"
          "\"devices\":[{\"name\":\"gpu-0\"}]}}")},
    {"/apis/resource.k8s.io/v1/resourceclaims",
     LIST("ResourceClaimList",
          "{\"metadata\":{\"name\":\"c1\",\"namespace\":\"team\"},\"spec\":{\"devices\":{"
          "\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\"}}]}}"
          "}")},
    {"/apis/resource.k8s.io/v1/resourceclaimtemplates",
     LIST("ResourceClaimTemplateList",
          "{\"metadata\":{\"name\":\"t1\",\"namespace\":\"team\"},\"spec\":{\"spec\":{\"devices\":{"
          "\"requests\":[{\"name\":\"r\",\"exactly\":{\"deviceClassName\":\"gpu.nvidia.com\"}}]}}}"
          "}")}, /* discovery of Karpenter's API group; the Cluster Autoscaler status ConfigMap is
                    absent (404) */
    {"/apis/karpenter.sh",
     "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",\"name\":\"karpenter.sh\"}"},
};

/* Every GET of a collection gets its list: the LIST, and the watch after it (which is not an
 * event stream, so the informer backs off and lists again, keeping what it has). */
static void serve(void *ctx, const struct http_request *req, struct http_response *resp)
{
    (void)ctx;
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
        if (strcmp(req->path, lists[i].path) == 0) {
            resp->content_type = "application/json";
            resp->body = strdup(lists[i].body);
            resp->body_len = resp->body ? strlen(resp->body) : 0;
            return;
        }
    }
    resp->status = 404;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_snapshot_after_list(void **state)
{
    (void)state;
    const struct http_route route = {.method = "GET", .path = NULL, .fn = serve};
    struct http_server_options so = {
        .host = "127.0.0.1",
        .port = 0,
        .threads = 2,
        .max_body = 4096,
        .routes = &route,
        .n_routes = 1,
        .name = "fake-apiserver",
    };
    struct http_server *srv = NULL;
    char err[512];
    assert_int_equal(http_server_start(&so, &srv, err, sizeof(err)), K_OK);

    char path[64], yaml[256];
    snprintf(path, sizeof(path), "/tmp/gputri-cache-test.XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    int n = snprintf(yaml, sizeof(yaml),
                     "current-context: t\nclusters:\n- name: t\n  cluster:\n    server: "
                     "http://127.0.0.1:%d\ncontexts:\n- name: t\n  context:\n    cluster: t\n",
                     http_server_port(srv));
    assert_int_equal(write(fd, yaml, (size_t)n), n);
    close(fd);
    struct kube_config cfg = {0};
    assert_int_equal(kube_config_load(path, &cfg, err, sizeof(err)), K_OK);
    unlink(path);

    struct gpu_set gpus, dra_gpus;
    assert_int_equal(gpu_set_parse(&gpus, GPU_SET_DEFAULT), K_OK);
    assert_int_equal(gpu_set_parse(&dra_gpus, DRA_GPU_SET_DEFAULT), K_OK);
    struct wh_cache *c = wh_cache_new(
        &cfg, &gpus, &dra_gpus, true,
        &(struct wh_cache_autoscaler){.mode = WH_AUTOSCALER_MODE_AUTO, .discovery_ms = 3600000});
    assert_non_null(c);
    struct wh_snapshot snap;
    wh_cache_read(c, &snap);
    assert_false(snap.nodes_synced);
    assert_int_equal(snap.n_nodes, 0);
    assert_int_equal(snap.autoscalers, 0); /* not discovered yet */
    wh_cache_release(c);
    assert_false(wh_cache_synced(c));

    assert_int_equal(wh_cache_start(c), K_OK);
    /* bounded by ctest's timeout */
    for (;;) {
        wh_cache_read(c, &snap);
        bool dra = true;
        for (int k = 0; k < DRA_KIND_CORE_COUNT; k++)
            dra = dra && dra_store_synced(snap.dra, (enum dra_kind)k);
        wh_cache_release(c);
        if (wh_cache_synced(c) && dra)
            break;
        sleep_ms(10);
    }
    wh_cache_read(c, &snap);
    assert_true(snap.nodes_synced && snap.runtime_classes_synced && snap.quotas_synced &&
                snap.namespaces_synced);
    assert_true(snap.assume_ert);
    /* synced includes the first discovery check: /apis/karpenter.sh answered 200 */
    assert_int_equal(snap.autoscalers, WH_AUTOSCALER_KARPENTER);
    assert_ptr_equal(snap.gpus, &gpus);
    assert_ptr_equal(snap.dra_gpus, &dra_gpus);
    assert_int_equal(snap.n_nodes, 1);
    assert_string_equal(snap.nodes[0]->name, "n1");
    assert_int_equal(snap.n_runtime_classes, 1);
    assert_string_equal(snap.runtime_classes[0].name, "nvidia");
    assert_int_equal(snap.n_quotas, 1);
    assert_string_equal(snap.quotas[0].ns, "team");
    assert_string_equal(snap.quotas[0].name, "q");
    assert_true(snap.quotas[0].has_status);
    assert_int_equal(snap.n_namespaces, 2);
    assert_string_equal(snap.namespaces[0].name, "default"); /* sorted by name */
    assert_string_equal(snap.namespaces[1].name, "team");
    assert_non_null(snap.dra);
    assert_int_equal(dra_store_count(snap.dra, DRA_KIND_CLASS), 1);
    assert_int_equal(dra_store_count(snap.dra, DRA_KIND_SLICE), 1);
    assert_int_equal(dra_store_count(snap.dra, DRA_KIND_CLAIM), 1);
    assert_int_equal(dra_store_count(snap.dra, DRA_KIND_TEMPLATE), 1);
    wh_cache_release(c);

    wh_cache_stop(c);
    wh_cache_stop(c); /* idempotent */
    wh_cache_free(c);
    wh_cache_free(NULL);
    http_server_stop(srv, 0);
    kube_config_cleanup(&cfg);
    gpu_set_cleanup(&gpus);
    gpu_set_cleanup(&dra_gpus);
}

/* A fixed --autoscaler is in every snapshot from the start, with no discovery thread; no
 * options: none. */
static void test_autoscaler_fixed(void **state)
{
    (void)state;
    struct kube_config cfg = {0};
    struct gpu_set gpus;
    assert_int_equal(gpu_set_parse(&gpus, GPU_SET_DEFAULT), K_OK);
    static const struct {
        enum wh_autoscaler_mode mode;
        unsigned want;
    } cases[] = {
        {WH_AUTOSCALER_MODE_CA, WH_AUTOSCALER_CA},
        {WH_AUTOSCALER_MODE_KARPENTER, WH_AUTOSCALER_KARPENTER},
        {WH_AUTOSCALER_MODE_NONE, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct wh_cache *c =
            wh_cache_new(&cfg, &gpus, NULL, false, &(struct wh_cache_autoscaler){cases[i].mode, 0});
        assert_non_null(c);
        struct wh_snapshot snap;
        wh_cache_read(c, &snap);
        assert_int_equal(snap.autoscalers, cases[i].want);
        wh_cache_release(c);
        wh_cache_free(c);
    }
    struct wh_cache *c = wh_cache_new(&cfg, &gpus, NULL, false, NULL);
    assert_non_null(c);
    struct wh_snapshot snap;
    wh_cache_read(c, &snap);
    assert_int_equal(snap.autoscalers, 0);
    wh_cache_release(c);
    wh_cache_free(c);
    gpu_set_cleanup(&gpus);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snapshot_after_list),
        cmocka_unit_test(test_autoscaler_fixed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
