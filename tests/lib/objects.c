/* objects.c - API JSON builders for unit tests. */
#include "objects.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/file.h"

static json_object *str(const char *s)
{
    return json_object_new_string(s);
}

json_object *test_node(const char *name, const char *gpus_capacity, const char *gpus_allocatable,
                       const char *taint, const char *label)
{
    json_object *node = json_object_new_object();
    json_object_object_add(node, "apiVersion", str("v1"));
    json_object_object_add(node, "kind", str("Node"));
    json_object *meta = json_object_new_object();
    json_object_object_add(meta, "name", str(name));
    json_object_object_add(meta, "uid", str("00000000-0000-0000-0000-00000000000n"));
    json_object_object_add(meta, "resourceVersion", str("1"));
    json_object *labels = json_object_new_object();
    json_object_object_add(labels, "kubernetes.io/hostname", str(name));
    if (label) {
        char k[256];
        const char *eq = strchr(label, '=');
        snprintf(k, sizeof(k), "%.*s", (int)(eq - label), label);
        json_object_object_add(labels, k, str(eq + 1));
    }
    json_object_object_add(meta, "labels", labels);
    json_object_object_add(node, "metadata", meta);
    json_object *spec = json_object_new_object();
    if (taint) {
        char key[128], value[128], effect[64];
        if (sscanf(taint, "%127[^=]=%127[^:]:%63s", key, value, effect) == 3) {
            json_object *t = json_object_new_object();
            json_object_object_add(t, "key", str(key));
            json_object_object_add(t, "value", str(value));
            json_object_object_add(t, "effect", str(effect));
            json_object *arr = json_object_new_array();
            json_object_array_add(arr, t);
            json_object_object_add(spec, "taints", arr);
        }
    }
    json_object_object_add(node, "spec", spec);
    json_object *status = json_object_new_object();
    json_object *cap = json_object_new_object(), *alloc = json_object_new_object();
    json_object_object_add(cap, "cpu", str("32"));
    json_object_object_add(alloc, "cpu", str("32"));
    json_object_object_add(cap, "pods", str("110"));
    json_object_object_add(alloc, "pods", str("110"));
    if (gpus_capacity)
        json_object_object_add(cap, "nvidia.com/gpu", str(gpus_capacity));
    if (gpus_allocatable)
        json_object_object_add(alloc, "nvidia.com/gpu", str(gpus_allocatable));
    json_object_object_add(status, "capacity", cap);
    json_object_object_add(status, "allocatable", alloc);
    json_object_object_add(node, "status", status);
    return node;
}

json_object *test_pod(const char *ns, const char *name, const char *gpus, const char *node,
                      const char *phase, const char *selector_host, int tolerate_all,
                      const char *cause)
{
    json_object *pod = json_object_new_object();
    json_object_object_add(pod, "apiVersion", str("v1"));
    json_object_object_add(pod, "kind", str("Pod"));
    json_object *meta = json_object_new_object();
    json_object_object_add(meta, "name", str(name));
    json_object_object_add(meta, "namespace", str(ns));
    json_object_object_add(meta, "uid", str("11111111-2222-3333-4444-555555555555"));
    json_object_object_add(meta, "resourceVersion", str("7"));
    if (cause) {
        json_object *ann = json_object_new_object();
        json_object_object_add(ann, "gputri/cause", str(cause));
        json_object_object_add(ann, "gputri/detail", str("earlier detail"));
        json_object_object_add(meta, "annotations", ann);
    }
    json_object_object_add(pod, "metadata", meta);
    json_object *spec = json_object_new_object();
    json_object *c = json_object_new_object();
    json_object_object_add(c, "name", str("cuda"));
    json_object_object_add(c, "image", str("nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"));
    json_object *res = json_object_new_object();
    if (gpus) {
        json_object *limits = json_object_new_object(), *requests = json_object_new_object();
        json_object_object_add(limits, "nvidia.com/gpu", str(gpus));
        json_object_object_add(requests, "nvidia.com/gpu", str(gpus));
        json_object_object_add(res, "limits", limits);
        json_object_object_add(res, "requests", requests);
    }
    json_object_object_add(c, "resources", res);
    json_object *containers = json_object_new_array();
    json_object_array_add(containers, c);
    json_object_object_add(spec, "containers", containers);
    if (node)
        json_object_object_add(spec, "nodeName", str(node));
    if (selector_host) {
        json_object *sel = json_object_new_object();
        json_object_object_add(sel, "kubernetes.io/hostname", str(selector_host));
        json_object_object_add(spec, "nodeSelector", sel);
    }
    if (tolerate_all) {
        json_object *tol = json_object_new_object();
        json_object_object_add(tol, "operator", str("Exists"));
        json_object *arr = json_object_new_array();
        json_object_array_add(arr, tol);
        json_object_object_add(spec, "tolerations", arr);
    }
    json_object_object_add(spec, "schedulerName", str("default-scheduler"));
    json_object_object_add(pod, "spec", spec);
    json_object *status = json_object_new_object();
    json_object_object_add(status, "phase", str(phase ? phase : "Pending"));
    json_object_object_add(pod, "status", status);
    return pod;
}

