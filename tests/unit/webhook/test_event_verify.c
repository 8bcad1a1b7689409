/*
 * Tests for webhook/event_verify.c: a review's object is read back, and Events are posted only
 * when it has the review's uid and creation time (within the age bound, once per uid), saying
 * what the admission checks (admission.h admission_check_object) find on the object as read
 * back, never what the review said: for every recorded CREATE of tests/fixtures/admission the
 * Events are that fixture's warnings (but the quota left, which the stored object's own charge
 * in status.used would count twice); a forged review (any warnings, any text) naming a stored
 * object that draws none writes nothing. An object absent until the give-up time, found with
 * another identity, or a failing API gives none; the queue drops its oldest review when full;
 * the object's path per kind, and names that are refused. Time is a fake clock; lookups run
 * through wh_verify_run_due against the recording fake API, and Events through a recorder
 * writing to a second one.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "admission.h"
#include "event_verify.h"
#include "fake_kube.h"
#include "gpus.h"
#include "objects.h"
#include "util/result.h"
#include "warnings.h"
#include "wh_testutil.h"

#define WALL_MS 1700000000000LL        /* 2023-11-14T22:13:20Z */
#define CREATED "2023-11-14T22:13:20Z" /* = WALL_MS */
#define POD_PATH "/api/v1/namespaces/team/pods/train-0"

struct world {
    struct clock_fake fc;
    struct clock clock;
    struct fake_kube api;    /* the lookups */
    struct fake_kube events; /* the recorder's writes */
    struct kube_client *c, *ec;
    struct event_recorder *rec;
    struct wh_verify *v;
    json_object *fixture; /* admission/pod_taint.json: the snapshot and the stored pod */
    struct owned_snapshot os;
    size_t snapshot_reads, snapshot_releases;
};

static void snap_read(void *ctx, struct wh_snapshot *snap)
{
    struct world *w = ctx;
    w->snapshot_reads++;
    *snap = w->os.snap;
}

static void snap_release(void *ctx)
{
    struct world *w = ctx;
    w->snapshot_releases++;
}

/* The world's snapshot: that of fixture `file` (admission/...); edit, when not NULL, changes
 * the fixture first. */
static void world_snapshot_edited(struct world *w, const char *file, void (*edit)(json_object *))
{
    if (w->fixture) {
        owned_snapshot_cleanup(&w->os);
        json_object_put(w->fixture);
    }
    w->fixture = test_load_json(FIXTURES_DIR, file);
    assert_non_null(w->fixture);
    if (edit)
        edit(w->fixture);
    json_object *snapj = NULL;
    assert_true(json_object_object_get_ex(w->fixture, "snapshot", &snapj));
    assert_int_equal(owned_snapshot_build(&w->os, snapj, &test_gpus), K_OK);
}

static void world_snapshot(struct world *w, const char *file)
{
    world_snapshot_edited(w, file, NULL);
}

static void world_init(struct world *w, size_t capacity)
{
    memset(w, 0, sizeof(*w));
    clock_fake_init(&w->fc, WALL_MS);
    w->clock = clock_fake_clock(&w->fc);
    fake_kube_init(&w->api);
    fake_kube_init(&w->events);
    w->c = fake_kube_client(&w->api);
    w->ec = fake_kube_client(&w->events);
    w->rec = event_recorder_new(&(struct event_recorder_options){.queue_capacity = 64});
    assert_non_null(w->rec);
    assert_int_equal(event_recorder_start(w->rec, w->ec), K_OK);
    world_snapshot(w, "admission/pod_taint.json");
    w->v = wh_verify_new(&(struct wh_verify_options){.capacity = capacity,
                                                     .instance = "host-1",
                                                     .clock = &w->clock,
                                                     .snapshot_read = snap_read,
                                                     .snapshot_release = snap_release,
                                                     .snapshot_ctx = w},
                         w->rec);
    assert_non_null(w->v);
}

