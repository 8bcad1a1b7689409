/* event_verify.c - Events of unauthenticated reviews, after the object is read back (see
 * event_verify.h). */
#include "event_verify.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "events.h"
#include "util/deadline.h"
#include "util/log.h"
#include "util/result.h"

struct item {
    struct admission_result r; /* response NULL */
    int64_t queued_ms;         /* monotonic */
    int64_t due_ms;            /* next lookup */
    int64_t delay_ms;          /* the wait before the next one after this */
    uint64_t seq;              /* arrival order, for dropping the oldest */
    bool busy;                 /* being looked up (outside the lock) */
};

struct wh_verify {
    struct wh_verify_options o;
    struct event_recorder *rec;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct item **items; /* o.capacity slots, NULL when free */
    size_t n;            /* used slots */
    uint64_t next_seq;
    struct wh_verify_stats st;
    char (*seen)[128]; /* ring of uids verified */
    size_t seen_next, seen_n;
    pthread_t thread;
    bool started, stopping;
    struct kube_client *client;
};

/* The kinds the webhook warns for (admission.h), by group and kind, and their resource. */
static const char *const KINDS[][3] = {
    {"", "Pod", "pods"},
    {"", "ResourceQuota", "resourcequotas"},
    {"apps", "Deployment", "deployments"},
    {"apps", "StatefulSet", "statefulsets"},
    {"apps", "ReplicaSet", "replicasets"},
    {"apps", "DaemonSet", "daemonsets"},
    {"batch", "Job", "jobs"},
    {"batch", "CronJob", "cronjobs"},
    {"resource.k8s.io", "ResourceClaim", "resourceclaims"},
    {"resource.k8s.io", "ResourceClaimTemplate", "resourceclaimtemplates"},
};

static bool lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* A DNS-1123 label (max 63, `dots` false) or subdomain (max 253, `dots` true). */
static bool dns_name(const char *s, size_t max, bool dots)
{
    size_t n = strlen(s);
    if (n == 0 || n > max || !lower_alnum(s[0]) || !lower_alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (lower_alnum(c) || c == '-')
            continue;
        /* each dot-separated part of a subdomain is a label */
        if (!dots || c != '.' || !lower_alnum(s[i - 1]) || !lower_alnum(s[i + 1]))
            return false;
    }
    return true;
}

bool wh_verify_path(const struct admission_result *r, char *out, size_t len)
{
    const char *slash = strchr(r->api_version, '/');
    char group[128] = "";
    const char *version = r->api_version;
    if (slash) {
        size_t g = (size_t)(slash - r->api_version);
        if (g == 0 || g >= sizeof(group))
            return false;
        memcpy(group, r->api_version, g);
        group[g] = '\0';
        version = slash + 1;
        if (!dns_name(group, 253, true))
            return false;
    }
    if (!dns_name(version, 63, false))
        return false;
    const char *resource = NULL;
    for (size_t i = 0; i < sizeof(KINDS) / sizeof(KINDS[0]); i++)
        if (strcmp(group, KINDS[i][0]) == 0 && strcmp(r->kind, KINDS[i][1]) == 0)
            resource = KINDS[i][2];
    if (!resource || !dns_name(r->ns, 63, false) || !dns_name(r->name, 253, true))
        return false;
    int k = group[0] ? snprintf(out, len, "/apis/%s/%s/namespaces/%s/%s/%s", group, version, r->ns,
                                resource, r->name)
                     : snprintf(out, len, "/api/%s/namespaces/%s/%s/%s", version, r->ns, resource,
                                r->name);
    return k > 0 && (size_t)k < len;
}

struct wh_verify *wh_verify_new(const struct wh_verify_options *o, struct event_recorder *rec)
{
    if (o->capacity > WH_VERIFY_MAX_CAPACITY || !o->snapshot_read || !o->snapshot_release)
        return NULL;
    struct wh_verify *v = calloc(1, sizeof(*v));
    if (!v)
        return NULL;
    v->o = *o;
    if (!v->o.capacity)
        v->o.capacity = WH_VERIFY_CAPACITY;
    if (v->o.first_delay_ms <= 0)
        v->o.first_delay_ms = WH_VERIFY_FIRST_DELAY_MS;
    if (v->o.give_up_ms <= 0)
        v->o.give_up_ms = WH_VERIFY_GIVE_UP_MS;
    if (v->o.max_age_ms <= 0)
        v->o.max_age_ms = WH_VERIFY_MAX_AGE_MS;
    v->rec = rec;
    v->items = calloc(v->o.capacity, sizeof(*v->items));
    v->seen = calloc(WH_VERIFY_SEEN, sizeof(*v->seen));
    if (!v->items || !v->seen) {
        free(v->items);
        free(v->seen);
        free(v);
        return NULL;
    }
    pthread_mutex_init(&v->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&v->cv, &ca);
    pthread_condattr_destroy(&ca);
    return v;
}

