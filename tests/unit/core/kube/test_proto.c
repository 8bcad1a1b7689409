/*
 * test_proto.c - the protobuf reader and the API server's envelope (core/kube/proto.c) on
 * responses recorded from a real kube-apiserver (tests/fixtures/proto/README.md) and on encodings
 * built by hand: ListMeta and a Status message are read; every prefix and every one-byte change
 * of a recorded body is read (and each item projected) without leaving the buffer; hostile
 * encodings are refused. The projection of the items is tested in test_project_proto.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpus.h"
#include "kube/project.h"
#include "kube/proto.h"
#include "objects.h"
#include "pb_write.h"
#include "util/buf.h"
#include "util/result.h"

#define GPUS (&test_gpus)

/* Counts the items; stops the walk with 7 at item `stop_at` (0: never). */
struct count {
    size_t n, stop_at;
};

static int count_or_stop(void *ctx, const uint8_t *bytes, size_t len)
{
    (void)bytes;
    (void)len;
    struct count *c = ctx;
    c->n++;
    return c->stop_at && c->n == c->stop_at ? 7 : 0;
}

static void test_continue_and_stop(void **state)
{
    (void)state;
    struct buf pb;
    assert_int_equal(test_load_bytes(FIXTURES_DIR, "proto/pods-page.pb", &pb), K_OK);
    struct count it = {0};
    char rv[64], cont[256];
    assert_int_equal(kube_proto_list(pb.data, pb.len, count_or_stop, &it, rv, cont, sizeof(cont)),
                     K_OK);
    assert_int_equal(it.n, 2);
    assert_true(rv[0] != '\0');
    assert_true(strncmp(cont, "eyJ2Ijoi", 8) == 0); /* base64 of {"v":" */
    /* too small for the token */
    assert_int_equal(kube_proto_list(pb.data, pb.len, count_or_stop, &it, rv, cont, 16), K_ETOOBIG);
    /* the callback stops the walk with its value */
    it.n = 0;
    it.stop_at = 1;
    assert_int_equal(kube_proto_list(pb.data, pb.len, count_or_stop, &it, NULL, NULL, 0), 7);
    assert_int_equal(it.n, 1);
    buf_cleanup(&pb);
}

static void test_status_message(void **state)
{
    (void)state;
    struct buf pb;
    assert_int_equal(test_load_bytes(FIXTURES_DIR, "proto/status-notfound.pb", &pb), K_OK);
    char msg[128];
    assert_true(kube_proto_status_message(pb.data, pb.len, msg, sizeof(msg)));
    assert_string_equal(msg, "pods \"nope\" not found");
    char small[6];
    assert_true(kube_proto_status_message(pb.data, pb.len, small, sizeof(small)));
    assert_string_equal(small, "pods ");
    assert_false(kube_proto_status_message("{\"kind\":\"Status\"}", 17, msg, sizeof(msg)));
    buf_cleanup(&pb);
}

/* Read a body, projecting every item; the result must not matter, only that nothing breaks. */
static int noop_item(void *ctx, const uint8_t *bytes, size_t len)
{
    size_t *count = ctx;
    struct kpod p;
    if (project_pod_usage_proto(bytes, len, GPUS, &p) == K_OK)
        pod_cleanup(&p);
    struct knode n;
    if (project_node_proto(bytes, len, GPUS, &n) == K_OK)
        node_cleanup(&n);
    (*count)++;
    return 0;
}