void test_set_condition(json_object *obj, const char *type, const char *status, const char *reason,
                        const char *message)
{
    json_object *st;
    json_object_object_get_ex(obj, "status", &st);
    json_object *cond = json_object_new_object();
    json_object_object_add(cond, "type", str(type));
    json_object_object_add(cond, "status", str(status));
    if (reason)
        json_object_object_add(cond, "reason", str(reason));
    if (message)
        json_object_object_add(cond, "message", str(message));
    json_object *arr = json_object_new_array();
    json_object_array_add(arr, cond);
    json_object_object_add(st, "conditions", arr);
}

void test_pod_set_scheduled(json_object *pod, const char *message)
{
    test_set_condition(pod, "PodScheduled", "False", "Unschedulable", message);
}

void test_pod_set_container_state(json_object *pod, const char *state)
{
    json_object *st = NULL, *spec = NULL, *ctrs = NULL;
    json_object_object_get_ex(pod, "status", &st);
    json_object_object_get_ex(pod, "spec", &spec);
    json_object_object_get_ex(spec, "containers", &ctrs);
    char buf[512];
    snprintf(
        buf, sizeof(buf), "[{\"name\":\"%s\",\"state\":%s}]",
        json_object_get_string(json_object_object_get(json_object_array_get_idx(ctrs, 0), "name")),
        state);
    json_object_object_add(st, "containerStatuses", json_tokener_parse(buf));
}

void test_pod_set_deleting(json_object *pod)
{
    json_object *meta = NULL;
    json_object_object_get_ex(pod, "metadata", &meta);
    json_object_object_add(meta, "deletionTimestamp",
                           json_object_new_string("2025-11-30T14:30:00Z"));
    json_object_object_add(meta, "finalizers", json_tokener_parse("[\"example.com/hold\"]"));
}

void test_rfc3339(int64_t t, char out[32])
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void test_event_dated(json_object *ev, int64_t t)
{
    char when[32];
    test_rfc3339(t, when);
    json_object_object_add(ev, "firstTimestamp", json_object_new_string(when));
    json_object_object_add(ev, "lastTimestamp", json_object_new_string(when));
}

json_object *test_load_json(const char *fixtures_dir, const char *rel)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", fixtures_dir, rel);
    return json_object_from_file(path);
}

int test_load_bytes(const char *fixtures_dir, const char *rel, struct buf *b)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", fixtures_dir, rel);
    buf_init(b, 1u << 24);
    return file_read(path, b, 0);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_free(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

int test_fixtures_each(const char *fixtures_dir, const char *sub,
                       int (*fn)(const char *path, void *ctx), void *ctx, size_t *n)
{
    *n = 0;
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/%s", fixtures_dir, sub);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    char **names = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        char **grown = realloc(names, (*n + 1) * sizeof(*names));
        char *copy = strdup(e->d_name);
        if (!grown || !copy) {
            free(copy);
            names_free(grown ? grown : names, *n);
            closedir(d);
            *n = 0;
            return -1;
        }
        names = grown;
        names[(*n)++] = copy;
    }
    closedir(d);
    if (*n > 1)
        qsort(names, *n, sizeof(*names), cmp_names);
    int failures = 0;
    for (size_t i = 0; i < *n; i++) {
        char path[8192];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        failures += fn(path, ctx);
    }
    names_free(names, *n);
    return failures;
}
