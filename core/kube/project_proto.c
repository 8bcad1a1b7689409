/*
 * project_proto.c - a Pod in the API server's protobuf encoding to the usage part of struct kpod
 * (project.h, project_pod_usage_proto). Field numbers in the comments are those of the
 * generated.proto files named there.
 */
#include <stdlib.h>
#include <string.h>

#include "kube/project.h"
#include "kube/proto.h"
#include "model/quantity.h"
#include "model/requests.h"
#include "util/result.h"

/* Longer than any valid resource name (a DNS subdomain prefix, '/', a 63-byte name). */
#define NAME_CAP 320
/* Most quantities the API server writes in canonical form are shorter: read on the stack. */
#define QUANTITY_CAP 128
/* Longer than any object name, namespace or uid. */
#define META_CAP 512

/* A copy of a string field into *out (replacing it); K_EPARSE when it is not a string. */
static int dup_field(const struct pb_field *f, char **out)
{
    if (f->wire != PB_LEN || f->len >= META_CAP)
        return K_EPARSE;
    char tmp[META_CAP];
    if (!pb_string(f, tmp, sizeof(tmp)))
        return K_EPARSE;
    char *copy = strdup(tmp);
    if (!copy)
        return K_ENOMEM;
    free(*out);
    *out = copy;
    return K_OK;
}

/*
 * A Quantity's string as MilliValue (quantity_parse_milli), of any length as in the JSON
 * projection (the API server accepts long ones): copied to the stack when it is short, else to
 * the heap (it is bounded by the item). K_EINVAL when it is not a string or not a quantity.
 */
static int quantity_milli(const struct pb_field *f, int64_t *milli)
{
    char small[QUANTITY_CAP];
    if (f->wire != PB_LEN)
        return K_EINVAL;
    char *text = f->len < sizeof(small) ? small : malloc(f->len + 1);
    if (!text)
        return K_ENOMEM;
    int rc = pb_string(f, text, f->len + 1) ? quantity_parse_milli(text, milli) : K_EINVAL;
    if (text != small)
        free(text);
    return rc;
}

/*
 * map<string, Quantity> (ResourceList): entries are messages {key = 1, value = 2}, Quantity is
 * {string = 1}. The GPU entries go to out in milli-units; a key seen again replaces the earlier
 * entry, as in the generated Go code (k8s.io/api core/v1 generated.pb.go: m.Requests[mapkey] =
 * *mapvalue) and in the JSON projection. An entry without its value, or a Quantity without its
 * string, is a zero Quantity there (mapvalue := &resource.Quantity{}): a request of 0.
 */
static int add_resource_entry(const struct pb_field *entry, const struct gpu_set *gpus,
                              struct resource_list *out)
{
    if (entry->wire != PB_LEN)
        return K_EPARSE;
    struct pb_reader r = pb_sub(entry);
    struct pb_field f;
    char name[NAME_CAP] = "";
    struct pb_field text = {0}; /* Quantity.string, borrowed */
    bool have_name = false, name_fits = true, have_text = false;
    while (pb_next(&r, &f)) {
        if (f.number == 1) {
            have_name = pb_string(&f, name, sizeof(name));
            name_fits = have_name || (f.wire == PB_LEN && f.len >= sizeof(name));
        } else if (f.number == 2 && f.wire == PB_LEN) {
            struct pb_reader q = pb_sub(&f);
            struct pb_field g;
            have_text = false; /* a value seen again is a new Quantity */
            while (pb_next(&q, &g))
                if (g.number == 1) {
                    have_text = true;
                    text = g;
                }
            if (q.error)
                return K_EPARSE;
        }
    }
    if (r.error || !name_fits)
        return K_EPARSE;
    if (!have_name || !gpu_set_contains(gpus, name))
        return K_OK; /* a name longer than NAME_CAP is no GPU resource */
    int64_t milli = 0;
    int rc = have_text ? quantity_milli(&text, &milli) : K_OK;
    if (rc == K_EINVAL)
        return K_EPARSE;
    if (rc)
        return rc;
    for (size_t i = 0; i < out->n; i++)
        if (strcmp(out->items[i].name, name) == 0) {
            out->items[i].value = milli;
            return K_OK;
        }
    return resource_list_add(out, name, milli);
}

