/*
 * answer.h - the controller's answer written on a pod, for when a live classification cannot be
 * made: the user may read the pod but not what the ladder needs (nodes, ResourceSlices: the
 * `view` and `edit` ClusterRoles bound in a namespace grant neither).
 *
 * gputri-controller writes its word in the pod's annotations gputri/cause and gputri/detail
 * with field manager POD_ANNOTATION_MANAGER (model/model.h); when it last wrote them is the
 * `time` of that manager's entry in metadata.managedFields that owns f:gputri/cause
 * (kubernetes/kubernetes: staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go
 * ManagedFieldsEntry).
 */
#ifndef GPUTRI_CLI_ANSWER_H
#define GPUTRI_CLI_ANSWER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kube/client.h"
#include "model/gpu.h"
#include "model/model.h"
#include "printer.h"

/* Bounds on what is read from the pod: an annotation longer than these is cut. */
#define ANSWER_CAUSE_MAX 64
#define ANSWER_DETAIL_MAX 2048
#define ANSWER_MANAGED_FIELDS_MAX 64 /* managedFields entries looked at */

struct pod_answer {
    char cause[ANSWER_CAUSE_MAX];   /* a word of the ladder; "" when absent, stale or unknown */
    char detail[ANSWER_DETAIL_MAX]; /* gputri/detail as written ("" when absent) */
    int64_t written;                /* seconds since the epoch; 0 when not known */
};

/*
 * pod_annotation_usable() - whether p's gputri/cause annotation can stand for a live
 * classification: present, and not contradicted by the binding (a pod bound since the word was
 * written is stale unless the word is one of after placement while its GPU containers have not
 * started, or ok, or node-rejected for a pod its kubelet rejected; an unbound pod's word is none
 * of those, which only a bound pod can have). Pure; p borrowed.
 */
bool pod_annotation_usable(const struct kpod *p);

/*
 * pod_answer_read() - GET the pod ns/name (with its managedFields) and fill `a` from its
 * annotations and managedFields. K_OK with a->cause "" when the pod carries no usable answer (no
 * annotation, a stale one, or a word not on the ladder). K_ENOTFOUND, K_EFORBIDDEN and the other
 * K_* errors of kube_get_managed_fields with err filled; K_ENOMEM. gpus is borrowed (the GPU
 * resources, as for triage_run). Not thread-safe on `a`; the client as kube_get.
 */
int pod_answer_read(struct kube_client *c, const struct gpu_set *gpus, const char *ns,
                    const char *name, struct pod_answer *a, struct kube_error *err);

/*
 * pod_answer_from_object() - fill `a` from `pod`, the Pod object as the API server returned it
 * with its metadata.managedFields (kube_get_managed_fields: read under kube/read_budget.h's
 * KUBE_READ_OBJECT_MANAGED_FIELDS): its projection (cache/store.h) must be pod ns/name and its
 * gputri/cause usable (pod_annotation_usable) and a word of the ladder, else a->cause is "";
 * a->written from answer_written_from_managed_fields(). pod_answer_read() after its GET. Returns
 * K_OK (also for a pod past the projection's bounds: no answer) or K_ENOMEM. Pure; gpus and pod
 * borrowed.
 */
int pod_answer_from_object(const struct gpu_set *gpus, const char *ns, const char *name,
                           json_object *pod, struct pod_answer *a);

/*
 * answer_written_from_managed_fields() - when `manager` last wrote the annotation `key` of pod
 * object `pod` (a parsed Pod): the `time` of its managedFields entry whose fieldsV1 holds
 * f:metadata.f:annotations.f:<key>; 0 when there is none or the time does not parse. Looks at
 * no more than ANSWER_MANAGED_FIELDS_MAX entries. Pure; pod borrowed.
 */
int64_t answer_written_from_managed_fields(json_object *pod, const char *manager, const char *key);

/*
 * answer_forbidden_resource() - the resource a 403 message names ("nodes" from `nodes is
 * forbidden: User "u" cannot list resource "nodes" ...`), into out (len bytes, NUL-terminated);
 * "" when the message names none. Pure.
 */
void answer_forbidden_resource(const char *message, char *out, size_t len);

/*
 * answer_print_fallback() - say on `err_out`, in one line, that the answer comes from the
 * annotation because `resource` (answer_forbidden_resource; "" for unknown) is forbidden, and
 * which ClusterRole grants what a live classification reads. `prog` prefixes the line ("gputri"
 * or "kubectl-gputri"). `now` in seconds since the epoch, for the age of the answer.
 */
void answer_print_fallback(FILE *err_out, const char *prog, const struct pod_answer *a,
                           const char *resource, int64_t now);

/*
 * answer_print_explain() - explain's text for an answer read from the annotation: the pod, the
 * cause, its detail and when it was written ("-" when not known). Text from the pod is escaped
 * for the terminal (util/escape.h). Returns K_OK, or K_EIO when writing fails.
 */
int answer_print_explain(FILE *out, const char *ns, const char *name, const struct pod_answer *a,
                         int64_t now);

/*
 * answer_explain_json() - explain's report for an answer read from the annotation, as
 * triage_explain_json() shapes it (`explain -o json|yaml`): {"apiVersion": "gputri.io/v1alpha1",
 * "kind": "GPUPodExplanation", "metadata": {"name", "namespace"}, "status": {"cause", "detail",
 * "annotationCause", "annotationDetail", "source": "annotation", "written" (RFC 3339 UTC, absent
 * when not known)}}, and no per-node members: the nodes were not read, so nothing of them is
 * printed (never a number not measured). On K_OK *out is new (json_object_put). Returns K_OK or
 * K_ENOMEM. Pure.
 */
int answer_explain_json(const char *ns, const char *name, const struct pod_answer *a,
                        json_object **out);

/* What answer_fallback() did. */
enum answer_outcome {
    ANSWER_PRINTED = 0, /* the annotation's answer printed, the note on err_out: exit 0 */
    ANSWER_NONE = 1,    /* the pod carries no usable answer: one line on err_out, exit 1 */
    ANSWER_UNREAD = 2,  /* the pod itself could not be read: the caller reports `forbidden` */
};

/*
 * answer_fallback() - what `gputri triage|explain` and `kubectl gputri explain` do when
 * triage_run() failed with K_EFORBIDDEN (`forbidden` its error): read the pod's answer
 * (pod_answer_read) and print it to `out` (the word alone when !explain; else
 * answer_print_explain, or answer_explain_json in pr's format when pr is not NULL: `explain -o`)
 * with answer_print_fallback() on `err_out`. `prog` prefixes the lines on err_out. A report the
 * printer cannot make (K_ENOMEM, a template's error) is said on err_out: ANSWER_NONE. Not
 * thread-safe on the streams.
 */
enum answer_outcome answer_fallback(struct kube_client *c, const struct gpu_set *gpus,
                                    const char *ns, const char *name, bool explain,
                                    const struct printer *pr, const char *prog,
                                    const struct kube_error *forbidden, FILE *out, FILE *err_out);

#endif
