/*
 * project.c - API JSON (json-c) to the compact projections of model/model.h.
 *
 * Every json-c getter used here returns borrowed references; nothing is put or retained, so the
 * caller's object tree stays the only owner. Output strings are copies owned by the struct.
 */
#include "kube/project.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/project_gang.h"
#include "model/quantity.h"
#include "model/requests.h"
#include "util/clock.h"
#include "util/result.h"

/* Copy a string, "" when absent. */
static int dup_or_empty(const char *s, char **out)
{
    *out = strdup(s ? s : "");
    return *out ? K_OK : K_ENOMEM;
}

int project_string_map(json_object *map, struct kv_list *out)
{
    if (!map || !json_object_is_type(map, json_type_object))
        return K_OK;
    size_t n = (size_t)json_object_object_length(map);
    if (n == 0)
        return K_OK;
    out->items = calloc(n, sizeof(*out->items));
    if (!out->items)
        return K_ENOMEM;
    json_object_object_foreach(map, key, val)
    {
        if (!json_object_is_type(val, json_type_string))
            continue;
        struct kv *kv = &out->items[out->n];
        kv->key = strdup(key);
        kv->value = strdup(json_object_get_string(val));
        out->n++;
        if (!kv->key || !kv->value)
            return K_ENOMEM;
    }
    return K_OK;
}

/*
 * A quantity in milli-units. The API serialises quantities as strings; raw manifests may carry
 * plain JSON numbers, which Quantity.UnmarshalJSON also accepts.
 */
static int quantity_milli(json_object *v, int64_t *milli)
{
    const char *text;
    if (json_object_is_type(v, json_type_string))
        text = json_object_get_string(v);
    else if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
        text = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
    else
        return K_EPARSE;
    int rc = quantity_parse_milli(text, milli);
    if (rc == K_EINVAL)
        return K_EPARSE;
    return rc;
}

/* Add the GPU entries of a ResourceList object (milli-units) to `out`. */
static int add_gpu_resources(json_object *list, const struct gpu_set *gpus,
                             struct resource_list *out)
{
    if (!list || !json_object_is_type(list, json_type_object))
        return K_OK;
    json_object_object_foreach(list, name, val)
    {
        if (!gpu_set_contains(gpus, name))
            continue;
        int64_t milli;
        int rc = quantity_milli(val, &milli);
        if (rc != K_OK)
            return rc;
        rc = resource_list_add(out, name, milli);
        if (rc != K_OK)
            return rc;
    }
    return K_OK;
}

/* A container's GPU requests in milli-units, requests defaulted from limits (model/requests.h). */
static int container_requests(json_object *container, const struct gpu_set *gpus,
                              struct resource_list *out)
{
    json_object *resources = kube_json_get(container, "resources", json_type_object);
    struct resource_list requests = {0}, limits = {0};
    int rc =
        add_gpu_resources(kube_json_get(resources, "requests", json_type_object), gpus, &requests);
    if (rc == K_OK)
        rc = add_gpu_resources(kube_json_get(resources, "limits", json_type_object), gpus, &limits);
    if (rc == K_OK)
        rc = container_requests_default(&requests, &limits, out);
    resource_list_cleanup(&requests);
    resource_list_cleanup(&limits);
    return rc;
}

/* The pod's effective GPU request (model/requests.h has the rule). */
static int project_requests(json_object *spec, const struct gpu_set *gpus,
                            struct resource_list *out)
{
    struct pod_requests pr = {0};
    struct resource_list one = {0}, overhead = {0};
    int rc = K_OK;