/* Stops both, returns the Events written. */
static size_t world_events(struct world *w)
{
    wh_verify_free(w->v);
    w->v = NULL;
    event_recorder_stop(w->rec, 5000);
    return fake_kube_count(&w->events);
}

static void world_cleanup(struct world *w)
{
    wh_verify_free(w->v);
    event_recorder_free(w->rec);
    kube_client_free(w->c);
    kube_client_free(w->ec);
    fake_kube_cleanup(&w->api);
    fake_kube_cleanup(&w->events);
    assert_int_equal(w->snapshot_reads, w->snapshot_releases);
    owned_snapshot_cleanup(&w->os);
    json_object_put(w->fixture);
}

/* A CREATE review of Pod team/train-0 with uid `uid` and two warnings. */
static void review(struct admission_result *r, const char *uid)
{
    memset(r, 0, sizeof(*r));
    warn_list_init(&r->warnings);
    snprintf(r->ns, sizeof(r->ns), "team");
    snprintf(r->kind, sizeof(r->kind), "Pod");
    snprintf(r->api_version, sizeof(r->api_version), "v1");
    snprintf(r->name, sizeof(r->name), "train-0");
    snprintf(r->uid, sizeof(r->uid), "%s", uid);
    snprintf(r->created, sizeof(r->created), CREATED);
    snprintf(r->operation, sizeof(r->operation), "CREATE");
    assert_true(warn_add(&r->warnings, WARN_REASON_TAINT, "taint %s", "gpu=true:NoSchedule"));
    assert_true(warn_add(&r->warnings, WARN_REASON_RUNTIMECLASS, "no RuntimeClass"));
}

/* request.object of fixture c's review (borrowed). */
static json_object *fixture_object(json_object *c)
{
    json_object *review = NULL, *req = NULL, *obj = NULL;
    assert_true(json_object_object_get_ex(c, "review", &review));
    assert_true(json_object_object_get_ex(review, "request", &req));
    assert_true(json_object_object_get_ex(req, "object", &obj));
    return obj;
}

/* Sets metadata.KEY of obj to the string VAL. */
static void set_meta(json_object *obj, const char *key, const char *val)
{
    json_object *meta = NULL;
    if (!json_object_object_get_ex(obj, "metadata", &meta)) {
        meta = json_object_new_object();
        json_object_object_add(obj, "metadata", meta);
    }
    json_object_object_add(meta, key, json_object_new_string(val));
}

/* Answers the next GET with `obj` as stored: with name, namespace, uid and creationTimestamp. */
static void answer_stored(struct fake_kube *api, json_object *obj, const char *ns, const char *name,
                          const char *uid, const char *created)
{
    json_object *copy = NULL;
    assert_int_equal(json_object_deep_copy(obj, &copy, NULL), 0);
    set_meta(copy, "name", name);
    set_meta(copy, "namespace", ns);
    set_meta(copy, "uid", uid);
    set_meta(copy, "creationTimestamp", created);
    fake_kube_answer(api, 200, 0, json_object_to_json_string_ext(copy, JSON_C_TO_STRING_PLAIN));
    json_object_put(copy);
}

/* Answers the next GET with Pod team/train-0 as stored: the pod of admission/pod_taint.json,
 * which draws one warning (its GPU node's taint) against the world's snapshot. */
static void answer_object(struct world *w, const char *uid, const char *created)
{
    answer_stored(&w->api, fixture_object(w->fixture), "team", "train-0", uid, created);
}

static void answer_404(struct fake_kube *api)
{
    fake_kube_answer(api, 404, 0, "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}");
}

