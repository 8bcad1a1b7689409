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
 * CREATE and UPDATE; ResourceQuota (its own spec.hard); resource.k8s.io ResourceClaim (spec)
 * and ResourceClaimTemplate (spec.spec) at v1, v1beta2 or v1beta1 (read in the layout of v1,
 * core/kube/dra_api.h dra_json_as_v1) on CREATE (warnings.h wh_check_dra_object; their spec is
 * immutable). Pod specs with spec.resourceClaims also get the DRA checks
 * (wh_check_pod_claims). Replicas: spec.replicas (default 1) for
 * apps kinds, spec.parallelism (default 1) for Job and CronJob, unknown for DaemonSet.
 * Anything else — other kinds, DELETE/CONNECT, subresources, missing or odd-typed fields — is
 * allowed without warnings.
 *
 * Pure given the snapshot: no I/O, no globals (apart from malloc_trim(), below, and, for
 * ADMISSION_PARSE_FULL only, the tokener core/json/tree.h keeps per calling thread); thread-safe
 * on distinct results.
 */
#ifndef GPUTRI_WEBHOOK_ADMISSION_H
#define GPUTRI_WEBHOOK_ADMISSION_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "snapshot.h"
#include "warnings.h"

/*
 * Bounded work per request. The body (at most the server's max_body, 3 MiB by default, the API
 * server's own limit) is first validated in one pass without allocating, and the tree json-c
 * would build for it priced, by core/json/scan.h (strict RFC 8259; its cost model, in estimated
 * bytes of json-c tree), with at most ADMISSION_MAX_DEPTH nested containers. Only then is the
 * tree built (core/json/tree.h), with request.object and request.oldObject priced apart:
 *   - request.oldObject is never read and always parsed as null;
 *   - request.object above ADMISSION_MAX_OBJECT_COST is parsed as null and the answer is allowed
 *     with one warning (WARN_REASON_NOT_CHECKED) saying the object was too large to check (for
 *     the kinds checked, on CREATE/UPDATE);
 *   - the rest of the review above ADMISSION_MAX_ENVELOPE_COST is refused (K_EPARSE; the API
 *     server builds that part itself and never comes near it).
 * So one request holds at most the body buffer (the server's, 4 MiB for a 3 MiB body), the copy
 * of the text the tree is built from (at most the body's bytes; inside struct json_tree up to
 * JSON_TREE_STACK_TEXT), the tree (ADMISSION_MAX_OBJECT_COST + ADMISSION_MAX_ENVELOPE_COST),
 * with ADMISSION_PARSE_FULL json-c's string buffer (up to twice the largest string) and the pod
 * projection (at most the body's bytes plus the capped lists of core/kube/project.h): about
 * 23 MiB whatever the body; measured worst 9 MiB (bench/webhook-adversarial, BENCHMARKS.md).
 * After a request whose tree was above ADMISSION_TRIM_ABOVE, malloc_trim(0) returns the freed
 * pages to the system. CPU: the scan is linear; the checks run on the capped projection
 * (warnings.h wh_check_pod_spec; at most WH_MAX_NODE_CHECK_GPU_RESOURCES distinct GPU resources
 * reach the node checks), at most about 50 ms against 5,000 nodes (measured 49 ms at every
 * cap), plus the DRA device matching, bounded by WH_DRA_MAX_MATCHED alternatives and
 * WH_DRA_MAX_WORK units per object (about half a second at most) and its selectors by
 * WH_DRA_MAX_CEL_STEPS CEL steps (about 126 ms; warnings.h), and by wh_snapshot.cel_deadline_ns
 * when the caller sets one (the server: half the API server's timeout after the body arrived).
 * Which thread runs a review, and what a review that waited too long is answered: server.h.
 */
#define ADMISSION_MAX_DEPTH 64 /* nested objects and arrays */
#define ADMISSION_MAX_OBJECT_COST (8u << 20)
#define ADMISSION_MAX_ENVELOPE_COST (1u << 20)
#define ADMISSION_TRIM_ABOVE (1u << 20)