    json_object *containers = kube_json_get(spec, "containers", json_type_array);
    size_t n = containers ? json_object_array_length(containers) : 0;
    for (size_t i = 0; i < n && rc == K_OK; i++) {
        resource_list_cleanup(&one);
        rc = container_requests(json_object_array_get_idx(containers, i), gpus, &one);
        if (rc == K_OK)
            rc = pod_requests_add_container(&pr, &one);
    }
    json_object *inits = kube_json_get(spec, "initContainers", json_type_array);
    n = inits ? json_object_array_length(inits) : 0;
    for (size_t i = 0; i < n && rc == K_OK; i++) {
        json_object *ic = json_object_array_get_idx(inits, i);
        resource_list_cleanup(&one);
        rc = container_requests(ic, gpus, &one);
        const char *policy = kube_json_str(ic, "restartPolicy");
        if (rc == K_OK)
            rc = pod_requests_add_init(&pr, &one, policy && strcmp(policy, "Always") == 0);
    }
    if (rc == K_OK)
        rc = add_gpu_resources(kube_json_get(spec, "overhead", json_type_object), gpus, &overhead);
    if (rc == K_OK)
        rc = pod_requests_finish(&pr, &overhead, out);
    pod_requests_cleanup(&pr);
    resource_list_cleanup(&one);
    resource_list_cleanup(&overhead);
    return rc;
}

static enum selector_op parse_op(const char *op)
{
    static const struct {
        const char *text;
        enum selector_op op;
    } ops[] = {
        {"In", SELECTOR_OP_IN},         {"NotIn", SELECTOR_OP_NOT_IN},
        {"Exists", SELECTOR_OP_EXISTS}, {"DoesNotExist", SELECTOR_OP_DOES_NOT_EXIST},
        {"Gt", SELECTOR_OP_GT},         {"Lt", SELECTOR_OP_LT},
    };
    for (size_t i = 0; op && i < sizeof(ops) / sizeof(ops[0]); i++)
        if (strcmp(op, ops[i].text) == 0)
            return ops[i].op;
    return SELECTOR_OP_UNKNOWN;
}

static int project_requirements(json_object *arr, struct selector_requirement **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    size_t n = arr && json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
    if (n == 0)
        return K_OK;
    *out = calloc(n, sizeof(**out));
    if (!*out)
        return K_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_object *r = json_object_array_get_idx(arr, i);
        struct selector_requirement *req = &(*out)[i];
        (*n_out)++;
        if (dup_or_empty(kube_json_str(r, "key"), &req->key) != K_OK)
            return K_ENOMEM;
        req->op = parse_op(kube_json_str(r, "operator"));
        json_object *values = kube_json_get(r, "values", json_type_array);
        size_t nv = values ? json_object_array_length(values) : 0;
        if (nv == 0)
            continue;
        req->values = calloc(nv, sizeof(*req->values));
        if (!req->values)
            return K_ENOMEM;
        for (size_t j = 0; j < nv; j++) {
            json_object *v = json_object_array_get_idx(values, j);
            const char *s =
                v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
            req->values[j] = strdup(s);
            req->n_values++;
            if (!req->values[j])
                return K_ENOMEM;
        }
    }
    return K_OK;
}

int project_node_selector(json_object *sel, size_t max_terms, struct node_affinity *out)
{
    if (!sel || !json_object_is_type(sel, json_type_object))
        return K_OK;
    out->present = true;
    json_object *terms = kube_json_get(sel, "nodeSelectorTerms", json_type_array);
    size_t n = terms ? json_object_array_length(terms) : 0;
    if (n == 0)
        return K_OK;
    if (max_terms && n > max_terms)
        return K_ETOOBIG;
    out->terms = calloc(n, sizeof(*out->terms));
    if (!out->terms)
        return K_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_object *t = json_object_array_get_idx(terms, i);
        struct selector_term *term = &out->terms[i];
        out->n_terms++;
        int rc = project_requirements(kube_json_field(t, "matchExpressions"), &term->exprs,
                                      &term->n_exprs);
        if (rc != K_OK)
            return rc;
        rc =
            project_requirements(kube_json_field(t, "matchFields"), &term->fields, &term->n_fields);
        if (rc != K_OK)
            return rc;
    }
    return K_OK;
}

static int project_affinity(json_object *spec, struct node_affinity *out)
{
    json_object *na = kube_json_get(kube_json_get(spec, "affinity", json_type_object),
                                    "nodeAffinity", json_type_object);
    return project_node_selector(
        kube_json_get(na, "requiredDuringSchedulingIgnoredDuringExecution", json_type_object), 0,
        out);
}

