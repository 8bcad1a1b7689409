/* workload.c - a Kueue Workload's projection: cleanup and the conditions read. */
#include "model/workload.h"

#include <stdlib.h>
#include <string.h>

#include "model/model.h"

static void cond_cleanup(struct pod_condition *c)
{
    free(c->reason);
    free(c->message);
}

void workload_cleanup(struct kworkload *w)
{
    if (!w)
        return;
    free(w->ns);
    free(w->name);
    free(w->uid);
    for (size_t i = 0; i < w->n_owners && i < WORKLOAD_MAX_OWNERS; i++) {
        free(w->owners[i].kind);
        free(w->owners[i].name);
        free(w->owners[i].uid);
    }
    free(w->queue_name);
    free(w->cluster_queue);
    cond_cleanup(&w->quota_reserved);
    cond_cleanup(&w->admitted);
    memset(w, 0, sizeof(*w));
}

bool workload_owned_by(const struct kworkload *w, const char *uid)
{
    if (!w || !uid || !*uid)
        return false;
    for (size_t i = 0; i < w->n_owners && i < WORKLOAD_MAX_OWNERS; i++)
        if (w->owners[i].uid && strcmp(w->owners[i].uid, uid) == 0)
            return true;
    return false;
}

const struct pod_condition *workload_waiting(const struct kworkload *w, const char **type)
{
    if (!w || w->finished || w->deleting)
        return NULL;
    if (w->quota_reserved.status == COND_FALSE) {
        *type = "QuotaReserved";
        return &w->quota_reserved;
    }
    if (w->quota_reserved.status == COND_TRUE && w->admitted.status == COND_FALSE) {
        *type = "Admitted";
        return &w->admitted;
    }
    return NULL;
}

static bool cond_eq(const struct pod_condition *a, const struct pod_condition *b)
{
    return a->status == b->status && model_str_equal(a->reason, b->reason) &&
           model_str_equal(a->message, b->message);
}

bool workload_equal(const struct kworkload *a, const struct kworkload *b)
{
    if (!model_str_equal(a->ns, b->ns) || !model_str_equal(a->name, b->name) ||
        !model_str_equal(a->uid, b->uid) || a->n_owners != b->n_owners ||
        !model_str_equal(a->queue_name, b->queue_name) ||
        !model_str_equal(a->cluster_queue, b->cluster_queue) || a->finished != b->finished ||
        a->deleting != b->deleting || !cond_eq(&a->quota_reserved, &b->quota_reserved) ||
        !cond_eq(&a->admitted, &b->admitted))
        return false;
    for (size_t i = 0; i < a->n_owners && i < WORKLOAD_MAX_OWNERS; i++)
        if (!model_str_equal(a->owners[i].kind, b->owners[i].kind) ||
            !model_str_equal(a->owners[i].name, b->owners[i].name) ||
            !model_str_equal(a->owners[i].uid, b->owners[i].uid))
            return false;
    return true;
}
