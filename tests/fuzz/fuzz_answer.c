/*
 * fuzz_answer.c - libFuzzer target for the CLI's reading of gputri-controller's answer on a pod
 * (cli/answer.c), what `gputri triage|explain` and `kubectl gputri explain` fall back to when a
 * live classification is forbidden: the pod as the API server returns it to
 * kube_get_managed_fields (read under core/kube/read_budget.h's KUBE_READ_OBJECT_MANAGED_FIELDS,
 * managedFields kept), its projection (cache/store.h), the annotation's usability, and when the
 * controller wrote it, from metadata.managedFields (answer_written_from_managed_fields); then the
 * explain and fallback texts printed from it.
 *
 * Input: the pod's JSON text (seeds: the pods of tests/fixtures/classify with a managedFields
 * list, and corpus/answer/). The pod is looked up by its own namespace and name. Besides the
 * sanitizers: K_OK or K_ENOMEM; the same answer twice; no answer without a word of the ladder,
 * and then no detail and no time; cause and detail terminated within their buffers; a time is
 * the time of one of the first ANSWER_MANAGED_FIELDS_MAX entries of the controller owning
 * f:gputri/cause, and json-c's whole tree of the same text gives the same time; the printed texts
 * hold no control character but their line ends (the pod's text is escaped for the terminal).
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "classify/classify.h"
#include "fuzz_input.h"
#include "json/tree.h"
#include "kube/json.h"
#include "kube/read_budget.h"
#include "model/gpu.h"
#include "util/clock.h"
#include "util/result.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW 1800000000

static struct gpu_set gpus;

static void need(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_answer: %s\n", what);
        abort();
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    need(gpu_set_parse(&gpus, GPU_SET_DEFAULT) == K_OK, "no GPU set");
    return 0;
}

/* Whether `t` is the time of one of the first ANSWER_MANAGED_FIELDS_MAX managedFields entries of
 * the controller that own f:gputri/cause. */
static bool time_of_an_entry(json_object *pod, int64_t t)
{
    json_object *meta = kube_json_get(pod, "metadata", json_type_object);
    json_object *mf = kube_json_get(meta, "managedFields", json_type_array);
    size_t n = mf ? json_object_array_length(mf) : 0;
    for (size_t i = 0; i < n && i < ANSWER_MANAGED_FIELDS_MAX; i++) {
        json_object *e = json_object_array_get_idx(mf, i);
        const char *m = kube_json_str(e, "manager"), *ts = kube_json_str(e, "time");
        json_object *f = kube_json_get(e, "fieldsV1", json_type_object);
        f = kube_json_get(f, "f:metadata", json_type_object);
        f = kube_json_get(f, "f:annotations", json_type_object);
        int64_t et = 0;
        if (m && strcmp(m, POD_ANNOTATION_MANAGER) == 0 &&
            kube_json_field(f, "f:" POD_ANNOTATION_CAUSE) && ts && clock_parse_rfc3339(ts, &et) &&
            et == t)
            return true;
    }
    return false;
}

/* The text printed holds no control character but '\n'. */
static void check_printed(char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)buf[i];
        need(c == '\n' || (c >= 0x20 && c != 0x7f), "a control character printed");
    }
    free(buf);
}

static void print(const char *ns, const char *name, const struct pod_answer *a)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return;
    need(answer_print_explain(f, ns, name, a, NOW) == K_OK, "answer_print_explain failed");
    answer_print_fallback(f, "gputri", a, "nodes", NOW);
    fclose(f);
    check_printed(buf, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256 * 1024)
        return 0;
    struct json_tree t;
    char err[256];
    int rc = kube_read_parse(&t, KUBE_READ_OBJECT_MANAGED_FIELDS, (const char *)data, size, err,
                             sizeof(err));
    need(rc == K_OK || rc == K_EPARSE || rc == K_ETOOBIG || rc == K_ENOMEM, "kube_read_parse code");
    if (rc != K_OK) {
        json_tree_free(&t);
        return 0;
    }
    json_object *pod = t.root;
    json_object *meta = kube_json_get(pod, "metadata", json_type_object);
    const char *ns = kube_json_str(meta, "namespace"), *name = kube_json_str(meta, "name");
    struct pod_answer a, again;
    rc = pod_answer_from_object(&gpus, ns ? ns : "", name ? name : "", pod, &a);
    need(rc == K_OK || rc == K_ENOMEM, "pod_answer_from_object code");
    if (rc == K_OK) {
        need(pod_answer_from_object(&gpus, ns ? ns : "", name ? name : "", pod, &again) == K_OK &&
                 memcmp(&a, &again, sizeof(a)) == 0,
             "not the same answer twice");
        need(memchr(a.cause, 0, sizeof(a.cause)) && memchr(a.detail, 0, sizeof(a.detail)),
             "cause or detail not terminated");
        if (!a.cause[0])
            need(!a.detail[0] && a.written == 0, "a detail or a time without a word");
        else
            need(cause_from_word(a.cause) >= 0, "an answer that is not a word of the ladder");
        need(a.written >= 0, "a negative time");
        if (a.written)
            need(time_of_an_entry(pod, a.written),
                 "the time is not that of one of the controller's entries");
        print(ns ? ns : "", name ? name : "", &a);
    }
    /* the managedFields reader on json-c's whole tree of the same text */
    int64_t w =
        answer_written_from_managed_fields(pod, POD_ANNOTATION_MANAGER, POD_ANNOTATION_CAUSE);
    json_object *whole = fuzz_json(data, size);
    if (whole) {
        need(answer_written_from_managed_fields(whole, POD_ANNOTATION_MANAGER,
                                                POD_ANNOTATION_CAUSE) == w,
             "the budgeted and the whole tree give another time");
        json_object_put(whole);
    }
    json_tree_free(&t);
    return 0;
}