static void prefix_and_flip(const char *fixture)
{
    struct buf pb;
    char rel[256];
    snprintf(rel, sizeof(rel), "proto/%s", fixture);
    assert_int_equal(test_load_bytes(FIXTURES_DIR, rel, &pb), K_OK);
    char rv[64], cont[64];
    for (size_t len = 0; len < pb.len; len++) {
        /* a copy of exactly len bytes, so that ASan sees any read past it */
        uint8_t *cut = malloc(len ? len : 1);
        assert_non_null(cut);
        memcpy(cut, pb.data, len);
        size_t count = 0;
        int rc = kube_proto_list(cut, len, noop_item, &count, rv, cont, sizeof(rv));
        assert_true(rc == K_OK || rc == K_EPARSE || rc == K_ETOOBIG);
        free(cut);
    }
    uint8_t *copy = malloc(pb.len);
    assert_non_null(copy);
    for (size_t i = 0; i < pb.len; i++) {
        memcpy(copy, pb.data, pb.len);
        copy[i] ^= (uint8_t)(0x55 + i);
        size_t count = 0;
        int rc = kube_proto_list(copy, pb.len, noop_item, &count, rv, cont, sizeof(rv));
        assert_true(rc == K_OK || rc == K_EPARSE || rc == K_ETOOBIG);
    }
    free(copy);
    buf_cleanup(&pb);
}

static void test_every_prefix_and_flip(void **state)
{
    (void)state;
    prefix_and_flip("pods.pb");
    prefix_and_flip("nodes.pb");
}

