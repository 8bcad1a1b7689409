/*
 * project_gang.h - gang objects and a pod's link to its gang, from JSON (model/gang.h).
 * Thread-safe: pure functions of their arguments.
 */
#ifndef GPUTRI_KUBE_PROJECT_GANG_H
#define GPUTRI_KUBE_PROJECT_GANG_H

#include <json-c/json.h>

#include "model/gang.h"

/*
 * project_pod_gang() - the pod's link from its metadata (annotations) and spec (`meta`, `spec`
 * may be NULL): *out a new link (free with pod_gang_free), or NULL when there is none. K_OK or
 * K_ENOMEM (*out NULL). Names longer than GANG_NAME_MAX - 1 are no link (the API server refuses
 * them).
 */
int project_pod_gang(json_object *meta, json_object *spec, struct pod_gang **out);

/*
 * project_gang_group() - a group object of kind `k` into *out (zeroed first): the fields of the
 * header, bounded. K_OK, or K_EPARSE without metadata.name. Pure.
 */
int project_gang_group(json_object *obj, enum gang_kind k, struct gang_group *out);

#endif
