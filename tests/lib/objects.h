/*
 * objects.h - small builders of API JSON for unit tests, shaped like what the API server returns
 * (`kubectl get -o json`). Every function returns a new json_object owned by the caller.
 */
#ifndef GPUTRI_TEST_OBJECTS_H
#define GPUTRI_TEST_OBJECTS_H

#include <stdint.h>

#include <json-c/json.h>
#include <stddef.h>

#include "util/buf.h"

/*
 * test_node() - a Node. gpus_capacity / gpus_allocatable: nvidia.com/gpu amounts, or NULL to
 * leave the key out. taint: "key=value:Effect" or NULL. labels: extra "k=v" label or NULL.
 */
json_object *test_node(const char *name, const char *gpus_capacity, const char *gpus_allocatable,
                       const char *taint, const char *label);

/*
 * test_pod() - a Pod in `ns` with one container whose limits hold nvidia.com/gpu = gpus (NULL for
 * none), bound to node (NULL for pending), in `phase`, with an optional nodeSelector
 * "kubernetes.io/hostname=<selector_host>" (NULL for none), a toleration of every taint when
 * tolerate_all, and annotation gputri/cause = cause (NULL for none).
 */
json_object *test_pod(const char *ns, const char *name, const char *gpus, const char *node,
                      const char *phase, const char *selector_host, int tolerate_all,
                      const char *cause);

/* test_set_condition() - status.conditions of a Pod or Node becomes the one condition given
 * (reason and message left out when NULL). */
void test_set_condition(json_object *obj, const char *type, const char *status, const char *reason,
                        const char *message);

/* test_pod_set_scheduled() - add PodScheduled=False/Unschedulable with `message`. */
void test_pod_set_scheduled(json_object *pod, const char *message);

/* test_pod_set_container_state() - status.containerStatuses of a test_pod() becomes its one
 * container in `state` (JSON of a ContainerState, e.g. {"running":{}}). */
void test_pod_set_container_state(json_object *pod, const char *state);

/* test_pod_set_deleting() - metadata.deletionTimestamp (2025-11-30T14:30:00Z) and a finalizer:
 * the pod is being deleted and lingers. */
void test_pod_set_deleting(json_object *pod);

/* test_rfc3339() - seconds since the epoch `t` as an RFC 3339 UTC time into out (32 bytes). */
void test_rfc3339(int64_t t, char out[32]);

/* test_event_dated() - an Event's firstTimestamp and lastTimestamp become `t` (seconds). */
void test_event_dated(json_object *ev, int64_t t);

/* test_load_json() - parse a file under FIXTURES_DIR (relative path); NULL on error. */
json_object *test_load_json(const char *fixtures_dir, const char *rel);

/*
 * test_load_bytes() - read a file under FIXTURES_DIR (relative path; up to 16 MiB, any bytes)
 * into `b`, which this initialises; buf_cleanup() it whatever the result. Returns file_read()'s
 * K_* value.
 */
int test_load_bytes(const char *fixtures_dir, const char *rel, struct buf *b);

/*
 * test_fixtures_each() - call fn with the path of every *.json file under <fixtures_dir>/<sub>, in
 * name order, and return the sum of what fn returns (its failures). *n receives the number of
 * files; -1 when the directory cannot be read or out of memory.
 */
int test_fixtures_each(const char *fixtures_dir, const char *sub,
                       int (*fn)(const char *path, void *ctx), void *ctx, size_t *n);

#endif