static void test_found_with_the_uid(void **state)
{
    (void)state;
    struct world w;
    struct admission_result r;
    world_init(&w, 0);
    review(&r, "uid-1");
    assert_true(wh_verify_queue(w.v, &r));
    /* nothing is looked up before the first delay */
    assert_int_equal(wh_verify_run_due(w.v, w.c), 0);
    clock_fake_advance_ms(&w.fc, WH_VERIFY_FIRST_DELAY_MS);
    answer_object(&w, "uid-1", CREATED);
    assert_int_equal(wh_verify_run_due(w.v, w.c), 1);
    assert_string_equal(fake_kube_request(&w.api, 0)->method, "GET");
    assert_string_equal(fake_kube_request(&w.api, 0)->path, POD_PATH);
    struct wh_verify_stats st;
    wh_verify_stats(w.v, &st);
    assert_int_equal(st.queued, 1);
    assert_int_equal(st.verified, 1);
    assert_int_equal(st.pending, 0);
    /* the stored pod's one warning, not the review's two */
    assert_int_equal(world_events(&w), 1);
    const struct fake_request *q = fake_kube_request(&w.events, 0);
    assert_string_equal(q->path, "/api/v1/namespaces/team/events");
    assert_non_null(strstr(q->body, "\"uid\":\"uid-1\""));
    assert_non_null(strstr(q->body, "\"name\":\"train-0\""));
    assert_non_null(strstr(q->body, "\"reportingInstance\":\"host-1\""));
    assert_non_null(strstr(q->body, "\"reason\":\"" WARN_REASON_TAINT "\""));
    assert_null(strstr(q->body, "no RuntimeClass"));
    world_cleanup(&w);
}

/* Not stored yet at the first lookup (another webhook still deciding): found at the second. */
static void test_found_later(void **state)
{
    (void)state;
    struct world w;
    struct admission_result r;
    world_init(&w, 0);
    review(&r, "uid-1");
    assert_true(wh_verify_queue(w.v, &r));
    clock_fake_advance_ms(&w.fc, 1000);
    answer_404(&w.api);
    assert_int_equal(wh_verify_run_due(w.v, w.c), 1);
    clock_fake_advance_ms(&w.fc, 1999);
    assert_int_equal(wh_verify_run_due(w.v, w.c), 0); /* the second waits 2 s */
    clock_fake_advance_ms(&w.fc, 1);
    answer_object(&w, "uid-1", CREATED);
    assert_int_equal(wh_verify_run_due(w.v, w.c), 1);
    struct wh_verify_stats st;
    wh_verify_stats(w.v, &st);
    assert_int_equal(st.verified, 1);
    assert_int_equal(world_events(&w), 1);
    world_cleanup(&w);
}

/* Queues one review, answers its 5 lookups (at 1, 3, 7, 15, 31 s) with `status`, and returns
 * the counters after the give-up and how many Events were written. */
static size_t given_up(long status, struct wh_verify_stats *st)
{
    struct world w;
    struct admission_result r;
    world_init(&w, 0);
    review(&r, "uid-1");
    assert_true(wh_verify_queue(w.v, &r));
    const int64_t waits[] = {1000, 2000, 4000, 8000, 16000};
    for (size_t i = 0; i < 5; i++) {
        clock_fake_advance_ms(&w.fc, waits[i]);
        fake_kube_answer(&w.api, status, 0, "{\"kind\":\"Status\"}");
        assert_int_equal(wh_verify_run_due(w.v, w.c), 1);
    }
    wh_verify_stats(w.v, st);
    assert_int_equal(st->pending, 0);
    clock_fake_advance_ms(&w.fc, 60000);
    assert_int_equal(wh_verify_run_due(w.v, w.c), 0);
    assert_int_equal(fake_kube_count(&w.api), 5);
    size_t n = world_events(&w);
    world_cleanup(&w);
    return n;
}

/* Never created (refused after this webhook, or forged): absent; an API refusing: failed. */
static void test_given_up(void **state)
{
    (void)state;
    struct wh_verify_stats st;
    assert_int_equal(given_up(404, &st), 0);
    assert_int_equal(st.absent, 1);
    assert_int_equal(st.failed, 0);
    assert_int_equal(given_up(403, &st), 0);
    assert_int_equal(st.failed, 1);
    assert_int_equal(st.absent, 0);
}

