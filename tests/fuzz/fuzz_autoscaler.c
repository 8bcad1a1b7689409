/*
 * fuzz_autoscaler.c - libFuzzer target for the autoscaler evidence (core/classify/autoscaler.c)
 * and the Event projection (core/kube/project_event.c).
 *
 * The first byte picks the input's shape. 0x80 and above: the rest is a core/v1 Event in JSON,
 * projected by project_event and parsed. Below: the byte picks a writer and reason (modulo the
 * entries of autoscaler_event_kinds, in their order: Cluster Autoscaler's TriggeredScaleUp,
 * NotTriggerScaleUp, GKE's FailedScaleUp, Karpenter's Nominated, FailedScheduling,
 * InsufficientCapacityError) and the rest is the message's bytes, as many as fit
 * the Event's buffer, which is left without a terminator when they fill it.
 *
 * Besides the sanitizers, the target checks what autoscaler.h promises: a record within its
 * bounds (groups, items, category bits), every kept text valid UTF-8, the same record twice, a
 * detail of at most AUTOSCALER_DETAIL_MAX bytes that is valid UTF-8 without control characters,
 * autoscaler_cmp antisymmetric, and, for a Cluster Autoscaler NotTriggerScaleUp, the same record
 * when its "<n> <reason>" items are given in reverse order (Cluster Autoscaler joins them in random
 * order).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "classify/autoscaler.h"
#include "kube/project.h"
#include "util/result.h"
#include "util/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CA_PREFIX "pod didn't trigger scale-up: "

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_autoscaler: %s\n", what);
        abort();
    }
}

static void check_utf8(const char *s, size_t cap, const char *what)
{
    size_t n = strnlen(s, cap);
    check(n < cap, what);
    struct utf8_stream st;
    utf8_stream_init(&st);
    check(utf8_stream_valid_prefix(&st, s, n) == n && utf8_stream_complete(&st), what);
}

/* Whether s[i..n) starts with "<digits> " (autoscaler.c splits the items there). */
static bool count_at(const char *s, size_t n, size_t i)
{
    size_t j = i;
    while (j < n && s[j] >= '0' && s[j] <= '9')
        j++;
    return j > i && j < n && s[j] == ' ';
}

/* The items of a NotTriggerScaleUp message in reverse order, into out (same length). */
static bool reversed_items(const char *msg, size_t n, char *out)
{
    size_t k = strlen(CA_PREFIX);
    if (n < k || memcmp(msg, CA_PREFIX, k) != 0 || !count_at(msg, n, k))
        return false;
    size_t starts[KEVENT_MESSAGE_MAX], ends[KEVENT_MESSAGE_MAX], m = 0;
    size_t start = k;
    while (start < n) {
        size_t end = start;
        for (;;) {
            while (end + 1 < n && !(msg[end] == ',' && msg[end + 1] == ' '))
                end++;
            if (end + 1 >= n) {
                end = n;
                break;
            }
            if (count_at(msg, n, end + 2))
                break;
            end += 2;
        }
        starts[m] = start;
        ends[m++] = end;
        start = end + 2;
    }
    memcpy(out, msg, k);
    size_t o = k;
    for (size_t i = m; i-- > 0;) {
        memcpy(out + o, msg + starts[i], ends[i] - starts[i]);
        o += ends[i] - starts[i];
        if (i > 0) {
            memcpy(out + o, ", ", 2);
            o += 2;
        }
    }
    return o == n;
}

