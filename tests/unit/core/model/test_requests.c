/*
 * test_requests.c - a pod's effective request from its containers (core/model/requests.c), on the
 * cases of kubernetes/component-helpers resource/helpers_test.go TestPodResourceRequests: sums of
 * containers, init containers that run alone, sidecars that keep running, overhead, defaults
 * from limits, rounding of milli amounts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "model/model.h"
#include "model/requests.h"
#include "util/result.h"

#define GPU "nvidia.com/gpu"
#define MIG "nvidia.com/mig-1g.10gb"

/* A list of "name=milli" pairs; NULL-terminated. */
static struct resource_list list_of(const char *const *pairs)
{
    struct resource_list l = {0};
    for (size_t i = 0; pairs && pairs[i]; i++) {
        char name[128];
        long long v;
        assert_int_equal(sscanf(pairs[i], "%127[^=]=%lld", name, &v), 2);
        assert_int_equal(resource_list_add(&l, name, v), K_OK);
    }
    return l;
}

struct step {
    enum { CONTAINER, INIT, SIDECAR } kind;
    const char *pairs[3];
};

/* Runs the steps and returns the effective request of `name` (whole units; 0 when absent). */
static int64_t run(const struct step *steps, size_t n, const char *const *overhead,
                   const char *name, size_t *n_out)
{
    struct pod_requests pr = {0};
    for (size_t i = 0; i < n; i++) {
        struct resource_list one = list_of(steps[i].pairs);
        int rc = steps[i].kind == CONTAINER
                     ? pod_requests_add_container(&pr, &one)
                     : pod_requests_add_init(&pr, &one, steps[i].kind == SIDECAR);
        assert_int_equal(rc, K_OK);
        resource_list_cleanup(&one);
    }
    struct resource_list oh = list_of(overhead), out = {0};
    assert_int_equal(pod_requests_finish(&pr, overhead ? &oh : NULL, &out), K_OK);
    int64_t v = resource_list_get(&out, name);
    if (n_out)
        *n_out = out.n;
    resource_list_cleanup(&oh);
    resource_list_cleanup(&out);
    return v;
}

#define RUN(steps, overhead, name)                                                                 \
    run(steps, sizeof(steps) / sizeof(steps[0]), overhead, name, NULL)

static void test_containers_add_up(void **state)
{
    (void)state;
    const struct step s[] = {{CONTAINER, {GPU "=1000", MIG "=2000"}}, {CONTAINER, {GPU "=2000"}}};
    assert_int_equal(RUN(s, NULL, GPU), 3);
    assert_int_equal(RUN(s, NULL, MIG), 2);
}

/* An init container runs alone: the pod needs the larger of it and the sum of the containers. */
static void test_init_containers_take_the_max(void **state)
{
    (void)state;
    const struct step big[] = {{INIT, {GPU "=4000"}},
                               {INIT, {GPU "=2000"}},
                               {CONTAINER, {GPU "=1000"}},
                               {CONTAINER, {GPU "=2000"}}};
    assert_int_equal(RUN(big, NULL, GPU), 4);
    const struct step small[] = {{INIT, {GPU "=2000"}}, {CONTAINER, {GPU "=3000"}}};
    assert_int_equal(RUN(small, NULL, GPU), 3);
    /* a resource only an init container asks for is still asked for */
    const struct step only_init[] = {{INIT, {MIG "=1000"}}, {CONTAINER, {GPU "=1000"}}};
    assert_int_equal(RUN(only_init, NULL, MIG), 1);
    assert_int_equal(RUN(only_init, NULL, GPU), 1);
}

/*
 * A restartable init container (sidecar) keeps running: it adds to the containers, and every
 * init container after it runs beside it (KEP-753).
 */
static void test_sidecars(void **state)
{
    (void)state;
    /* sidecar 1, then init 2 beside it: init time needs 3; run time 1 + 1 */
    const struct step before[] = {
        {SIDECAR, {GPU "=1000"}}, {INIT, {GPU "=2000"}}, {CONTAINER, {GPU "=1000"}}};
    assert_int_equal(RUN(before, NULL, GPU), 3);
    /* init 2 before the sidecar starts: init time needs 2; run time 1 + 1 */
    const struct step after[] = {
        {INIT, {GPU "=2000"}}, {SIDECAR, {GPU "=1000"}}, {CONTAINER, {GPU "=1000"}}};
    assert_int_equal(RUN(after, NULL, GPU), 2);
    /* sidecars add up with the containers at run time */
    const struct step many[] = {{SIDECAR, {GPU "=1000"}},
                                {SIDECAR, {GPU "=2000"}},
                                {INIT, {GPU "=1000"}},
                                {CONTAINER, {GPU "=1000"}}};
    assert_int_equal(RUN(many, NULL, GPU), 4);
    /* a big init after two sidecars: 5 + 3 at init time */
    const struct step big_init[] = {{SIDECAR, {GPU "=1000"}},
                                    {SIDECAR, {GPU "=2000"}},
                                    {INIT, {GPU "=5000"}},
                                    {CONTAINER, {GPU "=1000"}}};
    assert_int_equal(RUN(big_init, NULL, GPU), 8);
}

