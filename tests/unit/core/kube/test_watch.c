/*
 * test_watch.c - the watch stream parser (core/kube/watch.c) fed from fixture streams in
 * tests/fixtures/watch/, split into chunks at every byte offset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/read_budget.h"
#include "kube/watch.h"
#include "util/buf.h"
#include "util/result.h"

#define MAX_EVENT (1u << 20)

/* What the handler saw, one line per event: "TYPE name rv", plus the Status code for ERROR. */
struct record {
    struct buf log;
    int stop_after; /* return non-zero on this event (1-based); 0 never */
    int count;
};

static const char *type_name(enum kube_event_type t)
{
    switch (t) {
    case KUBE_EVENT_ADDED:
        return "ADDED";
    case KUBE_EVENT_MODIFIED:
        return "MODIFIED";
    case KUBE_EVENT_DELETED:
        return "DELETED";
    case KUBE_EVENT_BOOKMARK:
        return "BOOKMARK";
    case KUBE_EVENT_ERROR:
        return "ERROR";
    }
    return "?";
}

static const char *meta_str(json_object *obj, const char *field)
{
    json_object *meta, *v;
    if (!json_object_object_get_ex(obj, "metadata", &meta) ||
        !json_object_object_get_ex(meta, field, &v))
        return "-";
    return json_object_get_string(v);
}

static int on_event(void *ctx, enum kube_event_type type, json_object *object)
{
    struct record *r = ctx;
    r->count++;
    if (type == KUBE_EVENT_ERROR)
        assert_int_equal(buf_printf(&r->log, "ERROR %d\n", kube_watch_error_code(object)), K_OK);
    else
        assert_int_equal(buf_printf(&r->log, "%s %s %s\n", type_name(type),
                                    meta_str(object, "name"), meta_str(object, "resourceVersion")),
                         K_OK);
    return r->stop_after && r->count == r->stop_after;
}

static char *read_fixture(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/watch/%s", FIXTURES_DIR, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    struct buf b;
    buf_init(&b, 1u << 24);
    char tmp[4096];
    size_t n;
    while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
        assert_int_equal(buf_append(&b, tmp, n), K_OK);
    fclose(f);
    *len = b.len;
    return buf_take(&b);
}

/*
 * Feed `data` as the chunks given by `cuts` (ascending offsets) and return the first error, the
 * finish result, the event log and the last resourceVersion.
 */
struct run {
    int rc;
    char *log;
    char *last_rv;
};

static struct run feed_cut(const char *data, size_t len, const size_t *cuts, size_t ncuts,
                           size_t max_event, int stop_after)
{
    struct record r = {.stop_after = stop_after};
    buf_init(&r.log, 1u << 20);
    struct kube_watch_parser *p = kube_watch_parser_new(max_event, on_event, &r);
    assert_non_null(p);
    struct run out = {.rc = K_OK};
    size_t at = 0;
    for (size_t i = 0; i <= ncuts && out.rc == K_OK; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        out.rc = kube_watch_parser_feed(p, data + at, end - at);
        at = end;
    }
    if (out.rc == K_OK)
        out.rc = kube_watch_parser_finish(p);
    out.last_rv = strdup(kube_watch_parser_last_rv(p));
    out.log = buf_take(&r.log);
    kube_watch_parser_free(p);
    return out;
}

static void run_free(struct run *r)
{
    free(r->log);
    free(r->last_rv);
}

/*
 * The stream must give the same result whether fed whole, in two chunks cut at every offset, in
 * three chunks, or one byte at a time.
 */
