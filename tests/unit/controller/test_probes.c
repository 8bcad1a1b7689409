/*
 * Tests for controller/probes.c: what /metrics, /healthz, /livez and /readyz answer, and which
 * servers controller_probes_start() starts for which addresses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller_internal.h"
#include "fake_kube.h"
#include "objects.h"
#include "text.h"
#include "util/result.h"

struct fixture {
    struct fake_kube api;
    struct gpu_set gpus;
    struct clock_fake clk;
    struct clock clock;
    struct controller *c;
};

static struct fixture *fixture_new(const char *metrics_addr, const char *health_addr)
{
    struct fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    fake_kube_init(&f->api);
    gpu_set_parse(&f->gpus, GPU_SET_DEFAULT);
    clock_fake_init(&f->clk, 1764513000000);
    f->clock = clock_fake_clock(&f->clk);
    struct controller_options o = {.instance = "test",
                                   .clock = &f->clock,
                                   .metrics_addr = metrics_addr,
                                   .health_addr = health_addr};
    f->c = controller_new(&f->api.cfg, &f->gpus, &o);
    assert_non_null(f->c);
    return f;
}

static void fixture_free(struct fixture *f)
{
    controller_free(f->c);
    gpu_set_cleanup(&f->gpus);
    fake_kube_cleanup(&f->api);
    free(f);
}

/* controller_serve() on `path`: the status; the body into out (len bytes). */
static unsigned serve(struct controller *c, const char *path, const char **type, char *out,
                      size_t len)
{
    struct buf body;
    buf_init(&body, 1u << 20);
    *type = NULL;
    unsigned st = controller_serve(c, path, &body, type);
    snprintf(out, len, "%.*s", (int)body.len, body.len ? body.data : "");
    buf_cleanup(&body);
    return st;
}

static void test_probe_answers(void **state)
{
    (void)state;
    struct fixture *f = fixture_new(NULL, NULL);
    const char *type;
    char out[256];
    assert_int_equal(serve(f->c, "/healthz", &type, out, sizeof(out)), 200);
    assert_string_equal(out, "ok\n");
    assert_null(type);
    assert_int_equal(serve(f->c, "/livez", &type, out, sizeof(out)), 200);
    assert_string_equal(out, "ok\n");
    /* the informers have not listed yet */
    assert_int_equal(serve(f->c, "/readyz", &type, out, sizeof(out)), 503);
    assert_string_equal(out, "caches not synced\n");
    assert_int_equal(serve(f->c, "/nothing", &type, out, sizeof(out)), 404);
    assert_string_equal(out, "not found\n");
    fixture_free(f);
}

/* /metrics counts the store's pending GPU pods by namespace, cause and resource. */
static void test_metrics_counts_pending_pods(void **state)
{
    (void)state;
    struct fixture *f = fixture_new(NULL, NULL);
    struct informer_handlers pods = controller_pod_handlers(f->c);
    const char *causes[] = {"exhausted", "exhausted", NULL};
    const char *names[] = {"a", "b", "c"};
    for (size_t i = 0; i < 3; i++) {
        json_object *pod = test_pod("team", names[i], "1", NULL, "Pending", NULL, 1, causes[i]);
        pods.upsert(pods.ctx, pod);
        json_object_put(pod);
    }
    /* a running pod is not pending */
    json_object *run = test_pod("team", "d", "1", "node-0", "Running", NULL, 1, NULL);
    pods.upsert(pods.ctx, run);
    json_object_put(run);

    struct buf body;
    buf_init(&body, 1u << 20);
    const char *type = NULL;
    assert_int_equal(controller_serve(f->c, "/metrics", &body, &type), 200);
    assert_string_equal(type, "text/plain; version=0.0.4; charset=utf-8");
    assert_int_equal(buf_append(&body, "", 1), K_OK);
    char got[256];
    test_lines_with(
        body.data,
        "gputri_pending_gpu_pods{namespace=\"team\",cause=\"exhausted\",resource=\"nvidia_"
        "com_gpu\"}",
        got, sizeof(got));
    assert_string_equal(got, "gputri_pending_gpu_pods{namespace=\"team\",cause=\"exhausted\","
                             "resource=\"nvidia_com_gpu\"} 2\n");
    test_lines_with(
        body.data,
        "gputri_pending_gpu_pods{namespace=\"team\",cause=\"none\",resource=\"nvidia_com_"
        "gpu\"}",
        got, sizeof(got));
    assert_string_equal(got, "gputri_pending_gpu_pods{namespace=\"team\",cause=\"none\","
                             "resource=\"nvidia_com_gpu\"} 1\n");
    buf_cleanup(&body);
    fixture_free(f);
}

/* "0" turns a server off; a bad address fails the start; the probes share a fixed address with
 * the metrics, and get their own server when the port is 0 (any). */
static void test_start_addresses(void **state)
{
    (void)state;
    struct fixture *f = fixture_new("0", "0");
    assert_int_equal(controller_probes_start(f->c), K_OK);
    assert_null(f->c->metrics_srv);
    assert_null(f->c->health_srv);
    controller_probes_stop(f->c);
    fixture_free(f);

    f = fixture_new("0", "nonsense");
    assert_int_equal(controller_probes_start(f->c), K_EINVAL);
    controller_probes_stop(f->c);
    fixture_free(f);

    f = fixture_new("127.0.0.1:0", "127.0.0.1:0");
    assert_int_equal(controller_probes_start(f->c), K_OK);
    assert_non_null(f->c->metrics_srv);
    assert_non_null(f->c->health_srv);
    assert_int_not_equal(httpd_port(f->c->metrics_srv), httpd_port(f->c->health_srv));
    controller_probes_stop(f->c);
    controller_probes_stop(f->c); /* idempotent */
    assert_null(f->c->metrics_srv);
    fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe_answers),
        cmocka_unit_test(test_metrics_counts_pending_pods),
        cmocka_unit_test(test_start_addresses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