/* A forged review naming a live object: another uid, another creation time, an object older
 * than the age bound, or a second review of a uid verified before. */
static void test_mismatch(void **state)
{
    (void)state;
    struct world w;
    struct admission_result r;
    world_init(&w, 0);

    /* {review's uid, review's creationTimestamp, object's uid, object's creationTimestamp} */
    const char *cases[][4] = {
        {"uid-forged", CREATED, "uid-real", CREATED},
        {"uid-real", "2023-11-14T22:00:00Z", "uid-real", CREATED},
        {"uid-old", "2023-11-14T22:00:00Z", "uid-old", "2023-11-14T22:00:00Z"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        review(&r, cases[i][0]);
        snprintf(r.created, sizeof(r.created), "%s", cases[i][1]);
        assert_true(wh_verify_queue(w.v, &r));
        clock_fake_advance_ms(&w.fc, 1000);
        answer_object(&w, cases[i][2], cases[i][3]);
        assert_int_equal(wh_verify_run_due(w.v, w.c), 1);
    }

    /* the real one, then a copy of it */
    review(&r, "uid-real");
    assert_true(wh_verify_queue(w.v, &r));
    assert_true(wh_verify_queue(w.v, &r));
    clock_fake_advance_ms(&w.fc, 1000);
    answer_object(&w, "uid-real", CREATED);
    answer_object(&w, "uid-real", CREATED);
    assert_int_equal(wh_verify_run_due(w.v, w.c), 2);

    struct wh_verify_stats st;
    wh_verify_stats(w.v, &st);
    assert_int_equal(st.queued, 5);
    assert_int_equal(st.mismatch, 4);
    assert_int_equal(st.verified, 1);
    assert_int_equal(world_events(&w), 1);
    world_cleanup(&w);
}

static void test_full_queue_drops_oldest(void **state)
{
    (void)state;
    struct world w;
    struct admission_result r;
    world_init(&w, 2);
    const char *uids[] = {"uid-1", "uid-2", "uid-3"};
    for (size_t i = 0; i < 3; i++) {
        review(&r, uids[i]);
        assert_true(wh_verify_queue(w.v, &r));
        clock_fake_advance_ms(&w.fc, 10);
    }
    struct wh_verify_stats st;
    wh_verify_stats(w.v, &st);
    assert_int_equal(st.queued, 3);
    assert_int_equal(st.dropped, 1);
    assert_int_equal(st.pending, 2);
    clock_fake_advance_ms(&w.fc, 1000);
    answer_object(&w, "uid-2", CREATED);
    answer_object(&w, "uid-3", CREATED);
    assert_int_equal(wh_verify_run_due(w.v, w.c), 2);
    wh_verify_stats(w.v, &st);
    assert_int_equal(st.verified, 2);
    /* what still waits at stop is dropped */
    review(&r, "uid-4");
    assert_true(wh_verify_queue(w.v, &r));
    wh_verify_stop(w.v);
    wh_verify_stats(w.v, &st);
    assert_int_equal(st.dropped, 2);
    assert_int_equal(st.pending, 0);
    assert_int_equal(world_events(&w), 2);
    world_cleanup(&w);
}

static void test_not_queued(void **state)
{
    (void)state;
    struct world w;
    struct admission_result r;
    world_init(&w, 0);
    review(&r, "");
    assert_false(wh_verify_queue(w.v, &r)); /* no uid */
    review(&r, "uid-1");
    warn_list_init(&r.warnings);
    assert_false(wh_verify_queue(w.v, &r)); /* no warnings */
    review(&r, "uid-1");
    snprintf(r.kind, sizeof(r.kind), "ConfigMap");
    assert_false(wh_verify_queue(w.v, &r));
    struct wh_verify_stats st;
    wh_verify_stats(w.v, &st);
    assert_int_equal(st.queued, 0);
    world_cleanup(&w);
}

/*
 * A forged review: the uid and creationTimestamp of a live pod, and warnings of any text. The
 * pod as stored (admission/pod_taint_tolerated.json's, which tolerates the taint) draws none:
 * no Event, counted unwarned; the uid is then verified before.
 */
static void test_forged_review_of_a_quiet_object(void **state)
{
    (void)state;
    struct world w;
    struct admission_result r;
    world_init(&w, 0);
    json_object *quiet = test_load_json(FIXTURES_DIR, "admission/pod_taint_tolerated.json");
    assert_non_null(quiet);
    review(&r, "uid-live");
    assert_true(warn_add(&r.warnings, WARN_REASON_TAINT, "anything the forger likes"));
    assert_true(wh_verify_queue(w.v, &r));
    assert_true(wh_verify_queue(w.v, &r));
    clock_fake_advance_ms(&w.fc, 1000);
    answer_stored(&w.api, fixture_object(quiet), "team", "train-0", "uid-live", CREATED);
    answer_stored(&w.api, fixture_object(quiet), "team", "train-0", "uid-live", CREATED);
    assert_int_equal(wh_verify_run_due(w.v, w.c), 2);
    struct wh_verify_stats st;
    wh_verify_stats(w.v, &st);
    assert_int_equal(st.unwarned, 1);
    assert_int_equal(st.mismatch, 1); /* the second: verified before */
    assert_int_equal(st.verified, 0);
    assert_int_equal(st.pending, 0);
    assert_int_equal(w.snapshot_reads, 1);
    assert_int_equal(world_events(&w), 0);
    json_object_put(quiet);
    world_cleanup(&w);
}

/* Whether fixture c's review is a CREATE the verifier takes once it warns: *r its result. */
static bool lookup_review(json_object *c, const char *uid, struct admission_result *r,
                          const struct wh_snapshot *snap)
{
    json_object *review = NULL, *req = NULL, *obj = NULL, *op = NULL, *expect = NULL, *res = NULL;
    if (!json_object_object_get_ex(c, "review", &review) ||
        !json_object_object_get_ex(review, "request", &req) ||
        !json_object_object_get_ex(req, "object", &obj) ||
        !json_object_is_type(obj, json_type_object) ||
        !json_object_object_get_ex(req, "operation", &op) ||
        strcmp(json_object_get_string(op), "CREATE") != 0 ||
        !json_object_object_get_ex(c, "expect", &expect) ||
        !json_object_object_get_ex(expect, "result", &res) ||
        strcmp(json_object_get_string(res), "ok") != 0)
        return false;
    set_meta(obj, "uid", uid);
    set_meta(obj, "creationTimestamp", CREATED);
    const char *body = json_object_to_json_string_ext(review, JSON_C_TO_STRING_PLAIN);
    assert_int_equal(admission_handle(body, strlen(body), snap, r), K_OK);
    admission_result_cleanup(r);
    char path[1024];
    return !r->dry_run && r->ns[0] && wh_verify_path(r, path, sizeof(path));
}

/* admission/pod_quota_fits.json as stored: the quota plugin charged the pod's 2 GPUs (used 1 ->
 * 3 of 4), and the pod without its toleration of the GPU node's taint. */
static void charge_the_pod(json_object *c)
{
    json_object *snapj = NULL, *quotas = NULL, *status = NULL, *used = NULL, *spec = NULL;
    assert_true(json_object_object_get_ex(c, "snapshot", &snapj));
    assert_true(json_object_object_get_ex(snapj, "resourceQuotas", &quotas));
    json_object *q = json_object_array_get_idx(quotas, 0);
    assert_true(json_object_object_get_ex(q, "status", &status));
    assert_true(json_object_object_get_ex(status, "used", &used));
    json_object_object_add(used, "requests.nvidia.com/gpu", json_object_new_string("3"));
    assert_true(json_object_object_get_ex(fixture_object(c), "spec", &spec));
    json_object_object_del(spec, "tolerations");
}

/*
 * The object as stored is already counted in its quota's status.used: the read-back does not
 * check the quota left (it would count the pod twice and say "has 1 left" of a pod that fit);
 * the other checks run (the taint). Checked as a CREATE the same object and snapshot would warn.
 */
static void test_stored_object_counted_in_quota(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, 0);
    world_snapshot_edited(&w, "admission/pod_quota_fits.json", charge_the_pod);
    json_object *obj = fixture_object(w.fixture);
    struct warn_list as_create;
    warn_list_init(&as_create);
    assert_int_equal(admission_check_object("", "v1", "Pod", "gpu-quota", ADMISSION_CHECK_CREATE,
                                            obj, &w.os.snap, &as_create),
                     K_OK);
    bool quota = false;
    for (size_t i = 0; i < as_create.n; i++)
        quota = quota || strcmp(as_create.items[i].reason, WARN_REASON_QUOTA) == 0;
    assert_true(quota);

    struct admission_result r;
    review(&r, "uid-charged");
    snprintf(r.ns, sizeof(r.ns), "gpu-quota");
    assert_true(wh_verify_queue(w.v, &r));
    clock_fake_advance_ms(&w.fc, 1000);
    answer_stored(&w.api, obj, "gpu-quota", "train-0", "uid-charged", CREATED);
    assert_int_equal(wh_verify_run_due(w.v, w.c), 1);
    assert_int_equal(world_events(&w), 1);
    json_object *ev = fake_kube_body_json(&w.events, 0), *reason = NULL;
    assert_true(json_object_object_get_ex(ev, "reason", &reason));
    assert_string_equal(json_object_get_string(reason), WARN_REASON_TAINT);
    json_object_put(ev);
    world_cleanup(&w);
}