int project_toleration_list(json_object *arr, struct toleration **out, size_t *n_out)
{
    size_t n = arr && json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
    *out = NULL;
    *n_out = 0;
    if (n == 0)
        return K_OK;
    *out = calloc(n, sizeof(**out));
    if (!*out)
        return K_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_object *t = json_object_array_get_idx(arr, i);
        struct toleration *tol = &(*out)[i];
        (*n_out)++;
        if (dup_or_empty(kube_json_str(t, "key"), &tol->key) != K_OK ||
            dup_or_empty(kube_json_str(t, "operator"), &tol->op) != K_OK ||
            dup_or_empty(kube_json_str(t, "value"), &tol->value) != K_OK ||
            dup_or_empty(kube_json_str(t, "effect"), &tol->effect) != K_OK)
            return K_ENOMEM;
    }
    return K_OK;
}

static int project_tolerations(json_object *spec, struct kpod *out)
{
    return project_toleration_list(kube_json_get(spec, "tolerations", json_type_array),
                                   &out->tolerations, &out->n_tolerations);
}

static int project_meta(json_object *meta, struct kpod *out)
{
    if (!meta)
        return K_OK;
    json_object *ann = kube_json_get(meta, "annotations", json_type_object);
    if (kube_json_dup_opt(kube_json_str(meta, "namespace"), &out->ns) != K_OK ||
        kube_json_dup_opt(kube_json_str(meta, "name"), &out->name) != K_OK ||
        kube_json_dup_opt(kube_json_str(meta, "uid"), &out->uid) != K_OK ||
        kube_json_dup_opt(kube_json_str(ann, POD_ANNOTATION_CAUSE), &out->cause) != K_OK ||
        kube_json_dup_opt(kube_json_str(ann, POD_ANNOTATION_DETAIL), &out->detail) != K_OK)
        return K_ENOMEM;
    json_object *del = kube_json_field(meta, "deletionTimestamp");
    out->deleting = del && !json_object_is_type(del, json_type_null);
    int64_t created;
    if (clock_parse_rfc3339(kube_json_str(meta, "creationTimestamp"), &created))
        out->created = created;
    json_object *owners = kube_json_get(meta, "ownerReferences", json_type_array);
    size_t n = owners ? json_object_array_length(owners) : 0;
    for (size_t i = 0; i < n && i < PROJECT_MAX_OWNER_REFERENCES; i++) {
        json_object *o = json_object_array_get_idx(owners, i);
        json_object *ctl = kube_json_field(o, "controller");
        if (ctl && json_object_is_type(ctl, json_type_boolean) && json_object_get_boolean(ctl))
            return kube_json_dup_opt(kube_json_str(o, "uid"), &out->owner_uid);
    }
    return K_OK;
}

/* The first vendor-scheduler resource in a resource map, or NULL. */
static const char *vendor_resource_in(json_object *map)
{
    const char *canonical = NULL;
    if (!map)
        return NULL;
    json_object_object_foreach(map, name, val)
    {
        (void)val;
        if (gpu_vendor_scheduler(name, &canonical))
            return canonical;
    }
    return NULL;
}

/* kpod.vendor_resource: the containers' requests and limits (init containers are rare here). */
static void project_vendor_resource(json_object *spec, struct kpod *out)
{
    json_object *containers = kube_json_get(spec, "containers", json_type_array);
    size_t n = containers ? json_object_array_length(containers) : 0;
    for (size_t i = 0; i < n && !out->vendor_resource; i++) {
        json_object *res =
            kube_json_get(json_object_array_get_idx(containers, i), "resources", json_type_object);
        out->vendor_resource = vendor_resource_in(kube_json_get(res, "requests", json_type_object));
        if (!out->vendor_resource)
            out->vendor_resource =
                vendor_resource_in(kube_json_get(res, "limits", json_type_object));
    }
}

