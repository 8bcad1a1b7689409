/*
 * owner_alive.h - whether an owner whose GPU pods a ResourceQuota refused (classify/quota.h
 * struct quota_owner) still exists: its FailedCreate Events outlive it (the API server keeps
 * Events for --event-ttl, an hour by default), so a deleted ReplicaSet, StatefulSet or Job would
 * otherwise stay "refused" until its Events expire. Used by the controller's table of refused
 * owners and by `kubectl gputri pods`.
 *
 * RBAC: get on apps replicasets, apps statefulsets, batch jobs (exactly the owner's kind).
 */
#ifndef GPUTRI_TRIAGE_OWNER_ALIVE_H
#define GPUTRI_TRIAGE_OWNER_ALIVE_H

#include "classify/quota.h"
#include "kube/client.h"

/*
 * triage_owner_alive() - GET the owner (/apis/<apps|batch>/v1/namespaces/<ns>/<kind
 * plural>/<name>). Returns K_OK when it exists (with the uid the refusal named, or none said);
 * K_ENOTFOUND when it is gone (404) or was replaced (another uid under the same name); otherwise
 * the GET's error (err filled; K_EFORBIDDEN without RBAC get), which a caller takes as "still
 * there". Blocking: one request within the client's request timeout. Thread-safe on distinct
 * clients.
 */
int triage_owner_alive(struct kube_client *c, const struct quota_owner *o, struct kube_error *err);

#endif