static void check_all_splits_data(const char *fixture, const char *data, size_t len, int want_rc,
                                  const char *want_log, const char *want_rv)
{
    struct run whole = feed_cut(data, len, NULL, 0, MAX_EVENT, 0);
    if (whole.rc != want_rc || strcmp(whole.log, want_log) != 0 ||
        strcmp(whole.last_rv, want_rv) != 0)
        fail_msg("%s whole: rc %d log\n%s", fixture, whole.rc, whole.log);
    run_free(&whole);

    for (size_t i = 0; i <= len; i++) {
        struct run r = feed_cut(data, len, &i, 1, MAX_EVENT, 0);
        if (r.rc != want_rc || strcmp(r.log, want_log) != 0 || strcmp(r.last_rv, want_rv) != 0)
            fail_msg("%s split at %zu: rc %d log\n%s", fixture, i, r.rc, r.log);
        run_free(&r);
    }
    for (size_t i = 0; i <= len; i += 7) {
        for (size_t j = i; j <= len; j += 13) {
            size_t cuts[2] = {i, j};
            struct run r = feed_cut(data, len, cuts, 2, MAX_EVENT, 0);
            if (r.rc != want_rc || strcmp(r.log, want_log) != 0)
                fail_msg("%s split at %zu,%zu: rc %d", fixture, i, j, r.rc);
            run_free(&r);
        }
    }

    size_t *bytes = malloc((len + 1) * sizeof(*bytes));
    assert_non_null(bytes);
    for (size_t i = 0; i < len; i++)
        bytes[i] = i + 1;
    struct run one = feed_cut(data, len, bytes, len ? len - 1 : 0, MAX_EVENT, 0);
    assert_int_equal(one.rc, want_rc);
    assert_string_equal(one.log, want_log);
    assert_string_equal(one.last_rv, want_rv);
    run_free(&one);
    free(bytes);
}

static void check_all_splits(const char *fixture, int want_rc, const char *want_log,
                             const char *want_rv)
{
    size_t len;
    char *data = read_fixture(fixture, &len);
    check_all_splits_data(fixture, data, len, want_rc, want_log, want_rv);
    free(data);
}

static void test_stream_every_split(void **state)
{
    (void)state;
    check_all_splits("stream.jsonl", K_OK,
                     "ADDED train-0 1001\n"
                     "MODIFIED train-0 1002\n"
                     "BOOKMARK - 1050\n"
                     "DELETED train-0 1060\n",
                     "1060");
}

static void test_whitespace_and_joined_events(void **state)
{
    (void)state;
    check_all_splits("whitespace.jsonl", K_OK,
                     "ADDED a 5\n"
                     "MODIFIED a 6\n"
                     "BOOKMARK - 9\n"
                     "DELETED a 10\n",
                     "10");
}

static void test_bookmark_advances_rv(void **state)
{
    (void)state;
    size_t len;
    char *data = read_fixture("stream.jsonl", &len);
    /* Cut right after the third line, the BOOKMARK. */
    const char *third = data;
    for (int i = 0; i < 3; i++)
        third = strchr(third, '\n') + 1;
    struct run r = feed_cut(data, (size_t)(third - data), NULL, 0, MAX_EVENT, 0);
    assert_int_equal(r.rc, K_OK);
    assert_string_equal(r.last_rv, "1050");
    run_free(&r);
    free(data);
}

static void test_error_410(void **state)
{
    (void)state;
    check_all_splits("error410.jsonl", K_OK,
                     "ADDED gpu-a 2001\n"
                     "ERROR 410\n",
                     "2001");
}

static void test_error_code_helper(void **state)
{
    (void)state;
    json_object *s = json_tokener_parse("{\"kind\":\"Status\",\"code\":500}");
    assert_int_equal(kube_watch_error_code(s), 500);
    json_object_put(s);
    s = json_tokener_parse("{\"kind\":\"Status\",\"code\":\"410\"}");
    assert_int_equal(kube_watch_error_code(s), 0);
    json_object_put(s);
    s = json_tokener_parse("{\"kind\":\"Status\"}");
    assert_int_equal(kube_watch_error_code(s), 0);
    json_object_put(s);
    assert_int_equal(kube_watch_error_code(NULL), 0);
}

