/*
 * Tests for controller/event_recorder.c: the first Event is created, repeats of the same pod and
 * reason are aggregated into it (count, lastTimestamp, message), and a vanished Event is created
 * again. A recording sink stands in for the API.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "event_recorder.h"
#include "util/result.h"

struct action {
    char verb[8]; /* "create" or "patch" */
    char ns[64];
    char name[320];
    char body[2048];
};

struct recorder {
    struct action actions[16];
    int n;
    int patch_fails; /* K_* for the next patch */
};

static void record(struct recorder *r, const char *verb, const char *ns, const char *name,
                   json_object *body)
{
    assert_true(r->n < 16);
    struct action *a = &r->actions[r->n++];
    snprintf(a->verb, sizeof(a->verb), "%s", verb);
    snprintf(a->ns, sizeof(a->ns), "%s", ns);
    snprintf(a->name, sizeof(a->name), "%s", name);
    snprintf(a->body, sizeof(a->body), "%s",
             json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN));
}

static int rec_create(void *conn, const char *ns, json_object *body, struct kube_error *err)
{
    (void)err;
    json_object *meta, *name;
    json_object_object_get_ex(body, "metadata", &meta);
    json_object_object_get_ex(meta, "name", &name);
    record(conn, "create", ns, json_object_get_string(name), body);
    return K_OK;
}

static int rec_patch(void *conn, const char *ns, const char *name, json_object *body,
                     struct kube_error *err)
{
    struct recorder *r = conn;
    if (r->patch_fails) {
        int rc = r->patch_fails;
        r->patch_fails = 0;
        err->code = rc;
        return rc;
    }
    record(r, "patch", ns, name, body);
    return K_OK;
}

static const struct event_sink sink = {rec_create, rec_patch};

static struct clock_fake fake;

/* The fake clock, reset to wall time `ms`. */
static const struct clock *clock_at(int64_t ms)
{
    static struct clock c;
    clock_fake_init(&fake, ms);
    c = clock_fake_clock(&fake);
    return &c;
}

static struct kube_event_spec spec(const char *uid, const char *reason, const char *message)
{
    struct kube_event_spec e = {
        .ns = "team-a",
        .kind = "Pod",
        .api_version = "v1",
        .name = "train-0",
        .uid = uid,
        .type = "Warning",
        .reason = reason,
        .message = message,
        .component = "gputri",
        .instance = "host-1",
    };
    return e;
}

static void test_repeat_is_aggregated(void **state)
{
    (void)state;
    struct recorder r = {0};
    struct event_recorder *er =
        event_recorder_new(&sink, 600000, 16, clock_at(1764513000000)); /* 2025-11-30T14:30:00Z */
    struct kube_event_spec e = spec("uid-1", "GPUExhausted", "0/1 free");
    struct kube_error err = {0};
    int agg = -1;

    assert_int_equal(event_recorder_record(er, &r, &e, &agg, &err), K_OK);
    assert_int_equal(agg, 0);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.actions[0].verb, "create");
    assert_string_equal(r.actions[0].ns, "team-a");
    assert_true(strncmp(r.actions[0].name, "train-0.", 8) == 0);
    assert_non_null(strstr(r.actions[0].body, "\"count\":1"));
    assert_non_null(strstr(r.actions[0].body, "\"reason\":\"GPUExhausted\""));
    assert_non_null(strstr(r.actions[0].body, "\"uid\":\"uid-1\""));
    assert_non_null(strstr(r.actions[0].body, "\"reportingComponent\":\"gputri\""));

    /* The same pod and reason a minute later: the Event is patched, not created again. */
    clock_fake_advance_ms(&fake, 60000);
    e.message = "0/2 free";
    assert_int_equal(event_recorder_record(er, &r, &e, &agg, &err), K_OK);
    assert_int_equal(agg, 1);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.actions[1].verb, "patch");
    assert_string_equal(r.actions[1].name, r.actions[0].name);
    assert_string_equal(r.actions[1].body,
                        "{\"count\":2,\"lastTimestamp\":\"2025-11-30T14:31:00Z\","
                        "\"message\":\"0\\/2 free\"}");
    clock_fake_advance_ms(&fake, 1000);
    assert_int_equal(event_recorder_record(er, &r, &e, &agg, &err), K_OK);
    assert_non_null(strstr(r.actions[2].body, "\"count\":3"));
    assert_int_equal(event_recorder_size(er), 1);
    event_recorder_free(er);
}

