/* workloads.c - one-shot tools read Kueue Workloads: the pod's, or a namespace's. */
#include <stdio.h>
#include <string.h>

#include "cache/informer.h"
#include "kube/kueue_api.h"
#include "kube/project_workload.h"
#include "triage/triage.h"
#include "util/result.h"

struct reading {
    struct workload_store *ws;
};

static void keep(void *ctx, json_object *obj)
{
    struct reading *r = ctx;
    struct kworkload w;
    if (project_workload(obj, &w) != K_OK)
        return;
    if (workload_store_upsert(r->ws, &w, NULL) != K_OK)
        workload_cleanup(&w);
}

int triage_read_workloads(struct kube_client *c, struct workload_store *ws, const char *ns,
                          const char *const *job_uids, size_t n_uids, struct kube_error *err)
{
    enum kueue_api_version v = KUEUE_API_NONE;
    int rc = kueue_api_discover(c, &v, err);
    if (rc != K_OK || v == KUEUE_API_NONE)
        return rc;
    char ns_esc[256], base[512], path[1024];
    if (ns && kube_path_escape(ns, ns_esc, sizeof(ns_esc)) != K_OK)
        return K_EINVAL;
    kueue_workloads_path(v, ns ? ns_esc : NULL, base, sizeof(base));
    struct reading r = {ws};
    struct informer_handlers h = {.ctx = &r, .upsert = keep};
    if (!job_uids)
        return informer_list_once(c, base, 500, &h, NULL, 0, err);
    for (size_t i = 0; i < n_uids; i++) {
        char uid_esc[256];
        if (!job_uids[i] || !*job_uids[i])
            continue;
        if (kube_path_escape(job_uids[i], uid_esc, sizeof(uid_esc)) != K_OK)
            return K_EINVAL;
        snprintf(path, sizeof(path), "%s?labelSelector=%s%%3D%s", base, TRIAGE_JOB_UID_LABEL,
                 uid_esc);
        rc = informer_list_once(c, path, 500, &h, NULL, 0, err);
        if (rc != K_OK)
            return rc;
    }
    return K_OK;
}
