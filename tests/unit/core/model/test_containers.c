/* test_containers.c - the container-status rules of core/model/containers.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/containers.h"
#include "model/model.h"

static void test_started_once(void **state)
{
    (void)state;
    struct container_state c = {0};
    assert_false(container_started_once(&c)); /* no status yet */
    c.has_status = true;
    c.waiting_reason = "ContainerCreating";
    assert_false(container_started_once(&c));
    c.running = true;
    assert_true(container_started_once(&c));
    c.running = false;
    c.has_last = true;
    c.last_reason = "StartError";
    assert_false(container_started_once(&c));
    c.last_reason = "ContainerCannotRun";
    assert_false(container_started_once(&c));
    c.last_reason = "Error"; /* the application ran and exited */
    assert_true(container_started_once(&c));
    c.has_last = false;
    c.terminated = true;
    c.term_reason = "Completed";
    assert_true(container_started_once(&c));
    c.term_reason = "StartError";
    assert_false(container_started_once(&c));
    assert_true(container_start_failed_reason("StartError"));
    assert_false(container_start_failed_reason(NULL));
}

static void test_gpu_containers(void **state)
{
    (void)state;
    struct container_state items[3] = {
        {.name = "init",
         .init = true,
         .has_status = true,
         .terminated = true,
         .term_reason = "Completed"},
        {.name = "cuda", .gpu_resource = true, .has_status = true, .waiting_reason = "X"},
        {.name = "side", .has_status = true, .running = true},
    };
    struct pod_containers cs = {items, 3, 3};
    struct kpod p = {.containers = &cs};
    assert_true(pod_containers_any_gpu(&cs, false));
    assert_false(pod_gpu_containers_started(&p, false));
    items[1].running = true;
    assert_true(pod_gpu_containers_started(&p, false));
    /* none is a GPU container: every container counts */
    items[1].gpu_resource = false;
    items[1].running = false;
    assert_false(pod_containers_any_gpu(&cs, false));
    assert_false(pod_gpu_containers_started(&p, false));
    /* a claim reference counts when the claims ask for a GPU */
    items[2].claim_ref = true;
    assert_true(pod_containers_any_gpu(&cs, true));
    assert_true(pod_gpu_containers_started(&p, true));
    p.containers = NULL;
    assert_true(pod_gpu_containers_started(&p, false)); /* nothing known: nothing to watch */
}

static void test_equal_and_dup(void **state)
{
    (void)state;
    struct container_state a = {.name = "x", .waiting_message = "m", .restarts = 1};
    struct container_state b = a;
    struct pod_containers ca = {&a, 1, 1}, cb = {&b, 1, 1};
    assert_true(pod_containers_equal(&ca, &cb));
    b.restarts = 2;
    assert_false(pod_containers_equal(&ca, &cb));
    assert_true(pod_containers_equal(NULL, NULL));
    assert_false(pod_containers_equal(&ca, NULL));
    char *out = (char *)1;
    assert_int_equal(container_message_dup(NULL, &out), 0);
    assert_null(out);
    assert_int_equal(container_message_dup("short", &out), 0);
    assert_string_equal(out, "short");
    free(out);
    pod_containers_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_started_once),
        cmocka_unit_test(test_gpu_containers),
        cmocka_unit_test(test_equal_and_dup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
