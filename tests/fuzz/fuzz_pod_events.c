/*
 * fuzz_pod_events.c - libFuzzer target for the per-pod Event cache (core/cache/pod_events.c): a
 * sequence of operations on a cache of at most 3 pods, as the Event informers and the pod
 * handler drive it.
 *
 * The input is a run of operations, each an opcode byte and its operand bytes (missing bytes
 * read as 0). opcode % 8:
 *   0, 1  apply an upsert (1: a deletion) of an Event: 6 bytes choose the Event's namespace
 *         ("ml" or "evil"), its name (of 6), the pod (of 4, in "ml"), the uid (of 3, "" among
 *         them), the writer (source.component and reportingComponent, of 4), the reason (of 12),
 *         then 4 bytes for each of the four times (a byte picks 0, an ordinary second, a far
 *         future or a far past one, 3 more bytes an offset), 2 for the count and 1 for the
 *         message's length followed by that many raw bytes (invalid UTF-8 and NUL included);
 *   2     forget a pod (1 byte: which), or with its top bit set keep only the pods below the
 *         byte's low bits (pod_events_retain);
 *   3, 4  a relist of one writer begins (3) or ends (4) (1 byte: which writer);
 *   5..7  read a pod's records (1 byte: which pod, and whether by uid).
 * The clock (`not_after` of pod_events_apply) is fixed.
 *
 * Besides the sanitizers (a leak included: the cache is freed at the end), after every
 * operation the target checks what pod_events.h promises: at most POD_EVENTS_PER_POD records a
 * pod and at most 3 pods; the counts of pod_events_stats match what pod_events_get returns, and
 * the bytes are 0 exactly when there are no records; no record lives in another namespace than
 * its pod or lacks a uid; no string is missing or longer than the Event's buffer; one record per
 * (writer, reason) on a pod; after a relist's end no record of that writer is stale; a forgotten
 * pod, or one not retained, has no records; a pod_key named by apply is the Event's pod.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/pod_events.h"
#include "util/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_PODS 3
#define NOW 1764513000 /* 2025-11-30 */
#define NOT_AFTER (NOW + 300)

static const char *const pods[] = {"p0", "p1", "p2", "p3"};
static const char *const uids[] = {"u0", "u1", ""};
static const char *const names[] = {"e0", "e1", "e2", "e3", "e4", "e5"};
static const char *const writers[] = {"cluster-autoscaler", "karpenter", "", "other"};
static const char *const reasons[] = {"TriggeredScaleUp",
                                      "NotTriggerScaleUp",
                                      "FailedScaleUp",
                                      "Nominated",
                                      "FailedScheduling",
                                      "InsufficientCapacityError",
                                      "R6",
                                      "R7",
                                      "R8",
                                      "R9",
                                      "R10",
                                      ""};
#define N(a) (sizeof(a) / sizeof((a)[0]))

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_pod_events: %s\n", what);
        abort();
    }
}

struct input {
    const uint8_t *p;
    size_t n;
};