/*
 * Parsing only what the checks read. The validating pass above also finds, by member name, the
 * members the checks never read (a schema in admission.c: the envelope but apiVersion, kind and
 * request's uid, kind, subResource, name, namespace, operation, dryRun, object; in the object:
 * apiVersion, kind, of metadata name, namespace, generateName, uid, the timestamps,
 * ownerReferences and the annotations gputri/cause, gputri/detail and
 * resource.kubernetes.io/pod-claim-name, and of the spec only the fields core/kube/project.c
 * and the checks read: containers' and initContainers' name, resources and restartPolicy,
 * overhead, affinity.nodeAffinity, tolerations, nodeSelector, nodeName, schedulerName,
 * runtimeClassName, resourceClaims, schedulingGates; replicas, parallelism, template,
 * jobTemplate; hard; devices; spec.spec), and the json-c tree is built from the text without
 * them: a typical Pod review becomes a tree of a fraction of its values. The tree is built
 * straight from the text as json-c's tokener would build it (core/json/tree.h); with
 * ADMISSION_PARSE_FULL it is json-c's tokener on the whole text. At most JSON_SCAN_MAX_CUTS
 * members are cut per request; after that the rest is parsed as before, within the same cost
 * budget. The budgets above are computed on the whole text, so what is refused or not checked
 * does not change. The warnings are the same as with the whole tree
 * (tests/unit/webhook/test_admission.c and tests/fuzz/fuzz_admission.c compare both;
 * tests/fuzz/fuzz_json.c the trees themselves). request, request.object and request.oldObject
 * may each occur once (a second is K_EPARSE): the checks must read the member the API server
 * meant.
 */
/* admission_handle_ex() flag: build the tree of every member, as before the pruning (for
 * tests and benchmarks that compare). */
#define ADMISSION_PARSE_FULL 1u

/* Bytes of the longest answer: the envelope, a 128-byte uid and WARN_MAX_ITEMS warnings of
 * WARN_ITEM_MAX bytes, each byte escaped to at most 6 (\u00XX). */
#define ADMISSION_RESPONSE_MAX (256 + WARN_MAX_ITEMS * (6 * WARN_ITEM_MAX + 4))

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
    char created[40]; /* metadata.creationTimestamp of request.object ("" when none) */
    char operation[16];
};

/*
 * admission_handle() - decode `body` (len bytes, need not be NUL-terminated), run the checks
 * against `snap`, encode the response. Returns:
 *   K_OK      response set (HTTP 200), warnings and the object's identity filled;
 *   K_OK      also when request.object is over its budget (one warning, no checks);
 *   K_EPARSE  not an AdmissionReview we can answer: JSON that is not strict RFC 8259 (see
 *             above: invalid UTF-8, NaN, trailing commas, ...), nesting above
 *             ADMISSION_MAX_DEPTH, trailing garbage, the envelope over its budget, a duplicate
 *             request, request.object or request.oldObject member, apiVersion other than
 *             admission.k8s.io/v1, kind other than AdmissionReview, no request object or no
 *             request.uid (answer HTTP 400 with `error`);
 *   K_ENOMEM.
 * Call admission_result_cleanup() in every case.
 */
int admission_handle(const char *body, size_t len, const struct wh_snapshot *snap,
                     struct admission_result *out);

/*
 * admission_handle_ex() - admission_handle() with `flags`: 0, or ADMISSION_PARSE_FULL to build
 * the json-c tree of every member (the warnings are the same; it only costs more).
 */
int admission_handle_ex(const char *body, size_t len, const struct wh_snapshot *snap,
                        unsigned flags, struct admission_result *out);

/* What admission_check_object() checks an object as. */
enum admission_check_as {
    ADMISSION_CHECK_CREATE, /* request.object of a CREATE */
    ADMISSION_CHECK_UPDATE, /* request.object of an UPDATE: no check reading current usage (the
                             * quota left), no ResourceClaim or ResourceClaimTemplate checks
                             * (their spec is immutable) */
    /* the object as the API server stored it after its CREATE, read back: the CREATE checks but
     * those reading current usage, which by then holds the object itself (the ResourceQuota
     * admission plugin charges a pod's requests to status.used before it is stored,
     * kubernetes/kubernetes: staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/
     * controller.go; a workload's pods may be created and charged already), so "has N left"
     * would count it twice */
    ADMISSION_CHECK_STORED,
};

/*
 * admission_check_object() - the checks admission_handle() runs on request.object, on `obj`
 * (borrowed): a review's object, or the same object as the API server stored it
 * (event_verify.h reads it back and checks it again, so that its Events say what the stored
 * object draws, never what a review claimed). `group` ("" for the core group), `version` (NULL
 * when unknown) and `kind` as in request.kind; `ns` the object's namespace (NULL: none); `as`
 * what the object is checked as (above). Appends the warnings to *out (warnings.h bounds); a
 * kind not checked (admission.h's list), a NULL obj or a spec the checks cannot read appends
 * nothing. Returns K_OK or K_ENOMEM. Bounded and pure as admission_handle's checks (same CPU
 * bounds, the snapshot's cel_deadline_ns); thread-safe on distinct warning lists.
 */
int admission_check_object(const char *group, const char *version, const char *kind, const char *ns,
                           enum admission_check_as as, json_object *obj,
                           const struct wh_snapshot *snap, struct warn_list *out);

/* admission_result_cleanup() - free the response. Idempotent. */
void admission_result_cleanup(struct admission_result *r);

#endif
