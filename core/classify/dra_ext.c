/* dra_ext.c - the special claim's requests for extended resources served by DRA (dra_ext.h). */
#include "classify/dra_ext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void name_req(struct dra_ext_req *r, const struct pod_ext_request *e)
{
    snprintf(r->name, sizeof(r->name), "container-%u-request-%u", (unsigned)e->container,
             (unsigned)e->index);
}

static int req_cmp(const void *pa, const void *pb)
{
    const struct dra_ext_req *a = pa, *b = pb;
    return strcmp(a->name, b->name);
}

size_t dra_ext_build(const struct kpod *pod, const struct dra_view *view, struct dra_ext_req *out,
                     size_t max)
{
    if (!pod->ext || !view || !view->extended_class || max == 0)
        return 0;
    const struct pod_ext_request *reqs = pod->ext->requests;
    size_t n_reqs = pod->ext->n_requests, n = 0;
    /* pod->ext->requests is sorted by resource, then container: one run per resource */
    for (size_t i = 0; i < n_reqs;) {
        size_t end = i;
        while (end < n_reqs && strcmp(reqs[end].resource, reqs[i].resource) == 0)
            end++;
        const struct dra_class *cls = view->extended_class(view->ctx, reqs[i].resource);
        if (cls) {
            /* long-lived containers: one request each */
            for (size_t k = i; k < end && n < max; k++) {
                if (reqs[k].short_lived)
                    continue;
                struct dra_ext_req *r = &out[n++];
                r->resource = reqs[k].resource;
                r->cls = cls;
                r->count = reqs[k].count;
                name_req(r, &reqs[k]);
            }
            /* non-sidecar init containers: what the long-lived requests from their index on
               leave uncovered; the largest is kept */
            const struct pod_ext_request *most = NULL;
            int64_t most_count = 0;
            for (size_t k = i; k < end; k++) {
                if (!reqs[k].short_lived)
                    continue;
                int64_t covered = 0;
                for (size_t m = i; m < end; m++)
                    if (!reqs[m].short_lived && reqs[m].container >= reqs[k].container)
                        covered = int64_add_sat(covered, reqs[m].count);
                if (covered >= reqs[k].count)
                    continue;
                int64_t extra = reqs[k].count - covered;
                if (!most || extra > most_count) {
                    most = &reqs[k];
                    most_count = extra;
                }
            }
            if (most && n < max) {
                struct dra_ext_req *r = &out[n++];
                r->resource = most->resource;
                r->cls = cls;
                r->count = most_count;
                name_req(r, most);
            }
        }
        i = end;
    }
    qsort(out, n, sizeof(*out), req_cmp);
    return n;
}
