/*
 * test_list_parser.c - the LIST response splitter (core/kube/list_parser.c): items and metadata
 * found whatever the chunking (every cut point, and byte by byte), strings with escapes and
 * brackets, arrays named "items" that are not the list's, truncated responses, the bounds on an
 * item, a member and the nesting, and malformed lists.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/list_parser.h"
#include "text.h"
#include "util/buf.h"
#include "util/result.h"

/* What the handler saw: one line per item, its compact JSON. */
struct record {
    struct buf log;
    size_t count, stop_after; /* stop_after: return non-zero on this item (1-based); 0 never */
};

static int on_item(void *ctx, json_object *item)
{
    struct record *r = ctx;
    r->count++;
    assert_true(json_object_is_type(item, json_type_object));
    const char *text = json_object_to_json_string_ext(item, JSON_C_TO_STRING_PLAIN);
    assert_int_equal(buf_printf(&r->log, "%s\n", text), K_OK);
    return r->stop_after && r->count == r->stop_after;
}

struct run {
    int rc;     /* the first error of a feed, else finish's result */
    char *log;  /* owned */
    char *rv;   /* owned, "(null)" when absent */
    char *cont; /* owned, "(null)" when absent */
    size_t items;
};

static void run_free(struct run *r)
{
    free(r->log);
    free(r->rv);
    free(r->cont);
}

/* Feed `len` bytes of `text` cut at cuts[0..ncuts) (ascending), or one byte at a time when
 * bytewise. */
static struct run feed(const char *text, size_t len, const size_t *cuts, size_t ncuts, int bytewise,
                       size_t max_item, size_t stop_after)
{
    struct record r = {.stop_after = stop_after};
    buf_init(&r.log, 1u << 26);
    struct kube_list_parser *p = kube_list_parser_new(max_item, on_item, &r);
    assert_non_null(p);
    struct run out = {.rc = K_OK};
    size_t at = 0;
    size_t pieces = bytewise ? len : ncuts + 1;
    for (size_t i = 0; i < pieces; i++) {
        size_t end = bytewise ? i + 1 : i < ncuts ? cuts[i] : len;
        int rc = kube_list_parser_feed(p, text + at, end - at);
        if (out.rc == K_OK)
            out.rc = rc;
        else
            assert_int_equal(rc, out.rc); /* a failed parser keeps failing */
        at = end;
    }
    size_t before = r.count;
    int fin = kube_list_parser_finish(p);
    if (out.rc == K_OK)
        out.rc = fin;
    else
        assert_int_equal(fin, out.rc);
    assert_int_equal(r.count, before);
    const char *rv = kube_list_parser_resource_version(p);
    const char *cont = kube_list_parser_continue(p);
    out.rv = strdup(rv ? rv : "(null)");
    out.cont = strdup(cont ? cont : "(null)");
    out.items = kube_list_parser_items(p);
    assert_int_equal(out.items, r.count);
    out.log = r.log.data ? buf_take(&r.log) : strdup("");
    kube_list_parser_free(p);
    return out;
}

static struct run feed_whole(const char *text, size_t max_item)
{
    return feed(text, strlen(text), NULL, 0, 0, max_item, 0);
}

/* Fed whole, fed in two pieces cut at every byte, and fed byte by byte: the same result. */
static struct run same_at_every_cut(const char *text, size_t max_item)
{
    size_t len = strlen(text);
    struct run whole = feed(text, len, NULL, 0, 0, max_item, 0);
    for (size_t cut = 0; cut <= len; cut++) {
        struct run two = feed(text, len, &cut, 1, 0, max_item, 0);
        assert_int_equal(two.rc, whole.rc);
        assert_string_equal(two.log, whole.log);
        assert_string_equal(two.rv, whole.rv);
        assert_string_equal(two.cont, whole.cont);
        run_free(&two);
    }
    struct run bytes = feed(text, len, NULL, 0, 1, max_item, 0);
    assert_int_equal(bytes.rc, whole.rc);
    assert_string_equal(bytes.log, whole.log);
    assert_string_equal(bytes.rv, whole.rv);
    run_free(&bytes);
    return whole;
}