/* Frees slot i (under mu), counting nothing. */
static void remove_slot(struct wh_verify *v, size_t i)
{
    free(v->items[i]);
    v->items[i] = NULL;
    v->n--;
}

bool wh_verify_queue(struct wh_verify *v, const struct admission_result *r)
{
    char path[1024];
    if (r->warnings.n == 0 || !r->uid[0] || !wh_verify_path(r, path, sizeof(path)))
        return false;
    struct item *it = malloc(sizeof(*it));
    if (!it) {
        pthread_mutex_lock(&v->mu);
        v->st.queued++;
        v->st.dropped++;
        pthread_mutex_unlock(&v->mu);
        return true;
    }
    memset(it, 0, sizeof(*it));
    it->r = *r;
    it->r.response = NULL;
    it->r.response_len = 0;
    int64_t now = clock_mono_ms(v->o.clock);
    it->queued_ms = now;
    it->due_ms = now + v->o.first_delay_ms;
    it->delay_ms = v->o.first_delay_ms * 2;
    pthread_mutex_lock(&v->mu);
    v->st.queued++;
    if (v->stopping) {
        v->st.dropped++;
        pthread_mutex_unlock(&v->mu);
        free(it);
        return true;
    }
    if (v->n == v->o.capacity) {
        /* drop the oldest that is not being looked up (one at most is) */
        size_t oldest = SIZE_MAX;
        for (size_t i = 0; i < v->o.capacity; i++)
            if (v->items[i] && !v->items[i]->busy &&
                (oldest == SIZE_MAX || v->items[i]->seq < v->items[oldest]->seq))
                oldest = i;
        v->st.dropped++;
        if (oldest == SIZE_MAX) { /* capacity 1, busy: the new one goes */
            pthread_mutex_unlock(&v->mu);
            free(it);
            return true;
        }
        if (v->st.dropped == 1 || v->st.dropped % 100 == 0)
            log_warn_kv("event verification queue full: dropped the oldest review's Events",
                        LOG_INT("capacity", v->o.capacity), LOG_INT("dropped", v->st.dropped));
        remove_slot(v, oldest);
    }
    it->seq = v->next_seq++;
    for (size_t i = 0; i < v->o.capacity; i++)
        if (!v->items[i]) {
            v->items[i] = it;
            v->n++;
            break;
        }
    pthread_cond_signal(&v->cv);
    pthread_mutex_unlock(&v->mu);
    return true;
}

/* Under mu: whether uid was verified before; remembers it when not. */
static bool seen_before(struct wh_verify *v, const char *uid)
{
    for (size_t i = 0; i < v->seen_n; i++)
        if (strcmp(v->seen[i], uid) == 0)
            return true;
    snprintf(v->seen[v->seen_next], sizeof(v->seen[0]), "%s", uid);
    v->seen_next = (v->seen_next + 1) % WH_VERIFY_SEEN;
    if (v->seen_n < WH_VERIFY_SEEN)
        v->seen_n++;
    return false;
}

enum outcome { O_RETRY, O_VERIFIED, O_MISMATCH };