/*
 * Every recorded CREATE of tests/fixtures/admission whose kind the verifier looks up, read back
 * as stored (its request.object): the Events are exactly that fixture's warnings, in order, as
 * admission_handle gives them; a fixture that draws none, queued under a forged warning, writes
 * nothing (unwarned).
 */
static void test_fixtures_as_stored(void **state)
{
    (void)state;
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/admission", FIXTURES_DIR);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    size_t warned = 0, quiet = 0, usage_dropped = 0;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0)
            continue;
        char file[512];
        snprintf(file, sizeof(file), "admission/%s", e->d_name);
        struct world w;
        world_init(&w, 0);
        world_snapshot(&w, file);
        struct admission_result r;
        if (!lookup_review(w.fixture, "uid-fixture", &r, &w.os.snap)) {
            world_cleanup(&w);
            continue;
        }
        /* the fixture's warnings but the quota left, which is not checked on the object as
         * stored (admission.h ADMISSION_CHECK_STORED: its own charge is in status.used) */
        struct warn_list want;
        warn_list_init(&want);
        for (size_t i = 0; i < r.warnings.n; i++)
            if (strcmp(r.warnings.items[i].reason, WARN_REASON_QUOTA) != 0 ||
                !strstr(r.warnings.items[i].text, " left (used ")) {
                want.items[want.n++] = r.warnings.items[i];
            } else {
                usage_dropped++;
            }
        if (r.warnings.n == 0) /* a forged review of it */
            assert_true(warn_add(&r.warnings, WARN_REASON_TAINT, "forged"));
        assert_true(wh_verify_queue(w.v, &r));
        clock_fake_advance_ms(&w.fc, 1000);
        answer_stored(&w.api, fixture_object(w.fixture), r.ns, r.name, "uid-fixture", CREATED);
        assert_int_equal(wh_verify_run_due(w.v, w.c), 1);
        struct wh_verify_stats st;
        wh_verify_stats(w.v, &st);
        size_t n = world_events(&w);
        if (n != want.n || st.verified != (want.n > 0) || st.unwarned != (want.n == 0))
            fail_msg("%s: %zu Events, %zu warnings (verified %llu, unwarned %llu)", file, n, want.n,
                     (unsigned long long)st.verified, (unsigned long long)st.unwarned);
        for (size_t i = 0; i < n; i++) {
            json_object *ev = fake_kube_body_json(&w.events, i), *msg = NULL, *reason = NULL;
            assert_non_null(ev);
            assert_true(json_object_object_get_ex(ev, "message", &msg));
            assert_true(json_object_object_get_ex(ev, "reason", &reason));
            if (strcmp(json_object_get_string(msg), want.items[i].text) != 0 ||
                strcmp(json_object_get_string(reason), want.items[i].reason) != 0)
                fail_msg("%s: Event %zu says %s: %s, the review %s: %s", file, i,
                         json_object_get_string(reason), json_object_get_string(msg),
                         want.items[i].reason, want.items[i].text);
            json_object_put(ev);
        }
        if (want.n)
            warned++;
        else
            quiet++;
        world_cleanup(&w);
    }
    closedir(d);
    /* the fixtures hold both, of every kind looked up */
    assert_true(warned >= 20);
    assert_true(quiet >= 10);
    assert_true(usage_dropped >= 3);
}

