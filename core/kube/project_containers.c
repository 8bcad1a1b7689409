/* project_containers.c - spec containers and the kubelet's statuses into model/containers.h. */
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/project.h"
#include "model/containers.h"
#include "util/result.h"

/* Whether a ResourceList object names a resource of the GPU set. */
static bool names_gpu(json_object *list, const struct gpu_set *gpus)
{
    if (!list || !json_object_is_type(list, json_type_object))
        return false;
    json_object_object_foreach(list, name, val)
    {
        (void)val;
        if (gpu_set_contains(gpus, name))
            return true;
    }
    return false;
}

static int dup_msg(const char *s, char **out)
{
    return container_message_dup(s, out) == 0 ? K_OK : K_ENOMEM;
}

/* One spec container: its name and whether it asks for a GPU or references a claim. */
static int spec_container(json_object *ctr, const struct gpu_set *gpus, uint32_t index, bool init,
                          struct container_state *out)
{
    out->index = index;
    out->init = init;
    json_object *res = kube_json_get(ctr, "resources", json_type_object);
    out->gpu_resource = names_gpu(kube_json_get(res, "requests", json_type_object), gpus) ||
                        names_gpu(kube_json_get(res, "limits", json_type_object), gpus);
    json_object *claims = kube_json_get(res, "claims", json_type_array);
    size_t n = claims ? json_object_array_length(claims) : 0;
    for (size_t i = 0; i < n && !out->claim_ref; i++) {
        const char *name = kube_json_str(json_object_array_get_idx(claims, i), "name");
        out->claim_ref = name && *name;
    }
    return dup_msg(kube_json_str(ctr, "name"), &out->name);
}

/* One ContainerStatus into the container of the same name. */
static int status_into(json_object *st, struct container_state *c)
{
    c->has_status = true;
    json_object *started = kube_json_get(st, "started", json_type_boolean);
    c->started = started && json_object_get_boolean(started);
    json_object *rc = kube_json_get(st, "restartCount", json_type_int);
    int64_t restarts = rc ? json_object_get_int64(rc) : 0;
    c->restarts = restarts < 0 ? 0 : restarts > INT32_MAX ? INT32_MAX : (int32_t)restarts;
    json_object *state = kube_json_get(st, "state", json_type_object);
    c->running = kube_json_get(state, "running", json_type_object) != NULL;
    json_object *term = kube_json_get(state, "terminated", json_type_object);
    c->terminated = term != NULL;
    json_object *waiting = kube_json_get(state, "waiting", json_type_object);
    json_object *last = kube_json_get(kube_json_get(st, "lastState", json_type_object),
                                      "terminated", json_type_object);
    c->has_last = last != NULL;
    if (last) {
        json_object *code = kube_json_get(last, "exitCode", json_type_int);
        int64_t v = code ? json_object_get_int64(code) : 0;
        c->last_exit_code = v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : (int32_t)v;
    }
    if (dup_msg(kube_json_str(term, "reason"), &c->term_reason) != K_OK ||
        dup_msg(kube_json_str(waiting, "reason"), &c->waiting_reason) != K_OK ||
        dup_msg(kube_json_str(waiting, "message"), &c->waiting_message) != K_OK ||
        dup_msg(kube_json_str(last, "reason"), &c->last_reason) != K_OK ||
        dup_msg(kube_json_str(last, "message"), &c->last_message) != K_OK)
        return K_ENOMEM;
    return K_OK;
}

/* The statuses of one list, matched by name to the kept containers of that kind. */
static int statuses_into(json_object *arr, bool init, struct pod_containers *cs)
{
    size_t n = arr ? json_object_array_length(arr) : 0;
    if (n > 2 * POD_CONTAINERS_MAX)
        n = 2 * POD_CONTAINERS_MAX; /* more statuses than kept containers cannot all match */
    for (size_t i = 0; i < n; i++) {
        json_object *st = json_object_array_get_idx(arr, i);
        const char *name = kube_json_str(st, "name");
        if (!name)
            continue;
        for (size_t k = 0; k < cs->n; k++) {
            struct container_state *c = &cs->items[k];
            if (c->init == init && !c->has_status && c->name && strcmp(c->name, name) == 0) {
                int rc = status_into(st, c);
                if (rc != K_OK)
                    return rc;
                break;
            }
        }
    }
    return K_OK;
}

int project_pod_containers(json_object *spec, json_object *status, const struct gpu_set *gpus,
                           struct kpod *pod)
{
    json_object *inits = kube_json_get(spec, "initContainers", json_type_array);
    json_object *ctrs = kube_json_get(spec, "containers", json_type_array);
    size_t n_init = inits ? json_object_array_length(inits) : 0;
    size_t n = ctrs ? json_object_array_length(ctrs) : 0;
    if (n_init + n == 0)
        return K_OK;
    struct pod_containers *cs = calloc(1, sizeof(*cs));
    size_t keep = n_init + n < POD_CONTAINERS_MAX ? n_init + n : POD_CONTAINERS_MAX;
    if (!cs || !(cs->items = calloc(keep, sizeof(*cs->items)))) {
        free(cs);
        return K_ENOMEM;
    }
    pod->containers = cs; /* pod_cleanup frees it from here on */
    cs->total = n_init + n;
    for (size_t i = 0; i < keep; i++) {
        bool init = i < n_init;
        json_object *ctr = json_object_array_get_idx(init ? inits : ctrs, init ? i : i - n_init);
        int rc = spec_container(ctr, gpus, (uint32_t)i, init, &cs->items[cs->n++]);
        if (rc != K_OK)
            return rc;
    }
    /* an extended resource a DeviceClass may serve makes its container a GPU container too */
    for (size_t i = 0; pod->ext && i < pod->ext->n_requests; i++) {
        uint32_t k = pod->ext->requests[i].container;
        if (k < cs->n)
            cs->items[k].gpu_resource = true;
    }
    int rc =
        statuses_into(kube_json_get(status, "initContainerStatuses", json_type_array), true, cs);
    if (rc == K_OK)
        rc = statuses_into(kube_json_get(status, "containerStatuses", json_type_array), false, cs);
    return rc;
}
