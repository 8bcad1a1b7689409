/* answer.c - the controller's answer on a pod, when a live classification is forbidden. */
#include "answer.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "cache/store.h"
#include "classify/classify.h"
#include "kube/json.h"
#include "util/clock.h"
#include "util/duration.h"
#include "util/escape.h"
#include "util/result.h"
#include "pods.h"

/* Whether a cause is one of the after-placement words (classify/placement.h). */
static bool after_placement(const char *cause)
{
    int c = cause_from_word(cause);
    return c == CAUSE_RUNTIME_MISSING || c == CAUSE_IMAGE_PULL_FAILED ||
           c == CAUSE_CONTAINER_START_FAILED;
}

bool pod_annotation_usable(const struct kpod *p)
{
    if (!p->cause || !*p->cause)
        return false;
    if (!p->node_name) /* words of a bound pod cannot stand for one that is not (forged, or stale)
                        */
        return !after_placement(p->cause) && strcmp(p->cause, cause_word(CAUSE_OK)) != 0 &&
               strcmp(p->cause, cause_word(CAUSE_NODE_REJECTED)) != 0;
    if (store_is_starting_gpu_pod(p))
        return after_placement(p->cause);
    return strcmp(p->cause, cause_word(CAUSE_OK)) == 0 ||
           (strcmp(p->cause, cause_word(CAUSE_NODE_REJECTED)) == 0 && pod_rejected_by_kubelet(p));
}

int64_t answer_written_from_managed_fields(json_object *pod, const char *manager, const char *key)
{
    json_object *meta = kube_json_get(pod, "metadata", json_type_object);
    json_object *mf = kube_json_get(meta, "managedFields", json_type_array);
    if (!mf)
        return 0;
    char fkey[256];
    if ((size_t)snprintf(fkey, sizeof(fkey), "f:%s", key) >= sizeof(fkey))
        return 0;
    size_t n = json_object_array_length(mf);
    if (n > ANSWER_MANAGED_FIELDS_MAX)
        n = ANSWER_MANAGED_FIELDS_MAX;
    int64_t best = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(mf, i);
        const char *m = kube_json_str(e, "manager");
        if (!m || strcmp(m, manager) != 0)
            continue;
        json_object *f = kube_json_get(e, "fieldsV1", json_type_object);
        f = kube_json_get(f, "f:metadata", json_type_object);
        f = kube_json_get(f, "f:annotations", json_type_object);
        if (!kube_json_field(f, fkey))
            continue;
        int64_t t = 0;
        const char *ts = kube_json_str(e, "time");
        /* one manager may own the key in more than one entry (operations): the newest wins */
        if (ts && clock_parse_rfc3339(ts, &t) && t > best)
            best = t;
    }
    return best;
}

int pod_answer_from_object(const struct gpu_set *gpus, const char *ns, const char *name,
                           json_object *pod, struct pod_answer *a)
{
    memset(a, 0, sizeof(*a));
    struct store *s = store_new(gpus);
    if (!s)
        return K_ENOMEM;
    unsigned changed = 0;
    int rc = store_pod_apply_json(s, pod, 0, NULL, &changed);
    if (rc == K_OK) {
        const struct kpod *p = store_pod_get(s, ns, name);
        if (p && pod_annotation_usable(p) && cause_from_word(p->cause) >= 0) {
            snprintf(a->cause, sizeof(a->cause), "%s", p->cause);
            snprintf(a->detail, sizeof(a->detail), "%s", p->detail ? p->detail : "");
            a->written = answer_written_from_managed_fields(pod, POD_ANNOTATION_MANAGER,
                                                            POD_ANNOTATION_CAUSE);
        }
    } else if (rc != K_ENOMEM) {
        rc = K_OK; /* a pod past the projection's bounds carries no answer we can use */
    }
    store_free(s);
    return rc;
}

int pod_answer_read(struct kube_client *c, const struct gpu_set *gpus, const char *ns,
                    const char *name, struct pod_answer *a, struct kube_error *err)
{
    memset(a, 0, sizeof(*a));
    char path[KUBE_POD_PATH_MAX];
    if (kube_pod_path(ns, name, path, sizeof(path)))
        return K_EINVAL;
    json_object *pod = NULL;
    int rc = kube_get_managed_fields(c, path, &pod, err);
    if (rc)
        return rc;
    rc = pod_answer_from_object(gpus, ns, name, pod, a);
    json_object_put(pod);
    return rc;
}

void answer_forbidden_resource(const char *message, char *out, size_t len)
{
    if (!len)
        return;
    out[0] = '\0';
    /* the API server's Forbidden message: ... cannot <verb> resource "<resource>" in API group
       "<group>" ... (kubernetes/kubernetes: staging/src/k8s.io/apiserver/pkg/endpoints/handlers/
       responsewriters/errors.go ForbiddenStatusError) */
    const char *at = message ? strstr(message, "resource \"") : NULL;
    if (!at)
        return;
    at += strlen("resource \"");
    size_t n = 0;
    while (at[n] && at[n] != '"' && n < 63)
        n++;
    if (at[n] != '"')
        return;
    char raw[64];
    memcpy(raw, at, n);
    raw[n] = '\0';
    text_escape(out, len, raw, n, TEXT_ESCAPE_TERMINAL);
}

static void age_of(const struct pod_answer *a, int64_t now, char *out, size_t len)
{
    if (!a->written) {
        snprintf(out, len, "-");
        return;
    }
    char age[DURATION_HUMAN_MAX];
    duration_human(now - a->written, age, sizeof(age));
    snprintf(out, len, "%s ago", age);
}