static void test_overhead(void **state)
{
    (void)state;
    const struct step s[] = {{INIT, {GPU "=3000"}}, {CONTAINER, {GPU "=1000"}}};
    const char *const oh[] = {GPU "=1000", MIG "=1000", NULL};
    assert_int_equal(RUN(s, oh, GPU), 4); /* max(3, 1) + 1 */
    assert_int_equal(RUN(s, oh, MIG), 1);
}

/* Milli amounts add up before Value() rounds the total up; totals at or below 0 are dropped. */
static void test_rounding_and_zero(void **state)
{
    (void)state;
    size_t n;
    const struct step halves[] = {{CONTAINER, {GPU "=500"}}, {CONTAINER, {GPU "=500"}}};
    assert_int_equal(RUN(halves, NULL, GPU), 1);
    const struct step one_half[] = {{CONTAINER, {GPU "=1500"}}};
    assert_int_equal(RUN(one_half, NULL, GPU), 2);
    const struct step tiny[] = {{CONTAINER, {GPU "=1"}}};
    assert_int_equal(RUN(tiny, NULL, GPU), 1);
    const struct step zero[] = {{CONTAINER, {GPU "=0", MIG "=-1000"}}};
    assert_int_equal(run(zero, 1, NULL, GPU, &n), 0);
    assert_int_equal(n, 0);
    /* sums saturate instead of wrapping */
    const struct step huge[] = {{CONTAINER, {GPU "=9223372036854775807"}},
                                {CONTAINER, {GPU "=9223372036854775807"}}};
    assert_true(RUN(huge, NULL, GPU) > 0);
}

static void test_no_containers(void **state)
{
    (void)state;
    size_t n = 99;
    assert_int_equal(run(NULL, 0, NULL, GPU, &n), 0);
    assert_int_equal(n, 0);
}

/* The API server defaults a request from the limit only where requests does not name it. */
static void test_requests_default_from_limits(void **state)
{
    (void)state;
    const char *const req[] = {GPU "=1000", MIG "=0", NULL};
    const char *const lim[] = {GPU "=2000", MIG "=3000", "amd.com/gpu=4000", NULL};
    struct resource_list r = list_of(req), l = list_of(lim), out = {0};
    assert_int_equal(container_requests_default(&r, &l, &out), K_OK);
    assert_int_equal(out.n, 3);
    assert_int_equal(resource_list_get(&out, GPU), 1000);
    assert_int_equal(resource_list_get(&out, MIG), 0); /* listed as 0: stays 0 */
    assert_int_equal(resource_list_get(&out, "amd.com/gpu"), 4000);
    resource_list_cleanup(&out);

    assert_int_equal(container_requests_default(NULL, &l, &out), K_OK);
    assert_int_equal(resource_list_get(&out, MIG), 3000);
    resource_list_cleanup(&out);
    assert_int_equal(container_requests_default(&r, NULL, &out), K_OK);
    assert_int_equal(out.n, 2);
    resource_list_cleanup(&out);
    assert_int_equal(container_requests_default(NULL, NULL, &out), K_OK);
    assert_int_equal(out.n, 0);

    /* appends to what out holds */
    assert_int_equal(resource_list_add(&out, GPU, 500), K_OK);
    assert_int_equal(container_requests_default(&r, NULL, &out), K_OK);
    assert_int_equal(resource_list_get(&out, GPU), 1500);
    resource_list_cleanup(&out);
    resource_list_cleanup(&r);
    resource_list_cleanup(&l);
}

/* More than RESOURCE_LIST_MAX names is refused; the sums are still cleaned up. */
static void test_too_many_names(void **state)
{
    (void)state;
    struct resource_list one = {0};
    for (int i = 0; i < RESOURCE_LIST_MAX; i++) {
        char name[32];
        snprintf(name, sizeof(name), "example.com/r%d", i);
        assert_int_equal(resource_list_add(&one, name, 1000), K_OK);
    }
    struct resource_list more = {0};
    assert_int_equal(resource_list_add(&more, "example.com/extra", 1000), K_OK);
    struct pod_requests pr = {0};
    assert_int_equal(pod_requests_add_container(&pr, &one), K_OK);
    assert_int_equal(pod_requests_add_container(&pr, &more), K_ETOOBIG);
    pod_requests_cleanup(&pr);
    pod_requests_cleanup(NULL);

    struct resource_list out = {0};
    assert_int_equal(container_requests_default(&one, &more, &out), K_ETOOBIG);
    resource_list_cleanup(&out);
    resource_list_cleanup(&one);
    resource_list_cleanup(&more);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_containers_add_up),
        cmocka_unit_test(test_init_containers_take_the_max),
        cmocka_unit_test(test_sidecars),
        cmocka_unit_test(test_overhead),
        cmocka_unit_test(test_rounding_and_zero),
        cmocka_unit_test(test_no_containers),
        cmocka_unit_test(test_requests_default_from_limits),
        cmocka_unit_test(test_too_many_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
