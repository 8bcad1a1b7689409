/* test_model.c - core/model/model.c: saturating arithmetic, resource lists, pod_equal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/model.h"
#include "util/result.h"

static void test_saturating_arithmetic(void **state)
{
    (void)state;
    assert_true(int64_add_sat(2, 3) == 5);
    assert_true(int64_add_sat(INT64_MAX, 1) == INT64_MAX);
    assert_true(int64_add_sat(INT64_MAX, INT64_MAX) == INT64_MAX);
    assert_true(int64_add_sat(INT64_MIN, -1) == INT64_MIN);
    assert_true(int64_add_sat(INT64_MAX, INT64_MIN) == -1);
    assert_true(int64_sub_sat(5, 3) == 2);
    assert_true(int64_sub_sat(INT64_MAX, -1) == INT64_MAX);
    assert_true(int64_sub_sat(0, INT64_MIN) == INT64_MAX);
    assert_true(int64_sub_sat(INT64_MIN, 1) == INT64_MIN);
    assert_true(int64_sub_sat(-1, INT64_MAX) == INT64_MIN);
}

/* 1,001 amounts of 9223372036854775807 sum to INT64_MAX, not to a wrapped (free-looking) value. */
static void test_resource_list_add_saturates(void **state)
{
    (void)state;
    struct resource_list l = {0};
    for (int i = 0; i < 1001; i++)
        assert_int_equal(resource_list_add(&l, "nvidia.com/gpu", INT64_MAX), K_OK);
    assert_true(resource_list_get(&l, "nvidia.com/gpu") == INT64_MAX);
    assert_int_equal(l.n, 1);
    assert_int_equal(resource_list_add(&l, "amd.com/gpu", INT64_MIN), K_OK);
    assert_int_equal(resource_list_add(&l, "amd.com/gpu", -5), K_OK);
    assert_true(resource_list_get(&l, "amd.com/gpu") == INT64_MIN);
    assert_int_equal(resource_list_add(&l, "amd.com/gpu", 7), K_OK);
    assert_true(resource_list_get(&l, "amd.com/gpu") == INT64_MIN + 7);
    resource_list_cleanup(&l);
    assert_int_equal(l.n, 0);
}

/* A list holds RESOURCE_LIST_MAX names; a new name past that fails and leaves the list alone. */
static void test_resource_list_cap(void **state)
{
    (void)state;
    struct resource_list l = {0};
    char name[32];
    for (int i = 0; i < RESOURCE_LIST_MAX; i++) {
        snprintf(name, sizeof(name), "example.com/r%d", i);
        assert_int_equal(resource_list_add(&l, name, i + 1), K_OK);
    }
    assert_int_equal(resource_list_add(&l, "example.com/one-too-many", 1), K_ETOOBIG);
    assert_int_equal(l.n, RESOURCE_LIST_MAX);
    assert_true(resource_list_get(&l, "example.com/one-too-many") == 0);
    /* names already listed still add */
    assert_int_equal(resource_list_add(&l, "example.com/r0", 1), K_OK);
    assert_true(resource_list_get(&l, "example.com/r0") == 2);
    resource_list_cleanup(&l);
}

/* pod_pack_names(): one block, the same strings, a NULL field stays NULL, freed by pod_cleanup. */
static void test_pod_pack_names(void **state)
{
    (void)state;
    struct kpod p = {0};
    p.ns = strdup("team-a");
    p.name = strdup("trainer-0");
    p.uid = strdup("00000000-0000-4000-0001-000000000001");
    p.cause = strdup("exhausted");
    assert_int_equal(resource_list_add(&p.gpu_requests, "nvidia.com/gpu", 2), K_OK);
    assert_int_equal(resource_list_add(&p.gpu_requests, "amd.com/gpu", 1), K_OK);
    assert_int_equal(pod_pack_names(&p), K_OK);
    assert_non_null(p.packed);
    assert_ptr_equal(p.ns, p.packed);
    assert_string_equal(p.ns, "team-a");
    assert_string_equal(p.name, "trainer-0");
    assert_string_equal(p.uid, "00000000-0000-4000-0001-000000000001");
    assert_null(p.node_name);
    assert_string_equal(p.cause, "exhausted");
    /* the GPU requests in the block too, aligned, in order */
    assert_int_equal(p.gpu_requests.n, 2);
    assert_true((char *)p.gpu_requests.items > p.packed);
    assert_int_equal((uintptr_t)p.gpu_requests.items % _Alignof(struct resource_amount), 0);
    assert_string_equal(p.gpu_requests.items[0].name, "nvidia.com/gpu");
    assert_int_equal(p.gpu_requests.items[0].value, 2);
    assert_string_equal(p.gpu_requests.items[1].name, "amd.com/gpu");
    assert_int_equal(resource_list_get(&p.gpu_requests, "amd.com/gpu"), 1);
    assert_int_equal(pod_pack_names(&p), K_OK); /* already packed: unchanged */
    assert_string_equal(p.name, "trainer-0");
    pod_cleanup(&p);
    assert_null(p.packed);
    struct kpod empty = {0};
    assert_int_equal(pod_pack_names(&empty), K_OK);
    pod_cleanup(&empty);
}

/* A pending pod with a request, a toleration and a PodScheduled message. */
static void make_pod(struct kpod *p, const char *message)
{
    memset(p, 0, sizeof(*p));
    p->ns = strdup("team-a");
    p->name = strdup("trainer-0");
    p->uid = strdup("00000000-0000-4000-0001-000000000001");
    p->phase = POD_PHASE_PENDING;
    assert_int_equal(resource_list_add(&p->gpu_requests, "nvidia.com/gpu", 2), K_OK);
    p->tolerations = calloc(1, sizeof(*p->tolerations));
    p->n_tolerations = 1;
    p->tolerations[0] =
        (struct toleration){strdup("gpu"), strdup("Exists"), strdup(""), strdup("NoSchedule")};
    p->scheduled.status = COND_FALSE;
    p->scheduled.message = strdup(message);
}

/* pod_equal(): by content, wherever the names live; each kind of difference counts. */
static void test_pod_equal(void **state)
{
    (void)state;
    struct kpod a, b;
    make_pod(&a, "0/3 nodes are available");
    make_pod(&b, "0/3 nodes are available");
    assert_true(pod_equal(&a, &b));
    assert_int_equal(pod_pack_names(&b), K_OK); /* packed or not, the same names */
    assert_true(pod_equal(&a, &b));
    a.phase = POD_PHASE_RUNNING;
    assert_false(pod_equal(&a, &b));
    a.phase = POD_PHASE_PENDING;
    a.gpu_requests.items[0].value = 1;
    assert_false(pod_equal(&a, &b));
    a.gpu_requests.items[0].value = 2;
    a.tolerations[0].effect[0] = '\0';
    assert_false(pod_equal(&a, &b));
    pod_cleanup(&a);
    make_pod(&a, "0/4 nodes are available");
    assert_false(pod_equal(&a, &b));
    pod_cleanup(&a);
    make_pod(&a, "0/3 nodes are available");
    a.cause = strdup("exhausted"); /* NULL and a string differ */
    assert_false(pod_equal(&a, &b));
    assert_false(pod_equal(&b, &a));
    pod_cleanup(&a);
    pod_cleanup(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_saturating_arithmetic),
        cmocka_unit_test(test_resource_list_add_saturates),
        cmocka_unit_test(test_resource_list_cap),
        cmocka_unit_test(test_pod_pack_names),
        cmocka_unit_test(test_pod_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
