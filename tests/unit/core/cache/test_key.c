/* Tests for core/cache/key.c: "namespace/name" keys as client-go makes and splits them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cache/key.h"
#include "util/result.h"

static void test_join(void **state)
{
    (void)state;
    char k[16];
    assert_int_equal(meta_namespace_key(k, sizeof(k), "team", "train"), K_OK);
    assert_string_equal(k, "team/train");
    assert_int_equal(meta_namespace_key(k, sizeof(k), NULL, "node-1"), K_OK);
    assert_string_equal(k, "node-1");
    assert_int_equal(meta_namespace_key(k, sizeof(k), "", "node-1"), K_OK);
    assert_string_equal(k, "node-1");
    assert_int_equal(meta_namespace_key(k, sizeof(k), "team", "0123456789a"), K_ETOOBIG);
    assert_string_equal(k, "");
}

static void test_split(void **state)
{
    (void)state;
    char ns[8], name[8];
    assert_int_equal(split_meta_namespace_key("team/train", ns, sizeof(ns), name, sizeof(name)),
                     K_OK);
    assert_string_equal(ns, "team");
    assert_string_equal(name, "train");
    assert_int_equal(split_meta_namespace_key("node-1", ns, sizeof(ns), name, sizeof(name)), K_OK);
    assert_string_equal(ns, "");
    assert_string_equal(name, "node-1");
    assert_int_equal(split_meta_namespace_key("a/b/c", ns, sizeof(ns), name, sizeof(name)),
                     K_EINVAL);
    assert_int_equal(split_meta_namespace_key("team/", ns, sizeof(ns), name, sizeof(name)),
                     K_EINVAL);
    assert_int_equal(split_meta_namespace_key("", ns, sizeof(ns), name, sizeof(name)), K_EINVAL);
    assert_int_equal(split_meta_namespace_key("namespace/x", ns, sizeof(ns), name, sizeof(name)),
                     K_ETOOBIG);
    assert_int_equal(split_meta_namespace_key("team/trainers", ns, sizeof(ns), name, sizeof(name)),
                     K_ETOOBIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_join),
        cmocka_unit_test(test_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