static const char pod_list[] =
    "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\n"
    "  \"metadata\":{\"resourceVersion\":\"1234\",\"continue\":\"eyJ2Ijoi\\u0026\\\"x\\\"}\","
    "\"remainingItemCount\":7},\n"
    "  \"items\":[\n"
    "    {\"metadata\":{\"name\":\"a\",\"labels\":{\"k\":\"br]ack}et{s[\"}},"
    "\"spec\":{\"items\":[{\"x\":1}],\"containers\":[{\"argv\":[\"\\\\\",\"\\\"]\",\"\\u00e9\"]}]}}"
    ",\n"
    "    {\"metadata\":{\"name\":\"b\"},\"status\":{\"phase\":\"Pending\",\"n\":-1.5e3,"
    "\"t\":true,\"f\":false,\"z\":null}}\n"
    "  ]\n"
    "}\n";

static void test_items_and_metadata_at_every_cut(void **state)
{
    (void)state;
    struct run r = same_at_every_cut(pod_list, 1u << 20);
    assert_int_equal(r.rc, K_OK);
    assert_int_equal(r.items, 2);
    assert_string_equal(r.rv, "1234");
    assert_string_equal(r.cont, "eyJ2Ijoi&\"x\"}");
    /* strings with escaped quotes, backslashes and brackets stay whole; the item's own "items"
     * array is part of the item */
    assert_non_null(strstr(r.log, "\"k\":\"br]ack}et{s[\""));
    assert_non_null(strstr(r.log, "\"argv\":[\"\\\\\",\"\\\"]\",\"\xc3\xa9\"]"));
    assert_non_null(strstr(r.log, "\"spec\":{\"items\":[{\"x\":1}]"));
    assert_non_null(strstr(r.log, "\"name\":\"b\""));
    run_free(&r);
}

/* Arrays called "items" below the top level are not the list's; the top-level key may be escaped
 * and may come before metadata. */
static void test_only_the_top_level_items(void **state)
{
    (void)state;
    struct run r = same_at_every_cut(
        "{\"other\":{\"items\":[{\"metadata\":{\"name\":\"no\"}}]},"
        "\"\\u0069tems\":[{\"metadata\":{\"name\":\"yes\",\"items\":[[{\"a\":[]}]]}}],"
        "\"metadata\":{\"resourceVersion\":\"5\",\"items\":[{\"name\":\"no2\"}]},"
        "\"list\":[\"items\",{\"items\":[1]}]}",
        1u << 20);
    assert_int_equal(r.rc, K_OK);
    assert_int_equal(r.items, 1);
    assert_non_null(strstr(r.log, "\"yes\""));
    assert_null(strstr(r.log, "\"no\""));
    assert_string_equal(r.rv, "5");
    assert_string_equal(r.cont, "(null)");
    run_free(&r);
}

static void test_empty_lists(void **state)
{
    (void)state;
    const char *ok[] = {
        "{\"metadata\":{\"resourceVersion\":\"9\"}}",
        "{\"metadata\":{\"resourceVersion\":\"9\"},\"items\":[]}",
        " \r\n\t{ \"items\" : [ ] , \"metadata\" : { \"resourceVersion\" : \"9\" } } \n ",
        "{\"metadata\":{\"resourceVersion\":\"9\"},\"items\":null}",
        "{}",
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        struct run r = same_at_every_cut(ok[i], 1u << 20);
        assert_int_equal(r.rc, K_OK);
        assert_int_equal(r.items, 0);
        run_free(&r);
    }
}

/* Scalars as member values end at the delimiter, whatever the chunking. */
static void test_scalar_members(void **state)
{
    (void)state;
    struct run r = same_at_every_cut("{\"a\":12,\"b\":-0.5e-3 ,\"c\":true,\"d\":null,\"e\":false,"
                                     "\"f\":\"s\",\"items\":[{}],\"g\":[1,[2]],\"h\":{}}",
                                     1u << 20);
    assert_int_equal(r.rc, K_OK);
    assert_int_equal(r.items, 1);
    run_free(&r);
    /* numbers out of every range are read as json-c reads them, not refused */
    r = same_at_every_cut("{\"a\":1e999999999,\"b\":-123456789012345678901234567890,"
                          "\"items\":[{\"n\":1e-999999,\"m\":99999999999999999999999}],"
                          "\"c\":-1E+400}",
                          1u << 20);
    assert_int_equal(r.rc, K_OK);
    assert_int_equal(r.items, 1);
    run_free(&r);
}