/* Container: resources = 8 (ResourceRequirements: limits = 1, requests = 2), restartPolicy = 24. */
static int container_usage(const struct pb_field *c, const struct gpu_set *gpus,
                           struct resource_list *one, bool *restartable)
{
    struct resource_list requests = {0}, limits = {0};
    struct pb_reader r = pb_sub(c);
    struct pb_field f;
    int rc = K_OK;
    *restartable = false;
    while (rc == K_OK && pb_next(&r, &f)) {
        if (f.number == 24)
            *restartable = pb_equals(&f, "Always");
        if (f.number != 8 || f.wire != PB_LEN)
            continue;
        struct pb_reader res = pb_sub(&f);
        struct pb_field g;
        while (rc == K_OK && pb_next(&res, &g)) {
            if (g.number == 1)
                rc = add_resource_entry(&g, gpus, &limits);
            else if (g.number == 2)
                rc = add_resource_entry(&g, gpus, &requests);
        }
        if (rc == K_OK && res.error)
            rc = K_EPARSE;
    }
    if (rc == K_OK && r.error)
        rc = K_EPARSE;
    if (rc == K_OK)
        rc = container_requests_default(&requests, &limits, one);
    resource_list_cleanup(&requests);
    resource_list_cleanup(&limits);
    return rc;
}

/* The requests of a pod's spec so far: a spec seen twice is merged into one, as in Go. */
struct spec_sums {
    struct pod_requests pr;
    struct resource_list overhead;
};

/*
 * PodSpec: containers = 2, nodeName = 10, schedulerName = 19, initContainers = 20, overhead = 32.
 * A message field seen again is merged into the first, as the generated Go code unmarshals it
 * (repeated containers append, map entries replace, a string seen again replaces, "" too): the
 * sums stay in `sums` until the whole pod is read.
 */
static int spec_usage(const struct pb_field *spec, const struct gpu_set *gpus, struct kpod *out,
                      struct spec_sums *sums)
{
    struct resource_list one = {0};
    struct pb_reader r = pb_sub(spec);
    struct pb_field f;
    int rc = K_OK;
    while (rc == K_OK && pb_next(&r, &f)) {
        bool restartable;
        switch (f.number) {
        case 2:
        case 20:
            if (f.wire != PB_LEN) {
                rc = K_EPARSE;
                break;
            }
            resource_list_cleanup(&one);
            rc = container_usage(&f, gpus, &one, &restartable);
            if (rc == K_OK)
                rc = f.number == 2 ? pod_requests_add_container(&sums->pr, &one)
                                   : pod_requests_add_init(&sums->pr, &one, restartable);
            break;
        case 10:
            if (f.wire == PB_LEN && f.len == 0) { /* "": not bound */
                free(out->node_name);
                out->node_name = NULL;
            } else {
                rc = dup_field(&f, &out->node_name);
            }
            break;
        case 19:
            rc = dup_field(&f, &out->scheduler_name);
            break;
        case 32:
            rc = add_resource_entry(&f, gpus, &sums->overhead);
            break;
        default:
            break;
        }
    }
    if (rc == K_OK && r.error)
        rc = K_EPARSE;
    resource_list_cleanup(&one);
    return rc;
}

/*
 * OwnerReference: uid = 4, controller = 6. The API server checks only that a uid is not empty
 * (kubernetes/kubernetes: staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go), so
 * one that is too long, holds a NUL or is not UTF-8 is left out (no owner) rather than costing
 * the pod its place in a node's usage.
 */
static int owner_usage(const struct pb_field *ref, struct kpod *out)
{
    struct pb_reader r = pb_sub(ref);
    struct pb_field f, uid = {0};
    bool controller = false;
    while (pb_next(&r, &f)) {
        if (f.number == 4)
            uid = f;
        else if (f.number == 6 && f.wire == PB_VARINT)
            controller = f.varint != 0;
    }
    if (r.error)
        return K_EPARSE;
    if (!controller || uid.wire != PB_LEN || out->owner_uid)
        return K_OK;
    int rc = dup_field(&uid, &out->owner_uid);
    return rc == K_EPARSE ? K_OK : rc;
}

/* ObjectMeta: name = 1, namespace = 3, uid = 5, creationTimestamp = 8 (Time: seconds = 1),
 * deletionTimestamp = 9, ownerReferences = 13. */