/* Compares the object read back with the review (no lock held); *why says what differed. */
static enum outcome compare(const struct wh_verify *v, const struct item *it, json_object *obj,
                            const char **why)
{
    json_object *meta = NULL, *x = NULL;
    const char *uid = NULL, *created = NULL;
    if (json_object_object_get_ex(obj, "metadata", &meta) &&
        json_object_is_type(meta, json_type_object)) {
        if (json_object_object_get_ex(meta, "uid", &x) && json_object_is_type(x, json_type_string))
            uid = json_object_get_string(x);
        if (json_object_object_get_ex(meta, "creationTimestamp", &x) &&
            json_object_is_type(x, json_type_string))
            created = json_object_get_string(x);
    }
    if (!uid || strcmp(uid, it->r.uid) != 0) {
        *why = "found with another uid";
        return O_MISMATCH;
    }
    if (it->r.created[0] && (!created || strcmp(created, it->r.created) != 0)) {
        *why = "found with another creationTimestamp";
        return O_MISMATCH;
    }
    int64_t created_ms;
    if (!created || !clock_parse_rfc3339_ms(created, &created_ms) ||
        clock_wall_ms(v->o.clock) - created_ms > v->o.max_age_ms) {
        *why = "created before the age bound";
        return O_MISMATCH;
    }
    return O_VERIFIED;
}

/* Finds the due item with the earliest due time (under mu); SIZE_MAX when none is due.
 * *next_ms: the earliest due time of all (INT64_MAX when none waits). */
static size_t next_due(struct wh_verify *v, int64_t now, int64_t *next_ms)
{
    size_t best = SIZE_MAX;
    *next_ms = INT64_MAX;
    for (size_t i = 0; i < v->o.capacity; i++) {
        struct item *it = v->items[i];
        if (!it || it->busy)
            continue;
        if (it->due_ms < *next_ms) {
            *next_ms = it->due_ms;
            if (it->due_ms <= now)
                best = i;
        }
    }
    return best;
}

static const char *rc_text(int rc)
{
    return rc == K_ENOTFOUND ? "not found" : k_strerror(rc);
}

/*
 * Replaces r's warnings by those the admission checks find on `obj`, the object as stored
 * (no lock held; r is the busy item's, which only this thread touches). Returns K_OK or
 * K_ENOMEM.
 */
static int check_stored(struct wh_verify *v, struct admission_result *r, json_object *obj)
{
    char group[128] = "";
    const char *version = r->api_version, *slash = strchr(r->api_version, '/');
    if (slash) { /* wh_verify_path checked the group's length */
        snprintf(group, sizeof(group), "%.*s", (int)(slash - r->api_version), r->api_version);
        version = slash + 1;
    }
    warn_list_init(&r->warnings);
    struct wh_snapshot snap;
    v->o.snapshot_read(v->o.snapshot_ctx, &snap);
    int rc = admission_check_object(group, version, r->kind, r->ns, ADMISSION_CHECK_STORED, obj,
                                    &snap, &r->warnings);
    v->o.snapshot_release(v->o.snapshot_ctx);
    return rc;
}