static void check_record(const struct autoscaler_evidence *e)
{
    check(e->n_groups <= AUTOSCALER_GROUPS_MAX && e->n_groups <= e->groups_seen, "groups");
    check(e->n_items <= AUTOSCALER_ITEMS_MAX && e->n_items <= e->parts_seen, "items");
    check((e->categories & ~AUTOSCALER_CAT_ALL) == 0, "category bits");
    uint32_t parts = 0;
    for (size_t i = 0; i < e->n_items; i++) {
        const struct autoscaler_item *it = &e->items[i];
        check(it->category && (it->category & (it->category - 1)) == 0, "an item's category");
        check((e->categories & it->category) != 0, "an item's category in the record's");
        check(it->parts >= 1, "an item's parts");
        parts += it->parts;
        check_utf8(it->text, sizeof(it->text), "an item's text");
        if (i > 0)
            check(e->items[i - 1].category <= it->category, "items in order");
    }
    check(parts <= e->parts_seen, "parts add up");
    for (size_t i = 0; i < e->n_groups; i++)
        check_utf8(e->groups[i].id, sizeof(e->groups[i].id), "a group's id");
    check_utf8(e->name, sizeof(e->name), "name");
    check_utf8(e->node, sizeof(e->node), "node");
    check(e->kind == AUTOSCALER_KIND_NONE || e->count >= 1, "count");

    char buf[AUTOSCALER_DETAIL_MAX + 64];
    struct line l = {.buf = buf, .cap = sizeof(buf)};
    autoscaler_detail(e, 1796119800, &l);
    check(l.len <= AUTOSCALER_DETAIL_MAX, "detail length");
    line_finish(&l);
    check_utf8(buf, sizeof(buf), "detail UTF-8");
    for (size_t i = 0; buf[i]; i++)
        check((unsigned char)buf[i] >= 0x20 && buf[i] != 0x7f, "detail control character");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1u << 16))
        return 0;
    static struct kevent ev;
    if (data[0] & 0x80) {
        json_tokener *tok = json_tokener_new_ex(32);
        if (!tok)
            return 0;
        json_object *obj = json_tokener_parse_ex(tok, (const char *)data + 1, (int)(size - 1));
        json_tokener_free(tok);
        if (!obj)
            return 0;
        int rc = project_event(obj, &ev);
        json_object_put(obj);
        if (rc != K_OK)
            return 0;
        check_utf8(ev.message, sizeof(ev.message), "projected message");
        check_utf8(ev.obj_uid, sizeof(ev.obj_uid), "projected uid");
    } else {
        memset(&ev, 0, sizeof(ev));
        const struct autoscaler_event_kind *k =
            &autoscaler_event_kinds[data[0] % AUTOSCALER_EVENT_KINDS];
        snprintf(ev.obj_kind, sizeof(ev.obj_kind), "Pod");
        snprintf(ev.component, sizeof(ev.component), "%s", k->component);
        snprintf(ev.reason, sizeof(ev.reason), "%s", k->reason);
        size_t n = size - 1 < sizeof(ev.message) ? size - 1 : sizeof(ev.message);
        memcpy(ev.message, data + 1, n);
        ev.last_timestamp = 1796119200 + (data[0] >> 3);
        ev.count = data[0] & 7;
    }
    struct autoscaler_evidence a, b;
    bool got = autoscaler_parse(&ev, &a);
    check(got == autoscaler_parse(&ev, &b) && memcmp(&a, &b, sizeof(a)) == 0, "parsed twice");
    check(got || a.kind == AUTOSCALER_KIND_NONE, "no evidence, no kind");
    check_record(&a);

    /* Cluster Autoscaler's reasons in the other order: the same record */
    size_t n = strnlen(ev.message, sizeof(ev.message));
    static char rev[KEVENT_MESSAGE_MAX];
    if (got && a.writer == AUTOSCALER_CA && a.kind == AUTOSCALER_REFUSED &&
        reversed_items(ev.message, n, rev)) {
        memcpy(ev.message, rev, n);
        check(autoscaler_parse(&ev, &b), "reversed: evidence");
        check(memcmp(&a, &b, sizeof(a)) == 0, "reversed: another record");
    }

    /* cmp: antisymmetric against a record of another kind and time */
    b = a;
    b.kind = a.kind == AUTOSCALER_TRIGGERED ? AUTOSCALER_REFUSED : AUTOSCALER_TRIGGERED;
    b.at = a.at + (data[0] & 1);
    int ab = autoscaler_cmp(&a, &b), ba = autoscaler_cmp(&b, &a);
    check((ab > 0) == (ba < 0) && (ab == 0) == (ba == 0), "cmp antisymmetric");
    return 0;
}