static void test_malformed(void **state)
{
    (void)state;
    /* The good first event is delivered before the broken second one is refused. */
    check_all_splits("malformed.jsonl", K_EPARSE, "ADDED ok 7\n", "7");
    check_all_splits("unknown_type.jsonl", K_EPARSE, "", "");
    check_all_splits("missing_object.jsonl", K_EPARSE, "", "");
    check_all_splits("invalid_utf8.jsonl", K_EPARSE, "", "");
    check_all_splits("not_object.jsonl", K_EPARSE, "", "");
}

static void test_garbage_and_nul(void **state)
{
    (void)state;
    static const char nul[] = "{\"type\":\"ADDED\",\"object\":{\"a\":\"x\0y\"}}\n";
    struct run r = feed_cut(nul, sizeof(nul) - 1, NULL, 0, MAX_EVENT, 0);
    assert_int_equal(r.rc, K_EPARSE);
    run_free(&r);

    static const char junk[] = "HTTP/1.1 200 OK\r\n";
    r = feed_cut(junk, sizeof(junk) - 1, NULL, 0, MAX_EVENT, 0);
    assert_int_equal(r.rc, K_EPARSE);
    run_free(&r);

    /* A bare number is valid JSON but not an event. */
    static const char num[] = "42\n";
    r = feed_cut(num, sizeof(num) - 1, NULL, 0, MAX_EVENT, 0);
    assert_int_equal(r.rc, K_EPARSE);
    run_free(&r);
}

/*
 * A complete event followed by a bad byte in the same chunk is delivered, as it is when the bad
 * byte comes in the next chunk; then the stream is refused. (json-c used to drop the event when
 * it validated UTF-8 itself.)
 */
static void test_event_then_bad_byte(void **state)
{
    (void)state;
    static const char *const tails[] = {
        "\xff",             /* never UTF-8 */
        "\x80",             /* stray continuation byte */
        "\xc0\xaf",         /* overlong '/' */
        "\xe0\x80\xaf",     /* overlong '/' */
        "\xed\xa0\x80",     /* surrogate U+D800 */
        "\xf4\x90\x80\x80", /* above U+10FFFF */
        "\xf5",             /* lead byte past U+10FFFF */
        "\xc3\x28",         /* lead byte without its continuation */
    };
    static const char ev[] = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\","
                             "\"resourceVersion\":\"3\"}}}";
    static const char *const seps[] = {"", "\n", " \r\n\t"};
    char data[256];
    for (size_t s = 0; s < sizeof(seps) / sizeof(seps[0]); s++) {
        for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
            int n = snprintf(data, sizeof(data), "%s%s%s", ev, seps[s], tails[t]);
            check_all_splits_data("event then bad byte", data, (size_t)n, K_EPARSE, "ADDED a 3\n",
                                  "3");
        }
        /* A NUL is refused the same way, wherever the chunk boundary falls. */
        int n = snprintf(data, sizeof(data), "%s%s", ev, seps[s]);
        data[n++] = '\0';
        data[n++] = '{';
        check_all_splits_data("event then NUL", data, (size_t)n, K_EPARSE, "ADDED a 3\n", "3");
    }
    /* A multi-byte character cut at the end of the stream is a truncated stream. */
    int n = snprintf(data, sizeof(data), "%s\n\xe2\x98", ev);
    check_all_splits_data("cut character", data, (size_t)n, K_EPARSE, "ADDED a 3\n", "3");
    /* Valid characters of every length, inside a string, split anywhere. */
    n = snprintf(data, sizeof(data),
                 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"\x7f\xc2\x80\xdf\xbf"
                 "\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\","
                 "\"resourceVersion\":\"4\"}}}\n");
    struct run r = feed_cut(data, (size_t)n, NULL, 0, MAX_EVENT, 0);
    assert_int_equal(r.rc, K_OK);
    assert_int_equal(strlen(r.log), strlen("ADDED  4\n") + 22);
    check_all_splits_data("valid characters", data, (size_t)n, K_OK, r.log, "4");
    run_free(&r);
}