static void test_malformed(void **state)
{
    (void)state;
    const char *bad[] = {
        "",                                        /* nothing */
        "   ",                                     /* nothing */
        "[]",                                      /* not an object */
        "\"items\"",                               /* not an object */
        "{\"items\":{}}",                          /* items not an array */
        "{\"items\":\"x\"}",                       /* items not an array */
        "{\"items\":0}",                           /* items not an array */
        "{\"items\":[1]}",                         /* an item that is not an object */
        "{\"items\":[[]]}",                        /* an item that is not an object */
        "{\"items\":[{},]}",                       /* trailing comma */
        "{\"items\":[,{}]}",                       /* leading comma */
        "{\"items\":[{}{}]}",                      /* no comma */
        "{\"items\":[{\"a\":}]}",                  /* bad item */
        "{\"items\":[{}],\"items\":[{}]}",         /* twice */
        "{\"metadata\":{},\"metadata\":{}}",       /* twice */
        "{\"items\":[],\"ite\\u006ds\":[]}",       /* twice, once escaped */
        "{\"items\":null,\"items\\u0000x\":[]}",   /* twice: json-c keys at the NUL */
        "{\"met\\u0061data\":{},\"metadata\":{}}", /* twice, once escaped */
        "{\"metadata\":[]}",                       /* metadata not an object */
        "{\"metadata\":\"x\"}",                    /* metadata not an object */
        "{\"a\":1,}",                              /* trailing comma */
        "{,\"a\":1}",                              /* leading comma */
        "{\"a\" 1}",                               /* no colon */
        "{\"a\":}",                                /* no value */
        "{\"a\":tru}",                             /* bad literal */
        "{\"a\":1 2}",                             /* two values */
        "{\"a\":01}",                              /* bad number */
        "{\"a\":[1,}",                             /* bad member value */
        "{a:1}",                                   /* unquoted key */
        "{1:1}",                                   /* key not a string */
        "{\"items\":[]}}",                         /* after the end */
        "{\"items\":[]} {}",                       /* two documents */
        "{\"items\":[]} x",                        /* trailing garbage */
        "{\"items\":[{\"a\":\"\\x\"}]}",           /* bad escape */
        "{\"items\":[]",                           /* truncated */
        "{\"items\":[{\"a\":\"b\"}",               /* truncated */
        "{\"metadata\":{\"resourceVersion\":\"1",  /* truncated */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct run r = same_at_every_cut(bad[i], 1u << 20);
        if (r.rc != K_EPARSE)
            fail_msg("\"%s\": %d, want K_EPARSE", bad[i], r.rc);
        run_free(&r);
    }
}

/* Every prefix of a valid list is refused at finish, with the items complete in it delivered. */
static void test_truncated_at_every_byte(void **state)
{
    (void)state;
    size_t len = strlen(pod_list);
    size_t first_item_end = (size_t)(strstr(pod_list, "]}]}},") - pod_list) + 5;
    size_t second_item_end = (size_t)(strstr(pod_list, "\"z\":null}}") - pod_list) + 10;
    /* the list ends at its closing brace; only whitespace follows */
    size_t list_end = (size_t)(strrchr(pod_list, '}') - pod_list) + 1;
    for (size_t n = 0; n < len; n++) {
        struct run r = feed(pod_list, n, NULL, 0, 0, 1u << 20, 0);
        assert_int_equal(r.rc, n < list_end ? K_EPARSE : K_OK);
        assert_int_equal(r.items, n < first_item_end ? 0 : n < second_item_end ? 1 : 2);
        run_free(&r);
    }
}

/* An item of exactly max_item bytes passes; one byte more is K_ETOOBIG at that byte, the items
 * before it delivered. */
static void test_item_size_limit(void **state)
{
    (void)state;
    const char *item = "{\"metadata\":{\"name\":\"xxxxxxxxxx\"}}";
    size_t n = strlen(item);
    char text[512];
    snprintf(text, sizeof(text), "{\"items\":[{},%s,{}]}", item);
    struct run ok = same_at_every_cut(text, n);
    assert_int_equal(ok.rc, K_OK);
    assert_int_equal(ok.items, 3);
    run_free(&ok);
    struct run big = same_at_every_cut(text, n - 1);
    assert_int_equal(big.rc, K_ETOOBIG);
    assert_int_equal(big.items, 1);
    run_free(&big);
}