static void test_other_reason_or_pod_is_a_new_event(void **state)
{
    (void)state;
    struct recorder r = {0};
    struct event_recorder *er = event_recorder_new(&sink, 600000, 16, clock_at(1764513000000));
    struct kube_event_spec e1 = spec("uid-1", "GPUExhausted", "m");
    struct kube_event_spec e2 = spec("uid-1", "GPUTaint", "m");
    struct kube_event_spec e3 = spec("uid-2", "GPUExhausted", "m"); /* same name, new pod */
    struct kube_error err = {0};
    assert_int_equal(event_recorder_record(er, &r, &e1, NULL, &err), K_OK);
    clock_fake_advance_ms(&fake, 1);
    assert_int_equal(event_recorder_record(er, &r, &e2, NULL, &err), K_OK);
    clock_fake_advance_ms(&fake, 1);
    assert_int_equal(event_recorder_record(er, &r, &e3, NULL, &err), K_OK);
    assert_int_equal(r.n, 3);
    for (int i = 0; i < 3; i++)
        assert_string_equal(r.actions[i].verb, "create");
    assert_string_not_equal(r.actions[0].name, r.actions[1].name);
    assert_int_equal(event_recorder_size(er), 3);
    event_recorder_free(er);
}

static void test_expired_or_vanished_event_is_created_again(void **state)
{
    (void)state;
    struct recorder r = {0};
    struct event_recorder *er = event_recorder_new(&sink, 600000, 16, clock_at(1764513000000));
    struct kube_event_spec e = spec("uid-1", "GPUExhausted", "m");
    struct kube_error err = {0};
    assert_int_equal(event_recorder_record(er, &r, &e, NULL, &err), K_OK);

    /* Past the ttl: forgotten, so a new Event. */
    clock_fake_advance_ms(&fake, 600000);
    assert_int_equal(event_recorder_record(er, &r, &e, NULL, &err), K_OK);
    assert_string_equal(r.actions[1].verb, "create");

    /* The server lost it (404): created again, and remembered under the new name. */
    clock_fake_advance_ms(&fake, 1000);
    r.patch_fails = K_ENOTFOUND;
    int agg = -1;
    assert_int_equal(event_recorder_record(er, &r, &e, &agg, &err), K_OK);
    assert_int_equal(agg, 0);
    assert_int_equal(r.n, 3);
    assert_string_equal(r.actions[2].verb, "create");
    clock_fake_advance_ms(&fake, 1000);
    assert_int_equal(event_recorder_record(er, &r, &e, &agg, &err), K_OK);
    assert_int_equal(agg, 1);
    assert_string_equal(r.actions[3].name, r.actions[2].name);

    /* Any other patch failure is returned for the caller's retry; nothing is created. */
    r.patch_fails = K_ETHROTTLED;
    assert_int_equal(event_recorder_record(er, &r, &e, NULL, &err), K_ETHROTTLED);
    assert_int_equal(r.n, 4);
    event_recorder_free(er);
}

static void test_no_uid_is_never_aggregated_and_lru_bounds_memory(void **state)
{
    (void)state;
    struct recorder r = {0};
    struct event_recorder *er = event_recorder_new(&sink, 600000, 2, clock_at(1764513000000));
    struct kube_event_spec e = spec(NULL, "GPUExhausted", "m");
    struct kube_error err = {0};
    assert_int_equal(event_recorder_record(er, &r, &e, NULL, &err), K_OK);
    assert_int_equal(event_recorder_record(er, &r, &e, NULL, &err), K_OK);
    assert_string_equal(r.actions[1].verb, "create");
    assert_int_equal(event_recorder_size(er), 0);

    struct kube_event_spec a = spec("uid-a", "R", "m"), b = spec("uid-b", "R", "m"),
                           c = spec("uid-c", "R", "m");
    event_recorder_record(er, &r, &a, NULL, &err);
    clock_fake_advance_ms(&fake, 1);
    event_recorder_record(er, &r, &b, NULL, &err);
    clock_fake_advance_ms(&fake, 1);
    event_recorder_record(er, &r, &a, NULL, &err); /* a used again: b is least recent */
    clock_fake_advance_ms(&fake, 1);
    event_recorder_record(er, &r, &c, NULL, &err); /* evicts b */
    assert_int_equal(event_recorder_size(er), 2);
    int before = r.n;
    clock_fake_advance_ms(&fake, 1);
    event_recorder_record(er, &r, &a, NULL, &err);
    assert_string_equal(r.actions[before].verb, "patch");
    event_recorder_record(er, &r, &b, NULL, &err);
    assert_string_equal(r.actions[before + 1].verb, "create");
    event_recorder_free(er);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repeat_is_aggregated),
        cmocka_unit_test(test_other_reason_or_pod_is_a_new_event),
        cmocka_unit_test(test_expired_or_vanished_event_is_created_again),
        cmocka_unit_test(test_no_uid_is_never_aggregated_and_lru_bounds_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