/*
 * json-c checks a number piece by piece when it arrives in several calls, so fed byte by byte
 * `1-2` used to read as 1 and the event was delivered, while fed whole it was refused. Every
 * chunking must refuse it, and accept the well-formed numbers around it.
 */
static void test_numbers_split_anywhere(void **state)
{
    (void)state;
    static const char *const bad[] = {"1-2",   "--1",  "01", ".5",  "1e",    "1e+-5",
                                      "1.2.3", "1ee5", "-",  "tru", "truex", "nul"};
    static const char *const good[] = {"-0", "0.5", "-1.25e+3", "1E5", "0e0", "true", "null"};
    char data[128];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int n =
            snprintf(data, sizeof(data),
                     "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\","
                     "\"resourceVersion\":\"1\"}}}\n{\"type\":\"ADDED\",\"object\":{\"n\":%s}}\n",
                     bad[i]);
        check_all_splits_data(bad[i], data, (size_t)n, K_EPARSE, "ADDED a 1\n", "1");
    }
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        int n = snprintf(data, sizeof(data),
                         "{\"type\":\"ADDED\",\"object\":{\"n\":[%s],\"metadata\":{\"name\":"
                         "\"a\",\"resourceVersion\":\"2\"}}}",
                         good[i]);
        check_all_splits_data(good[i], data, (size_t)n, K_OK, "ADDED a 2\n", "2");
    }
}

/* Braces and brackets inside strings and escapes do not end an event early. */
static void test_braces_in_strings(void **state)
{
    (void)state;
    static const char data[] =
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":"
        "\"}]\\\"{[\\\\\",\"resourceVersion\":\"5\"},\"x\":[[{}],{\"\":[]}]}}\n";
    check_all_splits_data("braces in strings", data, sizeof(data) - 1, K_OK, "ADDED }]\"{[\\ 5\n",
                          "5");
}

static void test_truncated_stream(void **state)
{
    (void)state;
    size_t len;
    char *data = read_fixture("stream.jsonl", &len);
    /* Everything but the last 10 bytes: three events, then the stream stops inside the fourth. */
    struct run r = feed_cut(data, len - 10, NULL, 0, MAX_EVENT, 0);
    assert_int_equal(r.rc, K_EPARSE);
    assert_string_equal(r.log, "ADDED train-0 1001\nMODIFIED train-0 1002\nBOOKMARK - 1050\n");
    assert_string_equal(r.last_rv, "1050");
    run_free(&r);
    free(data);
}

static void test_oversize_event(void **state)
{
    (void)state;
    size_t len;
    char *data = read_fixture("stream.jsonl", &len);
    const char *nl = strchr(data, '\n');
    size_t first = (size_t)(nl - data); /* the first event's size, without its newline */

    /* Exactly at the limit is fine. */
    const char *second_nl = strchr(nl + 1, '\n');
    size_t second = (size_t)(second_nl - nl - 1);
    size_t limit = first > second ? first : second;
    struct run r = feed_cut(data, (size_t)(second_nl - data) + 1, NULL, 0, limit, 0);
    assert_int_equal(r.rc, K_OK);
    run_free(&r);

    /* One byte below the largest event: refused, whole or byte by byte. */
    r = feed_cut(data, len, NULL, 0, limit - 1, 0);
    assert_int_equal(r.rc, K_ETOOBIG);
    run_free(&r);
    for (size_t i = 0; i <= len; i++) {
        struct run s = feed_cut(data, len, &i, 1, limit - 1, 0);
        if (s.rc != K_ETOOBIG)
            fail_msg("split at %zu: rc %d", i, s.rc);
        run_free(&s);
    }

    /* A huge event is refused without being buffered whole. */
    size_t big = 8u << 20;
    char *huge = malloc(big);
    assert_non_null(huge);
    static const char head[] = "{\"type\":\"ADDED\",\"object\":{\"pad\":\"";
    memcpy(huge, head, sizeof(head) - 1);
    memset(huge + sizeof(head) - 1, 'x', big - (sizeof(head) - 1));
    r = feed_cut(huge, big, NULL, 0, MAX_EVENT, 0);
    assert_int_equal(r.rc, K_ETOOBIG);
    assert_string_equal(r.log, "");
    run_free(&r);
    free(huge);
    free(data);
}