static void test_hostile(void **state)
{
    (void)state;
    struct pb_reader r;
    struct pb_field f;
    /* an 11-byte varint */
    const uint8_t long_varint[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    pb_reader_init(&r, long_varint, sizeof(long_varint));
    assert_false(pb_next(&r, &f));
    assert_true(r.error);
    /* a length past the end */
    const uint8_t past[] = {0x12, 0x05, 'a', 'b'};
    pb_reader_init(&r, past, sizeof(past));
    assert_false(pb_next(&r, &f));
    assert_true(r.error);
    /* a length of 2^63 */
    const uint8_t huge[] = {0x12, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    pb_reader_init(&r, huge, sizeof(huge));
    assert_false(pb_next(&r, &f));
    assert_true(r.error);
    /* field number 0, a group */
    const uint8_t zero[] = {0x02, 0x00};
    pb_reader_init(&r, zero, sizeof(zero));
    assert_false(pb_next(&r, &f));
    assert_true(r.error);
    const uint8_t group[] = {0x0b, 0x0c};
    pb_reader_init(&r, group, sizeof(group));
    assert_false(pb_next(&r, &f));
    assert_true(r.error);
    /* fixed-width fields are read and skipped */
    const uint8_t fixed[] = {0x09, 1, 2, 3, 4, 5, 6, 7, 8, 0x15, 1, 2, 3, 4};
    pb_reader_init(&r, fixed, sizeof(fixed));
    assert_true(pb_next(&r, &f));
    assert_int_equal(f.varint, 0x0807060504030201ull);
    assert_true(pb_next(&r, &f));
    assert_int_equal(f.varint, 0x04030201u);
    assert_false(pb_next(&r, &f));
    assert_false(r.error);
    /* strings: NUL and bad UTF-8 refused */
    const uint8_t nul[] = {0x0a, 0x03, 'a', 0, 'b'};
    pb_reader_init(&r, nul, sizeof(nul));
    assert_true(pb_next(&r, &f));
    char s[8];
    assert_false(pb_string(&f, s, sizeof(s)));
    const uint8_t bad[] = {0x0a, 0x02, 0xc3, 0x28};
    pb_reader_init(&r, bad, sizeof(bad));
    assert_true(pb_next(&r, &f));
    assert_false(pb_string(&f, s, sizeof(s)));
    /* no magic, a contentEncoding, no raw */
    const uint8_t *raw;
    size_t raw_len;
    assert_int_equal(kube_proto_unwrap("{\"items\":[]}", 12, &raw, &raw_len), K_EPARSE);
    const uint8_t encoded[] = {'k', '8', 's', 0, 0x12, 0x00, 0x1a, 0x04, 'g', 'z', 'i', 'p'};
    assert_int_equal(kube_proto_unwrap(encoded, sizeof(encoded), &raw, &raw_len), K_EPARSE);
    const uint8_t no_raw[] = {'k', '8', 's', 0, 0x22, 0x00};
    assert_int_equal(kube_proto_unwrap(no_raw, sizeof(no_raw), &raw, &raw_len), K_EPARSE);
}

static int count_item(void *ctx, const uint8_t *bytes, size_t len)
{
    (void)bytes;
    (void)len;
    ++*(size_t *)ctx;
    return 0;
}

/*
 * The envelope and the List as the generated Go code reads them (runtime.Unknown.Unmarshal,
 * ListMeta.Unmarshal): a field seen again replaces the earlier one (raw, resourceVersion,
 * continue), an empty contentEncoding is none, typeMeta and unknown fields are skipped, and
 * bytes after the message that are no field (a zero tag) make it malformed.
 */
static void test_envelope_edges(void **state)
{
    (void)state;
    struct buf body, unknown, list, meta, items;
    buf_init(&body, 1u << 20), buf_init(&unknown, 1u << 20), buf_init(&list, 1u << 20);
    buf_init(&meta, 1u << 20), buf_init(&items, 1u << 20);
    pb_put_text(&meta, 2, "1");
    pb_put_text(&meta, 3, "c1");
    pb_put_text(&meta, 2, "2"); /* resourceVersion again */
    pb_put_text(&meta, 3, "");  /* continue again: none */
    pb_put_pod(&items, 2, "ns", "a", "n0", "1", "Running");
    pb_put_msg(&list, 1, &meta);
    assert_int_equal(buf_append(&list, items.data, items.len), K_OK);
    pb_put_text(&meta, 1, "ignored"); /* ListMeta.selfLink, in a second metadata */
    pb_put_msg(&list, 1, &meta);
    struct buf tm;
    buf_init(&tm, 1024);
    pb_put_text(&tm, 1, "v1");
    pb_put_text(&tm, 2, "PodList");
    pb_put_msg(&unknown, 1, &tm);           /* typeMeta */
    pb_put_text(&unknown, 2, "not-a-list"); /* raw, replaced below */
    pb_put_msg(&unknown, 2, &list);         /* raw */
    pb_put_text(&unknown, 3, "");           /* contentEncoding: none */
    pb_put_text(&unknown, 4, "application/vnd.kubernetes.protobuf");
    pb_put_varint(&unknown, 99 << 3 | PB_VARINT);
    pb_put_varint(&unknown, 1);
    assert_int_equal(buf_append(&body, KUBE_PROTO_MAGIC, KUBE_PROTO_MAGIC_LEN), K_OK);
    assert_int_equal(buf_append(&body, unknown.data, unknown.len), K_OK);
    size_t n = 0;
    char rv[16], cont[16];
    assert_int_equal(kube_proto_list(body.data, body.len, count_item, &n, rv, cont, sizeof(rv)),
                     K_OK);
    assert_int_equal(n, 1);
    assert_string_equal(rv, "2");
    assert_string_equal(cont, "");
    /* a zero byte after the message */
    assert_int_equal(buf_append(&body, "\0", 1), K_OK);
    assert_int_equal(kube_proto_list(body.data, body.len, count_item, &n, rv, cont, sizeof(rv)),
                     K_EPARSE);
    /* only the magic; the magic of another encoding */
    assert_int_equal(kube_proto_list(KUBE_PROTO_MAGIC, KUBE_PROTO_MAGIC_LEN, count_item, &n, rv,
                                     cont, sizeof(rv)),
                     K_EPARSE);
    assert_int_equal(kube_proto_list("k8s", 3, count_item, &n, rv, cont, sizeof(rv)), K_EPARSE);
    buf_cleanup(&tm);
    buf_cleanup(&body), buf_cleanup(&unknown), buf_cleanup(&list), buf_cleanup(&meta);
    buf_cleanup(&items);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_continue_and_stop),     cmocka_unit_test(test_status_message),
        cmocka_unit_test(test_every_prefix_and_flip), cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_envelope_edges),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