static void test_paths(void **state)
{
    (void)state;
    struct admission_result r;
    char p[512];
    review(&r, "u");
    assert_true(wh_verify_path(&r, p, sizeof(p)));
    assert_string_equal(p, POD_PATH);
    snprintf(r.kind, sizeof(r.kind), "Deployment");
    assert_false(wh_verify_path(&r, p, sizeof(p))); /* a core Deployment */
    snprintf(r.api_version, sizeof(r.api_version), "apps/v1");
    snprintf(r.name, sizeof(r.name), "train.v2");
    assert_true(wh_verify_path(&r, p, sizeof(p)));
    assert_string_equal(p, "/apis/apps/v1/namespaces/team/deployments/train.v2");
    snprintf(r.kind, sizeof(r.kind), "CronJob");
    snprintf(r.api_version, sizeof(r.api_version), "batch/v1");
    assert_true(wh_verify_path(&r, p, sizeof(p)));
    assert_string_equal(p, "/apis/batch/v1/namespaces/team/cronjobs/train.v2");
    snprintf(r.kind, sizeof(r.kind), "ResourceClaimTemplate");
    snprintf(r.api_version, sizeof(r.api_version), "resource.k8s.io/v1beta2");
    assert_true(wh_verify_path(&r, p, sizeof(p)));
    assert_string_equal(
        p, "/apis/resource.k8s.io/v1beta2/namespaces/team/resourceclaimtemplates/train.v2");
    assert_false(wh_verify_path(&r, p, 20)); /* no room */

    /* names no object can have: never a path of another object */
    const char *bad_names[] = {"", "..", "a/../../b", "A", "a..b", "-a", "a.", "a b", "a%2Fb"};
    for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
        review(&r, "u");
        snprintf(r.name, sizeof(r.name), "%s", bad_names[i]);
        assert_false(wh_verify_path(&r, p, sizeof(p)));
    }
    review(&r, "u");
    snprintf(r.ns, sizeof(r.ns), "team.a"); /* a namespace is a label */
    assert_false(wh_verify_path(&r, p, sizeof(p)));
    review(&r, "u");
    snprintf(r.api_version, sizeof(r.api_version), "v1/x");
    assert_false(wh_verify_path(&r, p, sizeof(p)));
    snprintf(r.api_version, sizeof(r.api_version), "/v1");
    assert_false(wh_verify_path(&r, p, sizeof(p)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_found_with_the_uid),
        cmocka_unit_test(test_found_later),
        cmocka_unit_test(test_given_up),
        cmocka_unit_test(test_mismatch),
        cmocka_unit_test(test_full_queue_drops_oldest),
        cmocka_unit_test(test_not_queued),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_forged_review_of_a_quiet_object),
        cmocka_unit_test(test_fixtures_as_stored),
        cmocka_unit_test(test_stored_object_counted_in_quota),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
