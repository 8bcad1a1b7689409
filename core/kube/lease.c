/* lease.c - the Lease lock used by leader election (see lease.h). */
#include "kube/lease.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kube/json.h"
#include "util/clock.h"
#include "util/result.h"

#define LEASES "/apis/coordination.k8s.io/v1/namespaces/"

int lease_record_equal(const struct lease_record *a, const struct lease_record *b)
{
    return strcmp(a->holder, b->holder) == 0 && a->duration_s == b->duration_s &&
           strcmp(a->acquire_time, b->acquire_time) == 0 &&
           strcmp(a->renew_time, b->renew_time) == 0 && a->transitions == b->transitions;
}

void lease_format_time(int64_t wall_ms, char out[LEASE_TIME_MAX])
{
    clock_format_rfc3339(wall_ms, true, out, LEASE_TIME_MAX);
}

static void copy_string(json_object *obj, const char *field, char *out, size_t len)
{
    const char *v = kube_json_str(obj, field);
    snprintf(out, len, "%s", v ? v : "");
}

/* An int32 field (leaseDurationSeconds, leaseTransitions), 0 when absent or out of range. */
static int get_int(json_object *obj, const char *field)
{
    int64_t v = kube_json_int(obj, field, 0);
    return v >= INT32_MIN && v <= INT32_MAX ? (int)v : 0;
}

int lease_record_from_json(json_object *lease, struct lease_record *rec)
{
    json_object *spec = kube_json_get(lease, "spec", json_type_object);
    memset(rec, 0, sizeof(*rec));
    if (!spec)
        return K_EPARSE;
    copy_string(spec, "holderIdentity", rec->holder, sizeof(rec->holder));
    copy_string(spec, "acquireTime", rec->acquire_time, sizeof(rec->acquire_time));
    copy_string(spec, "renewTime", rec->renew_time, sizeof(rec->renew_time));
    rec->duration_s = get_int(spec, "leaseDurationSeconds");
    rec->transitions = get_int(spec, "leaseTransitions");
    return K_OK;
}

/* Write `rec` into obj.spec, replacing the election fields and keeping any others. */
static int set_spec(json_object *obj, const struct lease_record *rec)
{
    json_object *spec = kube_json_get(obj, "spec", json_type_object);
    if (!spec) {
        spec = json_object_new_object();
        if (!spec || json_object_object_add(obj, "spec", spec) != 0) {
            json_object_put(spec);
            return K_ENOMEM;
        }
    }
    /* client-go always sets every field, holderIdentity "" included (a released lease). */
    if (json_object_object_add(spec, "holderIdentity", json_object_new_string(rec->holder)) ||
        json_object_object_add(spec, "leaseDurationSeconds",
                               json_object_new_int(rec->duration_s)) ||
        json_object_object_add(spec, "acquireTime", json_object_new_string(rec->acquire_time)) ||
        json_object_object_add(spec, "renewTime", json_object_new_string(rec->renew_time)) ||
        json_object_object_add(spec, "leaseTransitions", json_object_new_int(rec->transitions)))
        return K_ENOMEM;
    return K_OK;
}

int kube_lease_lock_init(struct kube_lease_lock *l, struct kube_client *client, const char *ns,
                         const char *name)
{
    memset(l, 0, sizeof(*l));
    l->client = client;
    if (kube_path_escape(ns, l->ns, sizeof(l->ns)) != K_OK ||
        kube_path_escape(name, l->name, sizeof(l->name)) != K_OK)
        return K_ETOOBIG;
    return K_OK;
}

void kube_lease_lock_cleanup(struct kube_lease_lock *l)
{
    json_object_put(l->last);
    l->last = NULL;
}

static void keep(struct kube_lease_lock *l, json_object *obj)
{
    json_object_put(l->last);
    l->last = obj;
}

static int lock_get(void *ctx, struct lease_record *rec, struct kube_error *err)
{
    struct kube_lease_lock *l = ctx;
    char path[768];
    json_object *obj = NULL;
    snprintf(path, sizeof(path), LEASES "%s/leases/%s", l->ns, l->name);
    int rc = kube_get(l->client, path, &obj, err);
    if (rc)
        return rc;
    rc = lease_record_from_json(obj, rec);
    if (rc) {
        json_object_put(obj);
        err->code = rc;
        snprintf(err->message, sizeof(err->message), "Lease %.200s/%.200s has no spec", l->ns,
                 l->name);
        return rc;
    }
    keep(l, obj);
    return K_OK;
}

static int lock_create(void *ctx, const struct lease_record *rec, struct kube_error *err)
{
    struct kube_lease_lock *l = ctx;
    char path[768];
    json_object *out = NULL;
    int rc = K_ENOMEM;
    json_object *obj = json_object_new_object();
    json_object *meta = json_object_new_object();
    snprintf(path, sizeof(path), LEASES "%s/leases", l->ns);
    if (!obj || !meta)
        goto out;
    /* ns and name are escaped; Kubernetes names never contain escaped characters. */
    json_object_object_add(meta, "name", json_object_new_string(l->name));
    json_object_object_add(meta, "namespace", json_object_new_string(l->ns));
    json_object_object_add(obj, "apiVersion", json_object_new_string("coordination.k8s.io/v1"));
    json_object_object_add(obj, "kind", json_object_new_string("Lease"));
    json_object_object_add(obj, "metadata", meta);
    meta = NULL;
    rc = set_spec(obj, rec);
    if (rc)
        goto out;
    /* 409 AlreadyExists: another candidate created it first; the next round reads it. */
    rc = kube_post(l->client, path, obj, &out, err);
    if (rc == K_OK)
        keep(l, out);
out:
    if (rc == K_ENOMEM) {
        err->code = rc;
        snprintf(err->message, sizeof(err->message), "out of memory");
    }
    json_object_put(meta);
    json_object_put(obj);
    return rc;
}

static int lock_update(void *ctx, const struct lease_record *rec, struct kube_error *err)
{
    struct kube_lease_lock *l = ctx;
    char path[768];
    json_object *copy = NULL, *out = NULL;
    int rc;
    if (!l->last) {
        err->code = K_EINVAL;
        snprintf(err->message, sizeof(err->message),
                 "Lease %.200s/%.200s updated before it was read", l->ns, l->name);
        return K_EINVAL;
    }
    /* The copy keeps metadata.resourceVersion: the PUT fails with 409 if the Lease moved on. */
    if (json_object_deep_copy(l->last, &copy, NULL) != 0 || set_spec(copy, rec) != K_OK) {
        json_object_put(copy);
        err->code = K_ENOMEM;
        snprintf(err->message, sizeof(err->message), "out of memory");
        return K_ENOMEM;
    }
    snprintf(path, sizeof(path), LEASES "%s/leases/%s", l->ns, l->name);
    rc = kube_put(l->client, path, copy, &out, err);
    if (rc == K_OK)
        keep(l, out);
    json_object_put(copy);
    return rc;
}

struct lease_lock kube_lease_lock_ops(struct kube_lease_lock *l)
{
    struct lease_lock ops = {l, lock_get, lock_create, lock_update};
    return ops;
}