static int meta_usage(const struct pb_field *meta, struct kpod *out)
{
    struct pb_reader r = pb_sub(meta);
    struct pb_field f;
    int rc = K_OK;
    size_t owners = 0;
    while (rc == K_OK && pb_next(&r, &f)) {
        switch (f.number) {
        case 1:
            rc = dup_field(&f, &out->name);
            break;
        case 3:
            rc = dup_field(&f, &out->ns);
            break;
        case 5:
            rc = dup_field(&f, &out->uid);
            break;
        case 8: {
            struct pb_reader t = pb_sub(&f);
            struct pb_field g;
            while (pb_next(&t, &g))
                if (g.number == 1 && g.wire == PB_VARINT)
                    out->created = (int64_t)g.varint;
            rc = t.error ? K_EPARSE : K_OK;
            break;
        }
        case 9:
            out->deleting = true;
            break;
        case 13:
            if (owners++ < PROJECT_MAX_OWNER_REFERENCES)
                rc = owner_usage(&f, out);
            break;
        default:
            break;
        }
    }
    return rc == K_OK && r.error ? K_EPARSE : rc;
}

/* PodStatus: phase = 1, nominatedNodeName = 11. */
static int status_usage(const struct pb_field *status, struct kpod *out)
{
    struct pb_reader r = pb_sub(status);
    struct pb_field f;
    int rc = K_OK;
    while (rc == K_OK && pb_next(&r, &f)) {
        if (f.number == 1) {
            out->phase = pb_equals(&f, "Pending")     ? POD_PHASE_PENDING
                         : pb_equals(&f, "Running")   ? POD_PHASE_RUNNING
                         : pb_equals(&f, "Succeeded") ? POD_PHASE_SUCCEEDED
                         : pb_equals(&f, "Failed")    ? POD_PHASE_FAILED
                                                      : POD_PHASE_UNKNOWN;
        } else if (f.number == 11 && f.wire == PB_LEN && f.len == 0) { /* "": none */
            free(out->nominated_node);
            out->nominated_node = NULL;
        } else if (f.number == 11) {
            rc = dup_field(&f, &out->nominated_node);
        }
    }
    return rc == K_OK && r.error ? K_EPARSE : rc;
}

int project_pod_usage_proto(const uint8_t *pod, size_t len, const struct gpu_set *gpus,
                            struct kpod *out)
{
    memset(out, 0, sizeof(*out));
    if (!pod || !gpus)
        return K_EPARSE;
    struct pb_reader r;
    pb_reader_init(&r, pod, len);
    struct pb_field f;
    struct spec_sums sums = {0};
    int rc = K_OK;
    while (rc == K_OK && pb_next(&r, &f)) {
        if (f.wire != PB_LEN)
            continue;
        if (f.number == 1)
            rc = meta_usage(&f, out);
        else if (f.number == 2)
            rc = spec_usage(&f, gpus, out, &sums);
        else if (f.number == 3)
            rc = status_usage(&f, out);
    }
    if (rc == K_OK && (r.error || !out->name))
        rc = K_EPARSE;
    if (rc == K_OK)
        rc = pod_requests_finish(&sums.pr, &sums.overhead, &out->gpu_requests);
    pod_requests_cleanup(&sums.pr);
    resource_list_cleanup(&sums.overhead);
    if (rc != K_OK)
        pod_cleanup(out);
    return rc;
}

/* ---- Node ----------------------------------------------------------------------------------- */

/* A copy of a string field of any length (bounded by the item) into *out, replacing it. */
static int dup_long(const struct pb_field *f, char **out)
{
    if (f->wire != PB_LEN)
        return K_EPARSE;
    char *copy = malloc(f->len + 1);
    if (!copy)
        return K_ENOMEM;
    if (!pb_string(f, copy, f->len + 1)) {
        free(copy);
        return K_EPARSE;
    }
    free(*out);
    *out = copy;
    return K_OK;
}

/* map<string, string> labels = 11: entries {key = 1, value = 2}; a key seen again replaces the
 * earlier value, as the generated Go code's map assignment does. */
static int node_label(const struct pb_field *entry, struct kv_list *labels, size_t *cap)
{
    if (entry->wire != PB_LEN)
        return K_EPARSE;
    struct pb_reader r = pb_sub(entry);
    struct pb_field f;
    char *key = NULL, *value = NULL;
    int rc = K_OK;
    while (rc == K_OK && pb_next(&r, &f)) {
        if (f.number == 1)
            rc = dup_long(&f, &key);
        else if (f.number == 2)
            rc = dup_long(&f, &value);
    }
    if (rc == K_OK && r.error)
        rc = K_EPARSE;
    if (rc == K_OK && !value)
        rc = (value = strdup("")) ? K_OK : K_ENOMEM;
    if (rc == K_OK && !key)
        rc = (key = strdup("")) ? K_OK : K_ENOMEM;
    for (size_t i = 0; rc == K_OK && i < labels->n; i++)
        if (strcmp(labels->items[i].key, key) == 0) {
            free(labels->items[i].value);
            labels->items[i].value = value;
            free(key);
            return K_OK;
        }
    if (rc == K_OK && labels->n == *cap) {
        size_t grown = *cap ? *cap * 2 : 16;
        struct kv *items = realloc(labels->items, grown * sizeof(*items));
        if (!items)
            rc = K_ENOMEM;
        else
            labels->items = items, *cap = grown;
    }
    if (rc != K_OK) {
        free(key);
        free(value);
        return rc;
    }
    labels->items[labels->n++] = (struct kv){key, value};
    return K_OK;
}