/* spec.schedulingGates[].name: the first POD_MAX_SCHEDULING_GATES names and the count. */
static int project_scheduling_gates(json_object *spec, struct kpod *out)
{
    json_object *gates = kube_json_get(spec, "schedulingGates", json_type_array);
    size_t n = gates ? json_object_array_length(gates) : 0;
    if (n == 0)
        return K_OK;
    size_t keep = n < POD_MAX_SCHEDULING_GATES ? n : POD_MAX_SCHEDULING_GATES;
    out->scheduling_gates = calloc(keep, sizeof(*out->scheduling_gates));
    if (!out->scheduling_gates)
        return K_ENOMEM;
    out->n_scheduling_gates = n;
    for (size_t i = 0; i < keep; i++) {
        const char *name = kube_json_str(json_object_array_get_idx(gates, i), "name");
        out->scheduling_gates[i] = strdup(name ? name : "");
        if (!out->scheduling_gates[i])
            return K_ENOMEM;
    }
    return K_OK;
}

/* Entries of an array member, 0 when absent or not an array. */
static size_t array_len(json_object *o, const char *key)
{
    json_object *a = kube_json_get(o, key, json_type_array);
    return a ? json_object_array_length(a) : 0;
}

/* The requirements of a matchExpressions / matchFields list and their values. */
static void count_requirements(json_object *arr, size_t *reqs, size_t *values)
{
    size_t n = arr && json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
    *reqs += n;
    for (size_t i = 0; i < n; i++)
        *values += array_len(json_object_array_get_idx(arr, i), "values");
}

/*
 * The size of the node selection as the caps count it: requirements = nodeSelector entries +
 * required node-affinity terms + their matchExpressions and matchFields; values = the values of
 * those requirements.
 */
static void count_selection(json_object *spec, size_t *reqs, size_t *values)
{
    json_object *sel = kube_json_get(spec, "nodeSelector", json_type_object);
    *reqs = sel ? (size_t)json_object_object_length(sel) : 0;
    *values = 0;
    json_object *na = kube_json_get(kube_json_get(spec, "affinity", json_type_object),
                                    "nodeAffinity", json_type_object);
    json_object *terms = kube_json_get(
        kube_json_get(na, "requiredDuringSchedulingIgnoredDuringExecution", json_type_object),
        "nodeSelectorTerms", json_type_array);
    size_t n = terms ? json_object_array_length(terms) : 0;
    *reqs += n;
    for (size_t i = 0; i < n; i++) {
        json_object *t = json_object_array_get_idx(terms, i);
        count_requirements(kube_json_field(t, "matchExpressions"), reqs, values);
        count_requirements(kube_json_field(t, "matchFields"), reqs, values);
    }
}

/* Whether spec.volumes[] has a persistentVolumeClaim or an ephemeral volume (core/v1
 * VolumeSource). */
static bool project_pvc_volumes(json_object *spec)
{
    json_object *vols = kube_json_get(spec, "volumes", json_type_array);
    size_t n = vols ? json_object_array_length(vols) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *v = json_object_array_get_idx(vols, i);
        if (kube_json_get(v, "persistentVolumeClaim", json_type_object) ||
            kube_json_get(v, "ephemeral", json_type_object))
            return true;
    }
    return false;
}