static uint8_t byte(struct input *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

static int64_t a_time(struct input *in)
{
    uint8_t kind = byte(in);
    uint32_t off = (uint32_t)byte(in) << 16 | (uint32_t)byte(in) << 8 | byte(in);
    switch (kind % 4) {
    case 0:
        return 0;
    case 1:
        return NOW - 600 + (int64_t)(off % 1200);
    case 2:
        return 253402300799 - (int64_t)off; /* toward 9999-12-31 */
    default:
        return (int64_t)off; /* 1970 */
    }
}

/* A record's string: there, and no longer than the Event's buffer held (terminator included). */
static bool bounded(const char *s, size_t cap)
{
    return s && strnlen(s, cap) < cap;
}

/* The invariants over every pod the input can name. */
static void check_all(struct pod_events *pe, const char *synced_writer)
{
    size_t events = 0, held = 0;
    pod_events_read_lock(pe);
    for (size_t i = 0; i < N(pods); i++) {
        const struct pod_event *got[POD_EVENTS_PER_POD + 1];
        size_t n = pod_events_get(pe, "ml", pods[i], NULL, got, POD_EVENTS_PER_POD + 1);
        check(n <= POD_EVENTS_PER_POD, "more records than POD_EVENTS_PER_POD");
        events += n;
        held += n > 0;
        for (size_t j = 0; j < n; j++) {
            const struct pod_event *e = got[j];
            check(bounded(e->event_ns, KEVENT_NS_MAX) && bounded(e->event_name, KEVENT_NAME_MAX) &&
                      bounded(e->pod_uid, KEVENT_WORD_MAX) &&
                      bounded(e->component, KEVENT_WORD_MAX) &&
                      bounded(e->reporting, KEVENT_WORD_MAX) &&
                      bounded(e->reason, KEVENT_WORD_MAX) && bounded(e->type, KEVENT_WORD_MAX) &&
                      bounded(e->message, KEVENT_MESSAGE_MAX),
                  "a record's string missing or longer than its Event's buffer");
            check(strcmp(e->event_ns, "ml") == 0, "a record from another namespace");
            check(e->pod_uid[0] != '\0', "a record without a uid");
            check(!synced_writer || !e->stale || strcmp(e->component, synced_writer) != 0,
                  "a stale record after its writer's relist ended");
            for (size_t k = 0; k < j; k++)
                check(strcmp(got[k]->component, e->component) != 0 ||
                          strcmp(got[k]->reporting, e->reporting) != 0 ||
                          strcmp(got[k]->reason, e->reason) != 0,
                      "two records of one writer and reason");
        }
    }
    pod_events_read_unlock(pe);
    struct pod_events_stats st;
    pod_events_stats(pe, &st);
    check(st.events == events, "stats.events differs from the records held");
    check(st.pods == held, "stats.pods differs from the pods held");
    check(st.pods <= MAX_PODS, "more pods than max_pods");
    check((st.bytes == 0) == (st.events == 0), "stats.bytes out of step");
}

static bool keep_below(void *ctx, const char *key)
{
    size_t below = *(const size_t *)ctx;
    for (size_t i = 0; i < below; i++) {
        char k[16];
        snprintf(k, sizeof(k), "ml/%s", pods[i]);
        if (strcmp(key, k) == 0)
            return true;
    }
    return false;
}

static size_t count(struct pod_events *pe, const char *pod)
{
    const struct pod_event *got[POD_EVENTS_PER_POD];
    pod_events_read_lock(pe);
    size_t n = pod_events_get(pe, "ml", pod, NULL, got, POD_EVENTS_PER_POD);
    pod_events_read_unlock(pe);
    return n;
}

static void op_apply(struct pod_events *pe, struct input *in, bool deleted)
{
    struct kevent ev;
    memset(&ev, 0, sizeof(ev));
    snprintf(ev.ns, sizeof(ev.ns), "%s", byte(in) & 1 ? "evil" : "ml");
    snprintf(ev.name, sizeof(ev.name), "%s", names[byte(in) % N(names)]);
    snprintf(ev.obj_kind, sizeof(ev.obj_kind), "Pod");
    snprintf(ev.obj_ns, sizeof(ev.obj_ns), "ml");
    const char *pod = pods[byte(in) % N(pods)];
    snprintf(ev.obj_name, sizeof(ev.obj_name), "%s", pod);
    snprintf(ev.obj_uid, sizeof(ev.obj_uid), "%s", uids[byte(in) % N(uids)]);
    uint8_t w = byte(in);
    snprintf(ev.component, sizeof(ev.component), "%s", writers[w % N(writers)]);
    snprintf(ev.reporting, sizeof(ev.reporting), "%s", writers[(w >> 2) % N(writers)]);
    snprintf(ev.reason, sizeof(ev.reason), "%s", reasons[byte(in) % N(reasons)]);
    snprintf(ev.type, sizeof(ev.type), "Normal");
    ev.first_timestamp = a_time(in);
    ev.last_timestamp = a_time(in);
    ev.event_time = a_time(in);
    ev.series_last = a_time(in);
    ev.count = (int32_t)((uint32_t)byte(in) << 8 | byte(in));
    size_t len = byte(in);
    if (len > in->n)
        len = in->n;
    if (len >= sizeof(ev.message))
        len = sizeof(ev.message) - 1;
    memcpy(ev.message, in->p, len);
    in->p += len;
    in->n -= len;
    char key[256];
    int rc = pod_events_apply(pe, &ev, deleted, NOT_AFTER, key);
    check(rc == K_OK || rc == K_ETOOBIG, "apply: an unexpected result");
    if (key[0]) {
        char want[256];
        snprintf(want, sizeof(want), "ml/%s", pod);
        check(strcmp(key, want) == 0, "apply named another pod");
        check(strcmp(ev.ns, "ml") == 0, "an Event of another namespace changed a pod");
        check(ev.obj_uid[0] != '\0', "an Event without a uid changed a pod");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pod_events *pe = pod_events_new(MAX_PODS);
    if (!pe)
        return 0;
    struct input in = {data, size};
    while (in.n > 0) {
        uint8_t op = byte(&in) % 8;
        const char *synced = NULL;
        switch (op) {
        case 0:
        case 1:
            op_apply(pe, &in, op == 1);
            break;
        case 2: {
            uint8_t b = byte(&in);
            if (b & 0x80) {
                size_t below = b & 3;
                pod_events_retain(pe, keep_below, &below);
                for (size_t i = below; i < N(pods); i++)
                    check(count(pe, pods[i]) == 0, "a pod not retained has records");
                break;
            }
            const char *pod = pods[b % N(pods)];
            pod_events_forget_pod(pe, "ml", pod);
            check(count(pe, pod) == 0, "a forgotten pod has records");
            break;
        }
        case 3:
            pod_events_sync_begin(pe, writers[byte(&in) % N(writers)]);
            break;
        case 4:
            synced = writers[byte(&in) % N(writers)];
            pod_events_sync_end(pe, synced, NULL, NULL);
            break;
        default: {
            uint8_t b = byte(&in);
            const struct pod_event *got[POD_EVENTS_PER_POD];
            pod_events_read_lock(pe);
            size_t n = pod_events_get(pe, "ml", pods[b % N(pods)], b & 0x80 ? uids[0] : NULL, got,
                                      POD_EVENTS_PER_POD);
            for (size_t i = 0; i < n; i++)
                check(!(b & 0x80) || strcmp(got[i]->pod_uid, uids[0]) == 0,
                      "a record of another uid");
            pod_events_read_unlock(pe);
            break;
        }
        }
        check_all(pe, synced);
    }
    pod_events_free(pe);
    return 0;
}