/* An event nested deeper than KUBE_READ_MAX_DEPTH (a CustomResource keeping unknown fields that
 * anyone who may create one can nest) is skipped and counted; the stream goes on, however cut. */
static void test_deep_event_skipped(void **state)
{
    (void)state;
    char text[2048];
    size_t at = (size_t)snprintf(text, sizeof(text),
                                 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"deep\","
                                 "\"resourceVersion\":\"5\"},\"spec\":");
    for (int i = 0; i < KUBE_READ_MAX_DEPTH + 10; i++)
        text[at++] = '[';
    for (int i = 0; i < KUBE_READ_MAX_DEPTH + 10; i++)
        text[at++] = ']';
    at += (size_t)snprintf(text + at, sizeof(text) - at,
                           "}}\n{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"next\","
                           "\"resourceVersion\":\"6\"}}}\n");
    check_all_splits_data("deep", text, at, K_OK, "ADDED next 6\n", "6");
    struct record r = {0};
    buf_init(&r.log, 1u << 20);
    struct kube_watch_parser *p = kube_watch_parser_new(MAX_EVENT, on_event, &r);
    assert_int_equal(kube_watch_parser_feed(p, text, at), K_OK);
    assert_int_equal(kube_watch_parser_over_budget(p), 1);
    kube_watch_parser_free(p);
    buf_cleanup(&r.log);
}

static void test_handler_stop(void **state)
{
    (void)state;
    size_t len;
    char *data = read_fixture("stream.jsonl", &len);
    struct run r = feed_cut(data, len, NULL, 0, MAX_EVENT, 2);
    assert_int_equal(r.rc, K_ECANCELED);
    assert_string_equal(r.log, "ADDED train-0 1001\nMODIFIED train-0 1002\n");
    /* The refused event does not advance the resourceVersion. */
    assert_string_equal(r.last_rv, "1001");
    run_free(&r);
    free(data);
}

static void test_error_is_sticky(void **state)
{
    (void)state;
    struct record r = {0};
    buf_init(&r.log, 4096);
    struct kube_watch_parser *p = kube_watch_parser_new(MAX_EVENT, on_event, &r);
    assert_non_null(p);
    assert_string_equal(kube_watch_parser_last_rv(p), "");
    assert_int_equal(kube_watch_parser_feed(p, "}", 1), K_EPARSE);
    static const char ok[] = "{\"type\":\"ADDED\",\"object\":{}}\n";
    assert_int_equal(kube_watch_parser_feed(p, ok, sizeof(ok) - 1), K_EPARSE);
    assert_int_equal(kube_watch_parser_finish(p), K_EPARSE);
    assert_int_equal(r.count, 0);
    kube_watch_parser_free(p);
    kube_watch_parser_free(NULL);
    buf_cleanup(&r.log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_every_split),
        cmocka_unit_test(test_whitespace_and_joined_events),
        cmocka_unit_test(test_bookmark_advances_rv),
        cmocka_unit_test(test_error_410),
        cmocka_unit_test(test_error_code_helper),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_garbage_and_nul),
        cmocka_unit_test(test_event_then_bad_byte),
        cmocka_unit_test(test_numbers_split_anywhere),
        cmocka_unit_test(test_braces_in_strings),
        cmocka_unit_test(test_truncated_stream),
        cmocka_unit_test(test_oversize_event),
        cmocka_unit_test(test_handler_stop),
        cmocka_unit_test(test_deep_event_skipped),
        cmocka_unit_test(test_error_is_sticky),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