static int project_spec(json_object *spec, const struct gpu_set *gpus, struct kpod *out,
                        struct project_excess *excess)
{
    if (!spec)
        return K_OK;
    int rc;
    bool skip_selection = false, skip_tolerations = false;
    if (excess) {
        size_t reqs, values, tols = array_len(spec, "tolerations");
        count_selection(spec, &reqs, &values);
        if (reqs > PROJECT_MAX_SELECTOR_REQUIREMENTS || values > PROJECT_MAX_SELECTOR_VALUES) {
            excess->selector_requirements = reqs;
            excess->selector_values = values;
            skip_selection = true;
        }
        if (tols > PROJECT_MAX_TOLERATIONS) {
            excess->tolerations = tols;
            skip_tolerations = true;
        }
    }
    const char *node_name = kube_json_str(spec, "nodeName");
    if (node_name && !*node_name)
        node_name = NULL;
    if (kube_json_dup_opt(node_name, &out->node_name) != K_OK ||
        kube_json_dup_opt(kube_json_str(spec, "schedulerName"), &out->scheduler_name) != K_OK ||
        kube_json_dup_opt(kube_json_str(spec, "runtimeClassName"), &out->runtime_class) != K_OK)
        return K_ENOMEM;
    if (!skip_selection) {
        rc = project_string_map(kube_json_field(spec, "nodeSelector"), &out->node_selector);
        if (rc != K_OK)
            return rc;
        rc = project_affinity(spec, &out->affinity);
        if (rc != K_OK)
            return rc;
    }
    if (!skip_tolerations) {
        rc = project_tolerations(spec, out);
        if (rc != K_OK)
            return rc;
    }
    rc = project_pod_claims(kube_json_field(spec, "resourceClaims"), out);
    if (rc != K_OK)
        return rc;
    rc = project_scheduling_gates(spec, out);
    if (rc != K_OK)
        return rc;
    project_vendor_resource(spec, out);
    out->pvc_volumes = project_pvc_volumes(spec);
    return project_requests(spec, gpus, &out->gpu_requests);
}

static enum pod_phase parse_phase(const char *phase)
{
    if (!phase)
        return POD_PHASE_UNKNOWN;
    if (strcmp(phase, "Pending") == 0)
        return POD_PHASE_PENDING;
    if (strcmp(phase, "Running") == 0)
        return POD_PHASE_RUNNING;
    if (strcmp(phase, "Succeeded") == 0)
        return POD_PHASE_SUCCEEDED;
    if (strcmp(phase, "Failed") == 0)
        return POD_PHASE_FAILED;
    return POD_PHASE_UNKNOWN;
}

static int project_status(json_object *status, struct kpod *out)
{
    if (!status)
        return K_OK;
    out->phase = parse_phase(kube_json_str(status, "phase"));
    int rc = project_pod_claim_statuses(kube_json_field(status, "resourceClaimStatuses"), out);
    if (rc != K_OK)
        return rc;
    const char *nominated = kube_json_str(status, "nominatedNodeName");
    if (kube_json_dup_opt(nominated && *nominated ? nominated : NULL, &out->nominated_node) != K_OK)
        return K_ENOMEM;
    if (out->phase == POD_PHASE_FAILED &&
        (kube_json_dup_opt(kube_json_str(status, "reason"), &out->failed_reason) != K_OK ||
         kube_json_dup_opt(kube_json_str(status, "message"), &out->failed_message) != K_OK))
        return K_ENOMEM;
    json_object *conds = kube_json_get(status, "conditions", json_type_array);
    size_t n = conds ? json_object_array_length(conds) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *c = json_object_array_get_idx(conds, i);
        const char *type = kube_json_str(c, "type");
        if (!type || strcmp(type, "PodScheduled") != 0)
            continue;
        const char *st = kube_json_str(c, "status");
        out->scheduled.status = !st                        ? COND_UNKNOWN
                                : strcmp(st, "True") == 0  ? COND_TRUE
                                : strcmp(st, "False") == 0 ? COND_FALSE
                                                           : COND_UNKNOWN;
        if (kube_json_dup_opt(kube_json_str(c, "reason"), &out->scheduled.reason) != K_OK ||
            kube_json_dup_opt(kube_json_str(c, "message"), &out->scheduled.message) != K_OK)
            return K_ENOMEM;
        break;
    }
    return K_OK;
}

int project_pod(json_object *pod, const struct gpu_set *gpus, struct kpod *out)
{
    memset(out, 0, sizeof(*out));
    int rc = K_EPARSE;
    if (!pod || !gpus || !json_object_is_type(pod, json_type_object))
        goto out;
    json_object *meta = kube_json_get(pod, "metadata", json_type_object);
    if (!kube_json_str(meta, "name"))
        goto out;
    rc = project_meta(meta, out);
    if (rc != K_OK)
        goto out;
    rc = project_spec(kube_json_get(pod, "spec", json_type_object), gpus, out, NULL);
    if (rc != K_OK)
        goto out;
    rc = project_status(kube_json_get(pod, "status", json_type_object), out);
    if (rc == K_OK)
        rc = project_pod_ext(kube_json_get(pod, "spec", json_type_object),
                             kube_json_get(pod, "status", json_type_object), gpus, out);
    if (rc == K_OK)
        rc = project_pod_gang(meta, kube_json_get(pod, "spec", json_type_object), &out->gang);
    if (rc == K_OK)
        rc = project_pod_containers(kube_json_get(pod, "spec", json_type_object),
                                    kube_json_get(pod, "status", json_type_object), gpus, out);
out:
    if (rc != K_OK)
        pod_cleanup(out);
    return rc;
}

