/*
 * fuzz_watch.c - libFuzzer target for the watch stream parser (core/kube/watch.c).
 *
 * The parser's result must not depend on how the HTTP layer cuts the stream into chunks. The
 * input is a small header that chooses the cuts, then the stream:
 *   byte 0   bits 0-3: the number of cuts (0-15); bit 4: feed one byte at a time instead;
 *            bits 5-6: the event size limit (1 MiB, 64, 300 or 4096 bytes)
 *   byte 1   the event on which the handler asks to stop (1-based), 0 for never
 *   2 bytes per cut: a little-endian offset into the stream (modulo its length + 1)
 * The stream is fed once in one piece and once in the chosen chunks; the events delivered (type
 * and object), the result, and the last resourceVersion must be the same, and a parser that has
 * failed must keep failing without delivering anything. A difference aborts.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "kube/watch.h"
#include "util/buf.h"
#include "util/result.h"

#define LOG_LIMIT (64u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct record {
    struct buf log;
    unsigned count;
    unsigned stop_after;
};

static int on_event(void *ctx, enum kube_event_type type, json_object *object)
{
    struct record *r = ctx;
    r->count++;
    const char *text = json_object_to_json_string_ext(object, JSON_C_TO_STRING_PLAIN);
    if (buf_printf(&r->log, "%d %s\n", (int)type, text ? text : "(null)") != K_OK)
        abort(); /* the log is bounded by LOG_LIMIT, far above what an input can produce */
    return r->stop_after && r->count == r->stop_after;
}

struct run {
    int rc;
    char *log;
    char *last_rv;
};

/* Feed stream[0..len) as the chunks ending at cuts[0..ncuts) (ascending) and then at len. */
static struct run feed(const char *stream, size_t len, const size_t *cuts, size_t ncuts,
                       size_t max_event, unsigned stop_after)
{
    struct record r = {.stop_after = stop_after};
    buf_init(&r.log, LOG_LIMIT);
    struct kube_watch_parser *p = kube_watch_parser_new(max_event, on_event, &r);
    if (!p)
        abort();
    struct run out = {.rc = K_OK};
    size_t at = 0;
    for (size_t i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        int rc = kube_watch_parser_feed(p, stream + at, end - at);
        if (out.rc == K_OK) {
            out.rc = rc;
        } else if (rc != out.rc) {
            fprintf(stderr, "feed after error %d returned %d\n", out.rc, rc);
            abort();
        }
        at = end;
    }
    unsigned seen = r.count;
    int fin = kube_watch_parser_finish(p);
    if (out.rc == K_OK)
        out.rc = fin;
    else if (fin != out.rc)
        abort();
    if (r.count != seen)
        abort();
    out.last_rv = strdup(kube_watch_parser_last_rv(p));
    if (!out.last_rv)
        abort();
    out.log = buf_take(&r.log);
    if (!out.log)
        out.log = strdup("");
    kube_watch_parser_free(p);
    return out;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t limits[4] = {1u << 20, 64, 300, 4096};
    if (size < 2)
        return 0;
    unsigned flags = data[0];
    unsigned stop_after = data[1];
    size_t ncuts = flags & 15;
    int bytewise = (flags >> 4) & 1;
    size_t max_event = limits[(flags >> 5) & 3];
    data += 2;
    size -= 2;
    if (size < 2 * ncuts)
        return 0;
    const uint8_t *offsets = data;
    const char *stream = (const char *)data + 2 * ncuts;
    size_t len = size - 2 * ncuts;

    size_t *cuts;
    if (bytewise) {
        ncuts = len ? len - 1 : 0;
        cuts = malloc((ncuts + 1) * sizeof(*cuts));
        if (!cuts)
            abort();
        for (size_t i = 0; i < ncuts; i++)
            cuts[i] = i + 1;
    } else {
        cuts = malloc((ncuts + 1) * sizeof(*cuts));
        if (!cuts)
            abort();
        for (size_t i = 0; i < ncuts; i++)
            cuts[i] = ((size_t)offsets[2 * i] | (size_t)offsets[2 * i + 1] << 8) % (len + 1);
        qsort(cuts, ncuts, sizeof(*cuts), cmp_size);
    }

    struct run whole = feed(stream, len, NULL, 0, max_event, stop_after);
    struct run split = feed(stream, len, cuts, ncuts, max_event, stop_after);
    if (whole.rc != split.rc || strcmp(whole.log, split.log) != 0 ||
        strcmp(whole.last_rv, split.last_rv) != 0) {
        fprintf(stderr, "whole: rc %d rv \"%s\" events:\n%s\n", whole.rc, whole.last_rv, whole.log);
        fprintf(stderr, "in %zu chunks: rc %d rv \"%s\" events:\n%s\n", ncuts + 1, split.rc,
                split.last_rv, split.log);
        for (size_t i = 0; i < ncuts; i++)
            fprintf(stderr, "cut at %zu\n", cuts[i]);
        abort();
    }
    free(whole.log);
    free(whole.last_rv);
    free(split.log);
    free(split.last_rv);
    free(cuts);
    return 0;
}