void answer_print_fallback(FILE *err_out, const char *prog, const struct pod_answer *a,
                           const char *resource, int64_t now)
{
    char age[DURATION_HUMAN_MAX + 8];
    age_of(a, now, age, sizeof(age));
    fprintf(err_out,
            "%s: %s is forbidden for you: the answer gputri-controller wrote on the pod (%s, "
            "written %s); a live classification needs read access to nodes (the ClusterRole "
            "gputri-viewer grants what it reads, docs/cli.md)\n",
            prog, resource && *resource ? resource : "a cluster-scoped resource",
            POD_ANNOTATION_CAUSE, a->written ? age : "when: not known");
}

int answer_print_explain(FILE *out, const char *ns, const char *name, const struct pod_answer *a,
                         int64_t now)
{
    char esc_ns[512], esc_name[1024], esc_detail[ANSWER_DETAIL_MAX * 4];
    text_escape(esc_ns, sizeof(esc_ns), ns, strlen(ns), TEXT_ESCAPE_TERMINAL);
    text_escape(esc_name, sizeof(esc_name), name, strlen(name), TEXT_ESCAPE_TERMINAL);
    text_escape(esc_detail, sizeof(esc_detail), a->detail, strlen(a->detail), TEXT_ESCAPE_TERMINAL);
    char when[CLOCK_RFC3339_MAX], age[DURATION_HUMAN_MAX + 8];
    if (a->written)
        clock_format_rfc3339(a->written * 1000, false, when, sizeof(when));
    else
        snprintf(when, sizeof(when), "-");
    age_of(a, now, age, sizeof(age));
    fprintf(out,
            "Pod:      %s/%s\n"
            "Cause:    %s\n"
            "Detail:   %s\n"
            "Written:  %s%s%s%s\n"
            "Source:   the %s and %s annotations gputri-controller wrote; the nodes were not "
            "read, so there is no per-node table\n",
            esc_ns, esc_name, a->cause, esc_detail[0] ? esc_detail : "-", when,
            a->written ? " (" : "", a->written ? age : "", a->written ? ")" : "",
            POD_ANNOTATION_CAUSE, POD_ANNOTATION_DETAIL);
    return ferror(out) ? K_EIO : K_OK;
}

int answer_explain_json(const char *ns, const char *name, const struct pod_answer *a,
                        json_object **out)
{
    json_object *o = json_object_new_object(), *meta = json_object_new_object(),
                *st = json_object_new_object();
    if (!o || !meta || !st) {
        json_object_put(o);
        json_object_put(meta);
        json_object_put(st);
        return K_ENOMEM;
    }
    json_object_object_add(o, "apiVersion", json_object_new_string(PODS_API_VERSION));
    json_object_object_add(o, "kind", json_object_new_string("GPUPodExplanation"));
    json_object_object_add(o, "metadata", meta);
    json_object_object_add(meta, "name", json_object_new_string(name));
    json_object_object_add(meta, "namespace", json_object_new_string(ns));
    json_object_object_add(o, "status", st);
    json_object_object_add(st, "cause", json_object_new_string(a->cause));
    if (a->detail[0])
        json_object_object_add(st, "detail", json_object_new_string(a->detail));
    json_object_object_add(st, "annotationCause", json_object_new_string(a->cause));
    if (a->detail[0])
        json_object_object_add(st, "annotationDetail", json_object_new_string(a->detail));
    json_object_object_add(st, "source", json_object_new_string("annotation"));
    if (a->written) {
        char when[CLOCK_RFC3339_MAX];
        clock_format_rfc3339(a->written * 1000, false, when, sizeof(when));
        json_object_object_add(st, "written", json_object_new_string(when));
    }
    *out = o;
    return K_OK;
}

/* The answer's report in pr's format to out; false (said on err_out) when it cannot be made. */
static bool print_explain_as(const struct printer *pr, const char *ns, const char *name,
                             const struct pod_answer *a, const char *prog, FILE *out, FILE *err_out)
{
    json_object *o = NULL;
    char why[512] = "";
    int rc = answer_explain_json(ns, name, a, &o);
    if (rc == K_OK)
        rc = printer_write_item(pr, o, out, why, sizeof(why));
    json_object_put(o);
    if (rc)
        fprintf(err_out, "%s: %s\n", prog, why[0] ? why : k_strerror(rc));
    return rc == K_OK;
}

enum answer_outcome answer_fallback(struct kube_client *c, const struct gpu_set *gpus,
                                    const char *ns, const char *name, bool explain,
                                    const struct printer *pr, const char *prog,
                                    const struct kube_error *forbidden, FILE *out, FILE *err_out)
{
    struct pod_answer a;
    struct kube_error err = {0};
    if (pod_answer_read(c, gpus, ns, name, &a, &err) != K_OK)
        return ANSWER_UNREAD;
    char resource[256];
    answer_forbidden_resource(forbidden->message, resource, sizeof(resource));
    int64_t now = (int64_t)time(NULL);
    if (!a.cause[0]) {
        fprintf(err_out,
                "%s: %s is forbidden for you and the pod carries no answer of gputri-controller "
                "(no usable %s annotation: is the controller running?); a live classification "
                "needs read access to nodes (the ClusterRole gputri-viewer, docs/cli.md)\n",
                prog, resource[0] ? resource : "a cluster-scoped resource", POD_ANNOTATION_CAUSE);
        return ANSWER_NONE;
    }
    if (explain && pr) {
        if (!print_explain_as(pr, ns, name, &a, prog, out, err_out))
            return ANSWER_NONE;
    } else if (explain)
        answer_print_explain(out, ns, name, &a, now);
    else
        fprintf(out, "%s\n", a.cause);
    answer_print_fallback(err_out, prog, &a, resource, now);
    return ANSWER_PRINTED;
}