size_t wh_verify_run_due(struct wh_verify *v, struct kube_client *c)
{
    size_t made = 0;
    char path[1024];
    pthread_mutex_lock(&v->mu);
    for (;;) {
        int64_t now = clock_mono_ms(v->o.clock), next;
        size_t i = next_due(v, now, &next);
        if (i == SIZE_MAX || v->stopping)
            break;
        struct item *it = v->items[i];
        it->busy = true;
        pthread_mutex_unlock(&v->mu);

        json_object *obj = NULL;
        struct kube_error err = {0};
        int rc =
            wh_verify_path(&it->r, path, sizeof(path)) ? kube_get(c, path, &obj, &err) : K_EINVAL;
        made++;
        const char *why = NULL;
        enum outcome o = O_RETRY;
        if (rc == K_OK)
            o = compare(v, it, obj, &why);
        if (o == O_VERIFIED) {
            pthread_mutex_lock(&v->mu);
            if (seen_before(v, it->r.uid)) {
                o = O_MISMATCH;
                why = "verified before";
            }
            pthread_mutex_unlock(&v->mu);
        }
        /* the Events say what the stored object draws, not what the review said */
        if (o == O_VERIFIED && (rc = check_stored(v, &it->r, obj)) != K_OK)
            o = O_RETRY;
        json_object_put(obj);

        pthread_mutex_lock(&v->mu);
        it->busy = false;
        now = clock_mono_ms(v->o.clock);
        if (o == O_VERIFIED && it->r.warnings.n == 0) {
            v->st.unwarned++;
            log_info_kv(1, "found with the review's uid, draws no warning as stored: no Event",
                        LOG_STR("kind", it->r.kind), LOG_STR("namespace", it->r.ns),
                        LOG_STR("name", it->r.name), LOG_STR("uid", it->r.uid));
            remove_slot(v, i);
        } else if (o == O_VERIFIED) {
            v->st.verified++;
            log_info_kv(1, "found with the review's uid: Events posted",
                        LOG_STR("kind", it->r.kind), LOG_STR("namespace", it->r.ns),
                        LOG_STR("name", it->r.name), LOG_STR("uid", it->r.uid),
                        LOG_INT("events", it->r.warnings.n));
            /* the recorder's post only copies and queues: fine under the lock */
            wh_events_post(v->rec, &it->r, true, v->o.instance);
            remove_slot(v, i);
        } else if (o == O_MISMATCH) {
            v->st.mismatch++;
            log_info_kv(1, "not the object of the review: no Event", LOG_STR("kind", it->r.kind),
                        LOG_STR("namespace", it->r.ns), LOG_STR("name", it->r.name),
                        LOG_STR("uid", it->r.uid), LOG_STR("reason", why));
            remove_slot(v, i);
        } else if (rc == K_ENOMEM || rc == K_ETOOBIG ||
                   now + it->delay_ms - it->queued_ms > v->o.give_up_ms) {
            if (rc == K_ENOTFOUND) {
                v->st.absent++;
                log_info_kv(1, "not created in time: no Event", LOG_STR("kind", it->r.kind),
                            LOG_STR("namespace", it->r.ns), LOG_STR("name", it->r.name),
                            LOG_INT("giveUpMs", v->o.give_up_ms));
            } else {
                v->st.failed++;
                if (v->st.failed == 1 || v->st.failed % 100 == 0)
                    log_warn_kv("looking up the object for its Events failed",
                                LOG_STR("kind", it->r.kind), LOG_STR("namespace", it->r.ns),
                                LOG_STR("name", it->r.name), LOG_STR("err", rc_text(rc)),
                                LOG_STR("message", err.message),
                                LOG_INT("failedSoFar", v->st.failed));
            }
            remove_slot(v, i);
        } else {
            it->due_ms = now + it->delay_ms;
            it->delay_ms *= 2;
        }
    }
    pthread_mutex_unlock(&v->mu);
    return made;
}

static void *worker(void *arg)
{
    struct wh_verify *v = arg;
    for (;;) {
        wh_verify_run_due(v, v->client);
        pthread_mutex_lock(&v->mu);
        if (!v->stopping) {
            int64_t now = clock_mono_ms(v->o.clock), next;
            next_due(v, now, &next);
            /* a queued review signals; with none waiting, look again within a minute */
            if (next == INT64_MAX)
                next = now + 60000;
            deadline_wait(&v->cv, &v->mu, CLOCK_MONOTONIC, v->o.clock, next, 1000);
        }
        bool stop = v->stopping;
        pthread_mutex_unlock(&v->mu);
        if (stop)
            return NULL;
    }
}

int wh_verify_start(struct wh_verify *v, struct kube_client *c)
{
    v->client = c;
    if (pthread_create(&v->thread, NULL, worker, v) != 0)
        return K_ENOMEM;
    v->started = true;
    return K_OK;
}

void wh_verify_stop(struct wh_verify *v)
{
    pthread_mutex_lock(&v->mu);
    v->stopping = true;
    pthread_cond_broadcast(&v->cv);
    pthread_mutex_unlock(&v->mu);
    if (v->started) {
        pthread_join(v->thread, NULL);
        v->started = false;
    }
    pthread_mutex_lock(&v->mu);
    for (size_t i = 0; i < v->o.capacity; i++)
        if (v->items[i]) {
            v->st.dropped++;
            remove_slot(v, i);
        }
    pthread_mutex_unlock(&v->mu);
}

void wh_verify_stats(struct wh_verify *v, struct wh_verify_stats *out)
{
    pthread_mutex_lock(&v->mu);
    *out = v->st;
    out->pending = v->n;
    pthread_mutex_unlock(&v->mu);
}

void wh_verify_free(struct wh_verify *v)
{
    if (!v)
        return;
    wh_verify_stop(v);
    pthread_mutex_destroy(&v->mu);
    pthread_cond_destroy(&v->cv);
    free(v->items);
    free(v->seen);
    free(v);
}