/* metadata (or any other member) above KUBE_LIST_MAX_FIELD bytes is K_ETOOBIG, even when items
 * may be larger. */
static void test_member_size_limit(void **state)
{
    (void)state;
    size_t n = KUBE_LIST_MAX_FIELD + 16;
    char *text = malloc(n + 64);
    assert_non_null(text);
    strcpy(text, "{\"metadata\":{\"continue\":\"");
    size_t at = strlen(text);
    memset(text + at, 'a', KUBE_LIST_MAX_FIELD);
    strcpy(text + at + KUBE_LIST_MAX_FIELD, "\"}}");
    struct run r = feed_whole(text, 1u << 26);
    assert_int_equal(r.rc, K_ETOOBIG);
    run_free(&r);
    free(text);
}

/* A top-level member under KUBE_LIST_MAX_FIELD bytes whose tree would be over the value budget
 * (1 MiB of empty objects: some 280 MiB whole) is K_ETOOBIG, never built. */
static void test_member_tree_budget(void **state)
{
    (void)state;
    char *text = test_empty_objects("{\"x\":[", KUBE_LIST_MAX_FIELD - 64, "],\"items\":[]}");
    struct run r = feed_whole(text, 1u << 26);
    assert_int_equal(r.rc, K_ETOOBIG);
    run_free(&r);
    free(text);
}

/* Nesting deeper than KUBE_LIST_MAX_DEPTH in an item skips that item (a CustomResource keeping
 * unknown fields can nest so: one object must not stop the LIST for every other), counted; in a
 * top-level member it is refused at the byte that passes it. */
static void test_depth_limit(void **state)
{
    (void)state;
    char text[1024];
    size_t at = (size_t)snprintf(text, sizeof(text), "{\"items\":[{\"a\":");
    for (int i = 0; i < KUBE_LIST_MAX_DEPTH - 1; i++)
        text[at++] = '[';
    for (int i = 0; i < KUBE_LIST_MAX_DEPTH - 1; i++)
        text[at++] = ']';
    strcpy(text + at, "}]}");
    /* 128 levels (the item's object and 127 arrays): the most there may be */
    struct run deep = feed_whole(text, 1u << 20);
    assert_int_equal(deep.rc, K_OK);
    run_free(&deep);

    /* 129 levels: that item is skipped, the next one delivered */
    at = (size_t)snprintf(text, sizeof(text), "{\"items\":[{\"a\":");
    for (int i = 0; i < KUBE_LIST_MAX_DEPTH; i++)
        text[at++] = '[';
    for (int i = 0; i < KUBE_LIST_MAX_DEPTH; i++)
        text[at++] = ']';
    at +=
        (size_t)snprintf(text + at, sizeof(text) - at,
                         "},{\"metadata\":{\"name\":\"next\"}}],\"metadata\":{\"resourceVersion\":"
                         "\"9\"}}");
    struct record r = {0};
    buf_init(&r.log, 1u << 20);
    struct kube_list_parser *p = kube_list_parser_new(1u << 20, on_item, &r);
    assert_int_equal(kube_list_parser_feed(p, text, at), K_OK);
    assert_int_equal(kube_list_parser_finish(p), K_OK);
    assert_int_equal(kube_list_parser_items(p), 1);
    assert_int_equal(kube_list_parser_over_budget(p), 1);
    assert_non_null(strstr(buf_cstr(&r.log), "next"));
    kube_list_parser_free(p);
    buf_cleanup(&r.log);

    /* in a top-level member: refused in the scanner, before the closing brackets arrive */
    at = (size_t)snprintf(text, sizeof(text), "{\"x\":");
    for (int i = 0; i < KUBE_LIST_MAX_DEPTH + 1; i++)
        text[at++] = '[';
    text[at] = '\0';
    buf_init(&r.log, 1u << 20);
    p = kube_list_parser_new(1u << 20, on_item, &r);
    assert_int_equal(kube_list_parser_feed(p, text, at), K_EPARSE);
    kube_list_parser_free(p);
    buf_cleanup(&r.log);

    /* within json-c's depth: fine */
    at = (size_t)snprintf(text, sizeof(text), "{\"items\":[{\"a\":");
    for (int i = 0; i < 60; i++)
        text[at++] = '[';
    for (int i = 0; i < 60; i++)
        text[at++] = ']';
    strcpy(text + at, "}]}");
    struct run fine = feed_whole(text, 1u << 20);
    assert_int_equal(fine.rc, K_OK);
    run_free(&fine);
}