/* Taint: key = 1, value = 2, effect = 3; absent strings are "", as in the JSON projection. */
static int node_taint(const struct pb_field *t, struct knode *out, size_t *cap)
{
    if (t->wire != PB_LEN)
        return K_EPARSE;
    if (out->n_taints == *cap) {
        size_t grown = *cap ? *cap * 2 : 4;
        struct taint *items = realloc(out->taints, grown * sizeof(*items));
        if (!items)
            return K_ENOMEM;
        out->taints = items;
        *cap = grown;
    }
    struct taint *taint = &out->taints[out->n_taints++];
    memset(taint, 0, sizeof(*taint));
    struct pb_reader r = pb_sub(t);
    struct pb_field f;
    int rc = K_OK;
    while (rc == K_OK && pb_next(&r, &f)) {
        if (f.number == 1)
            rc = dup_long(&f, &taint->key);
        else if (f.number == 2)
            rc = dup_long(&f, &taint->value);
        else if (f.number == 3)
            rc = dup_long(&f, &taint->effect);
    }
    if (rc == K_OK && r.error)
        rc = K_EPARSE;
    char **fields[] = {&taint->key, &taint->value, &taint->effect};
    for (size_t i = 0; rc == K_OK && i < 3; i++)
        if (!*fields[i] && !(*fields[i] = strdup("")))
            rc = K_ENOMEM;
    return rc;
}

int project_node_proto(const uint8_t *node, size_t len, const struct gpu_set *gpus,
                       struct knode *out)
{
    memset(out, 0, sizeof(*out));
    if (!node || !gpus)
        return K_EPARSE;
    struct pb_reader r;
    pb_reader_init(&r, node, len);
    struct pb_field f, g;
    size_t label_cap = 0, taint_cap = 0;
    int rc = K_OK;
    /* Node: metadata = 1 (ObjectMeta: name = 1, labels = 11), spec = 2 (NodeSpec: unschedulable
     * = 4, taints = 5), status = 3 (NodeStatus: capacity = 1, allocatable = 2). A message seen
     * again is merged into the first, as Go's Unmarshal does. */
    while (rc == K_OK && pb_next(&r, &f)) {
        if (f.wire != PB_LEN || f.number < 1 || f.number > 3)
            continue;
        struct pb_reader m = pb_sub(&f);
        while (rc == K_OK && pb_next(&m, &g)) {
            if (f.number == 1 && g.number == 1)
                rc = dup_field(&g, &out->name);
            else if (f.number == 1 && g.number == 11)
                rc = node_label(&g, &out->labels, &label_cap);
            else if (f.number == 2 && g.number == 4 && g.wire == PB_VARINT)
                out->unschedulable = g.varint != 0;
            else if (f.number == 2 && g.number == 5)
                rc = node_taint(&g, out, &taint_cap);
            else if (f.number == 3 && g.number == 1)
                rc = add_resource_entry(&g, gpus, &out->capacity);
            else if (f.number == 3 && g.number == 2)
                rc = add_resource_entry(&g, gpus, &out->allocatable);
        }
        if (rc == K_OK && m.error)
            rc = K_EPARSE;
    }
    if (rc == K_OK && (r.error || !out->name))
        rc = K_EPARSE;
    /* capacity and allocatable as Value(), as project_node gives them */
    for (size_t i = 0; rc == K_OK && i < out->capacity.n; i++)
        out->capacity.items[i].value = quantity_milli_to_value(out->capacity.items[i].value);
    for (size_t i = 0; rc == K_OK && i < out->allocatable.n; i++)
        out->allocatable.items[i].value = quantity_milli_to_value(out->allocatable.items[i].value);
    if (rc != K_OK)
        node_cleanup(out);
    return rc;
}
