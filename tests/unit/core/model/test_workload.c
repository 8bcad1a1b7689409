/*
 * test_workload.c - core/model/workload.c: which condition of a Kueue Workload holds its job back,
 * ownership and equality.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "model/workload.h"

static void test_waiting(void **state)
{
    (void)state;
    const char *type = NULL;
    struct kworkload w = {0};
    assert_null(workload_waiting(&w, &type)); /* no condition written yet */
    assert_null(workload_waiting(NULL, &type));
    w.quota_reserved.status = COND_FALSE;
    assert_ptr_equal(workload_waiting(&w, &type), &w.quota_reserved);
    assert_string_equal(type, "QuotaReserved");
    w.quota_reserved.status = COND_TRUE;
    assert_null(workload_waiting(&w, &type)); /* reserved, no admission check said no */
    w.admitted.status = COND_FALSE;
    assert_ptr_equal(workload_waiting(&w, &type), &w.admitted);
    assert_string_equal(type, "Admitted");
    w.admitted.status = COND_TRUE;
    assert_null(workload_waiting(&w, &type));
    w.quota_reserved.status = COND_FALSE;
    w.finished = true;
    assert_null(workload_waiting(&w, &type));
    w.finished = false;
    w.deleting = true;
    assert_null(workload_waiting(&w, &type));
}

static void test_owned_and_equal(void **state)
{
    (void)state;
    char uid[] = "u1", kind[] = "Pod", name[] = "p";
    struct kworkload a = {.n_owners = 1}, b;
    a.owners[0] = (struct workload_owner){kind, name, uid};
    assert_true(workload_owned_by(&a, "u1"));
    assert_false(workload_owned_by(&a, "u2"));
    assert_false(workload_owned_by(&a, NULL));
    assert_false(workload_owned_by(&a, ""));
    b = a;
    assert_true(workload_equal(&a, &b));
    char msg[] = "m";
    b.quota_reserved.message = msg;
    assert_false(workload_equal(&a, &b));
    workload_cleanup(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_waiting),
        cmocka_unit_test(test_owned_and_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
