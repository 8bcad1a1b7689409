/*
 * admission.h - AdmissionReview v1 in, AdmissionReview v1 out (admission.k8s.io/v1; the API
 * server's checks are in kubernetes/apiserver: pkg/admission/plugin/webhook/request/
 * admissionreview.go VerifyAdmissionResponse). No HTTP types here: the server hands over the
 * body bytes and sends back what this returns.
 *
 * The answer always has allowed=true (the webhook never denies), response.uid = request.uid and,
 * when there is something to say, `warnings` (see warnings.h). Checked objects, by
 * request.kind (group/kind): Pod (spec), apps Deployment, StatefulSet, ReplicaSet, DaemonSet
 * and batch Job (spec.template.spec), batch CronJob (spec.jobTemplate.spec.template.spec), on
 * CREATE and UPDATE; ResourceQuota (its own spec.hard). Replicas: spec.replicas (default 1) for
 * apps kinds, spec.parallelism (default 1) for Job and CronJob, unknown for DaemonSet.
 * Anything else — other kinds, DELETE/CONNECT, subresources, missing or odd-typed fields — is
 * allowed without warnings.
 *
 * Pure given the snapshot: no I/O, no globals; thread-safe on distinct results.
 */
#ifndef GPUTRI_WEBHOOK_ADMISSION_H
#define GPUTRI_WEBHOOK_ADMISSION_H

#include <stdbool.h>
#include <stddef.h>

#include "snapshot.h"
#include "warnings.h"

#define ADMISSION_MAX_DEPTH 64 /* JSON nesting accepted */

struct admission_result {
    char *response; /* the AdmissionReview JSON (malloc'd), NULL on error */
    size_t response_len;
    char error[256]; /* why the request was refused (K_EPARSE) */
    struct warn_list warnings;
    /* the object the warnings are about, for Events ("" when unknown) */
    bool dry_run;
    char ns[254];
    char kind[64];
    char api_version[128];
    char name[254];
    char uid[128];
    char operation[16];
};

/*
 * admission_handle() - decode `body` (len bytes, need not be NUL-terminated), run the checks
 * against `snap`, encode the response. Returns:
 *   K_OK      response set (HTTP 200), warnings and the object's identity filled;
 *   K_EPARSE  not an AdmissionReview we can answer: malformed JSON, nesting above
 *             ADMISSION_MAX_DEPTH, trailing garbage, apiVersion other than admission.k8s.io/v1,
 *             kind other than AdmissionReview, no request object or no request.uid (answer
 *             HTTP 400 with `error`);
 *   K_ENOMEM.
 * Call admission_result_cleanup() in every case.
 */
int admission_handle(const char *body, size_t len, const struct wh_snapshot *snap,
                     struct admission_result *out);

/* admission_result_cleanup() - free the response. Idempotent. */
void admission_result_cleanup(struct admission_result *r);

#endif