int project_pod_spec(json_object *spec, json_object *meta, const struct gpu_set *gpus,
                     struct kpod *out, struct project_excess *excess)
{
    memset(out, 0, sizeof(*out));
    if (excess)
        memset(excess, 0, sizeof(*excess));
    int rc = K_EPARSE;
    if (!spec || !gpus || !json_object_is_type(spec, json_type_object))
        goto out;
    rc = project_meta(meta && json_object_is_type(meta, json_type_object) ? meta : NULL, out);
    if (rc != K_OK)
        goto out;
    rc = project_spec(spec, gpus, out, excess);
    if (rc == K_OK)
        rc = project_pod_ext(spec, NULL, gpus, out);
    if (rc == K_OK)
        rc = project_pod_gang(meta && json_object_is_type(meta, json_type_object) ? meta : NULL,
                              spec, &out->gang);
out:
    if (rc != K_OK)
        pod_cleanup(out);
    return rc;
}

/* GPU entries of status.capacity / status.allocatable into an empty list, as Value(). */
static int project_node_resources(json_object *list, const struct gpu_set *gpus,
                                  struct resource_list *out)
{
    int rc = add_gpu_resources(list, gpus, out);
    for (size_t i = 0; rc == K_OK && i < out->n; i++)
        out->items[i].value = quantity_milli_to_value(out->items[i].value);
    return rc;
}

int project_node(json_object *node, const struct gpu_set *gpus, struct knode *out)
{
    memset(out, 0, sizeof(*out));
    int rc = K_EPARSE;
    if (!node || !gpus || !json_object_is_type(node, json_type_object))
        goto out;
    json_object *meta = kube_json_get(node, "metadata", json_type_object);
    const char *name = kube_json_str(meta, "name");
    if (!name)
        goto out;
    rc = K_ENOMEM;
    out->name = strdup(name);
    if (!out->name)
        goto out;
    rc = project_string_map(kube_json_field(meta, "labels"), &out->labels);
    if (rc != K_OK)
        goto out;

    json_object *spec = kube_json_get(node, "spec", json_type_object);
    json_object *unsched = kube_json_get(spec, "unschedulable", json_type_boolean);
    out->unschedulable = unsched && json_object_get_boolean(unsched);
    json_object *taints = kube_json_get(spec, "taints", json_type_array);
    size_t n = taints ? json_object_array_length(taints) : 0;
    if (n) {
        rc = K_ENOMEM;
        out->taints = calloc(n, sizeof(*out->taints));
        if (!out->taints)
            goto out;
        for (size_t i = 0; i < n; i++) {
            json_object *t = json_object_array_get_idx(taints, i);
            struct taint *taint = &out->taints[i];
            out->n_taints++;
            if (dup_or_empty(kube_json_str(t, "key"), &taint->key) != K_OK ||
                dup_or_empty(kube_json_str(t, "value"), &taint->value) != K_OK ||
                dup_or_empty(kube_json_str(t, "effect"), &taint->effect) != K_OK)
                goto out;
        }
    }

    json_object *status = kube_json_get(node, "status", json_type_object);
    rc = project_node_resources(kube_json_field(status, "capacity"), gpus, &out->capacity);
    if (rc != K_OK)
        goto out;
    rc = project_node_resources(kube_json_field(status, "allocatable"), gpus, &out->allocatable);
out:
    if (rc != K_OK)
        node_cleanup(out);
    return rc;
}
