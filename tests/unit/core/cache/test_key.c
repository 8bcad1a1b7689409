/* Tests for core/cache/key.c: "namespace/name" keys as client-go makes and splits them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
    /* the bound is exact: 15 bytes and the terminator fit, 16 do not */
    assert_int_equal(meta_namespace_key(k, sizeof(k), "team", "0123456789"), K_OK);
    assert_string_equal(k, "team/0123456789");
    assert_int_equal(meta_namespace_key(k, sizeof(k), NULL, "0123456789abcde"), K_OK);
    assert_int_equal(meta_namespace_key(k, sizeof(k), NULL, "0123456789abcdef"), K_ETOOBIG);
    assert_string_equal(k, "");
    assert_int_equal(meta_namespace_key(k, 0, "team", "train"), K_ETOOBIG);
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

static void test_meta_key(void **state)
{
    (void)state;
    struct meta_key k;
    char out[META_KEY_MAX];
    assert_int_equal(meta_key_parse("team/train", &k), K_OK);
    assert_string_equal(k.ns, "team");
    assert_string_equal(k.name, "train");
    assert_int_equal(meta_key_format(&k, out, sizeof(out)), K_OK);
    assert_string_equal(out, "team/train");
    assert_int_equal(meta_key_parse("node-1", &k), K_OK);
    assert_string_equal(k.ns, "");
    assert_int_equal(meta_key_format(&k, out, sizeof(out)), K_OK);
    assert_string_equal(out, "node-1");
    assert_int_equal(meta_key_format(&k, out, 4), K_ETOOBIG);
    assert_string_equal(out, "");
    assert_int_equal(meta_key_parse("a/b/c", &k), K_EINVAL);
    assert_string_equal(k.name, "");

    /* the longest namespace and name Kubernetes allows fit; one more byte does not */
    char key[META_KEY_MAX + 8];
    memset(key, 'n', 63);
    key[63] = '/';
    memset(key + 64, 'x', 253);
    key[317] = '\0';
    assert_int_equal(meta_key_parse(key, &k), K_OK);
    assert_int_equal(strlen(k.ns), 63);
    assert_int_equal(strlen(k.name), 253);
    assert_int_equal(meta_key_format(&k, out, sizeof(out)), K_OK);
    assert_string_equal(out, key);
    key[317] = 'x';
    key[318] = '\0';
    assert_int_equal(meta_key_parse(key, &k), K_ETOOBIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_join),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_meta_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