/* Bytes that are not UTF-8, and NUL, refuse the list at that byte; items before it were
 * delivered. */
static void test_bad_bytes(void **state)
{
    (void)state;
    const char *bad[] = {
        "{\"items\":[{\"a\":\"x\"},{\"a\":\"\xff\"}]}",
        "{\"items\":[{\"a\":\"x\"},{\"a\":\"\xc3\"}]}",
        "{\"items\":[{\"a\":\"x\"},{\"a\":\"\xed\xa0\x80\"}]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct run r = same_at_every_cut(bad[i], 1u << 20);
        assert_int_equal(r.rc, K_EPARSE);
        assert_int_equal(r.items, 1);
        run_free(&r);
    }
    const char nul[] = "{\"items\":[{\"a\":\"x\"},{\"a\":\"\0\"}]}";
    struct run r = feed(nul, sizeof(nul) - 1, NULL, 0, 0, 1u << 20, 0);
    assert_int_equal(r.rc, K_EPARSE);
    assert_int_equal(r.items, 1);
    run_free(&r);
    /* a sequence cut by a chunk boundary is fine */
    const char *e = "{\"items\":[{\"a\":\"\xc3\xa9\xf0\x9f\x98\x80\"}]}";
    struct run ok = same_at_every_cut(e, 1u << 20);
    assert_int_equal(ok.rc, K_OK);
    assert_int_equal(ok.items, 1);
    run_free(&ok);
}

/* The handler stops the list: K_ECANCELED, no further item, every later feed refused. */
static void test_handler_stops(void **state)
{
    (void)state;
    struct run r = feed(pod_list, strlen(pod_list), NULL, 0, 0, 1u << 20, 1);
    assert_int_equal(r.rc, K_ECANCELED);
    assert_int_equal(r.items, 1);
    run_free(&r);
    struct run b = feed(pod_list, strlen(pod_list), NULL, 0, 1, 1u << 20, 1);
    assert_int_equal(b.rc, K_ECANCELED);
    assert_int_equal(b.items, 1);
    run_free(&b);
}

/* Many items through one parser: its buffer is reused, big items' buffers given back. */
static void test_many_items(void **state)
{
    (void)state;
    struct buf t;
    buf_init(&t, 64u << 20);
    assert_int_equal(buf_append_str(&t, "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":["),
                     0);
    for (int i = 0; i < 20000; i++)
        assert_int_equal(buf_printf(&t, "%s{\"metadata\":{\"name\":\"p%d\"}}", i ? "," : "", i), 0);
    assert_int_equal(buf_append_str(&t, ",{\"big\":\""), 0);
    for (int i = 0; i < (3 << 20) / 64; i++)
        assert_int_equal(buf_append_str(&t, "0123456789012345678901234567890123456789012345678901"
                                            "234567890123"),
                         0);
    assert_int_equal(buf_append_str(&t, "\"},{}]}"), 0);
    size_t cuts[3] = {1000, t.len / 2, t.len - 5};
    struct run r = feed(t.data, t.len, cuts, 3, 0, 16u << 20, 0);
    assert_int_equal(r.rc, K_OK);
    assert_int_equal(r.items, 20002);
    run_free(&r);
    buf_cleanup(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_items_and_metadata_at_every_cut),
        cmocka_unit_test(test_only_the_top_level_items),
        cmocka_unit_test(test_empty_lists),
        cmocka_unit_test(test_scalar_members),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_truncated_at_every_byte),
        cmocka_unit_test(test_item_size_limit),
        cmocka_unit_test(test_member_size_limit),
        cmocka_unit_test(test_member_tree_budget),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_bad_bytes),
        cmocka_unit_test(test_handler_stops),
        cmocka_unit_test(test_many_items),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
