/*
 * test_placement.c - the after-placement steps (core/classify/placement.c) through classify():
 * bound GPU pods whose statuses and kubelet Events are written as the kubelet and the runtimes
 * write them (the exact strings of the upstream sources core/classify/placement.h cites:
 * kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go and
 * pkg/kubelet/images/image_manager.go, containerd CRI, CRI-O, NVIDIA/libnvidia-container's
 * nvidia-container-cli, NVIDIA/nvidia-container-toolkit's CDI mode), projected from JSON as the
 * controller reads them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "classify/classify.h"
#include "classify/placement.h"
#include "gpus.h"
#include "kube/project.h"
#include "model/containers.h"
#include "util/result.h"

#define HOOK_PREFIX                                                                                \
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: "    \
    "runc create failed: unable to start container process: error during container init: error "   \
    "running prestart hook #0: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"  \
    "nvidia-container-cli: "

static const char *const driver_not_loaded =
    HOOK_PREFIX "initialization error: nvml error: driver not loaded: unknown";
static const char *const libnvml_missing =
    HOOK_PREFIX "initialization error: load library failed: libnvidia-ml.so.1: cannot open "
                "shared object file: no such file or directory: unknown";
static const char *const cuda_requirement =
    HOOK_PREFIX "requirement error: unsatisfied condition: cuda>=12.8, please update your driver "
                "to a newer version, or use an earlier cuda container: unknown";
static const char *const ldcache = HOOK_PREFIX "ldcache error: open failed: /sbin/ldconfig.real: "
                                               "no such file or directory: unknown";
static const char *const cdi_create =
    "failed to create containerd container: CDI device injection failed: unresolvable CDI "
    "devices nvidia.com/gpu=GPU-4e1a9c2b";

struct world {
    struct kpod pod;
    struct knode node;
    const struct knode *nodes[1];
    struct placement_event events[4];
    struct placement_facts facts;
    struct classify_input in;
    struct classify_result out;
};

/* A pod bound to node-a, two containers: "cuda" asks nvidia.com/gpu, "side" asks nothing. */
static json_object *pod_json(const char *runtime_class)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"ml\",\"name\":\"train\",\"uid\":\"u1\"},"
             "\"spec\":{\"nodeName\":\"node-a\",%s%s%s\"containers\":["
             "{\"name\":\"cuda\",\"image\":\"nvcr.io/nvidia/cuda:12.8\","
             "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}},"
             "{\"name\":\"side\",\"image\":\"busybox\"}]},"
             "\"status\":{\"phase\":\"Pending\"}}",
             runtime_class ? "\"runtimeClassName\":\"" : "", runtime_class ? runtime_class : "",
             runtime_class ? "\"," : "");
    json_object *o = json_tokener_parse(text);
    assert_non_null(o);
    return o;
}

/* Set status.containerStatuses[] of the pod JSON: a JSON array text. */
static void set_statuses(json_object *pod, const char *array, const char *phase)
{
    json_object *st = json_object_object_get(pod, "status");
    json_object_object_add(st, "containerStatuses", json_tokener_parse(array));
    json_object_object_add(st, "phase", json_object_new_string(phase));
}

static char *waiting_json(const char *name, const char *reason, const char *message)
{
    json_object *c = json_object_new_object();
    json_object_object_add(c, "name", json_object_new_string(name));
    json_object *w = json_object_new_object();
    json_object_object_add(w, "reason", json_object_new_string(reason));
    if (message)
        json_object_object_add(w, "message", json_object_new_string(message));
    json_object *state = json_object_new_object();
    json_object_object_add(state, "waiting", w);
    json_object_object_add(c, "state", state);
    json_object_object_add(c, "ready", json_object_new_boolean(false));
    json_object_object_add(c, "started", json_object_new_boolean(false));
    json_object_object_add(c, "restartCount", json_object_new_int(0));
    char *s = strdup(json_object_to_json_string(c));
    json_object_put(c);
    return s;
}

/* CrashLoopBackOff after a failed start (StartError, exit 128), as containerd's CRI leaves it. */
static char *start_error_json(const char *name, const char *last_reason, int code,
                              const char *message)
{
    json_object *c = json_object_new_object();
    json_object_object_add(c, "name", json_object_new_string(name));
    json_object *w = json_object_new_object();
    json_object_object_add(w, "reason", json_object_new_string("CrashLoopBackOff"));
    json_object_object_add(
        w, "message",
        json_object_new_string("back-off 40s restarting failed container=cuda pod=train_ml(u1)"));
    json_object *state = json_object_new_object();
    json_object_object_add(state, "waiting", w);
    json_object_object_add(c, "state", state);
    json_object *t = json_object_new_object();
    json_object_object_add(t, "reason", json_object_new_string(last_reason));
    json_object_object_add(t, "exitCode", json_object_new_int(code));
    json_object_object_add(t, "message", json_object_new_string(message));
    json_object *last = json_object_new_object();
    json_object_object_add(last, "terminated", t);
    json_object_object_add(c, "lastState", last);
    json_object_object_add(c, "started", json_object_new_boolean(false));
    json_object_object_add(c, "restartCount", json_object_new_int(3));
    char *s = strdup(json_object_to_json_string(c));
    json_object_put(c);
    return s;
}

static const char *const running_side =
    "{\"name\":\"side\",\"state\":{\"running\":{\"startedAt\":\"2026-01-01T00:00:00Z\"}},"
    "\"started\":true,\"restartCount\":0}";

/* Project `pod` (consumed) and classify it with the node and `n` events. */
static void run(struct world *w, json_object *pod, size_t n)
{
    assert_int_equal(project_pod(pod, &test_gpus, &w->pod), K_OK);
    json_object_put(pod);
    w->node.name = "node-a";
    w->nodes[0] = &w->node;
    w->facts = (struct placement_facts){.events = w->events, .n_events = n};
    w->in = (struct classify_input){
        .pod = &w->pod, .nodes = w->nodes, .n_nodes = 1, .placement = &w->facts};
    w->out.verdicts = NULL;
    assert_int_equal(classify(&w->in, &w->out), K_OK);
}

static void done(struct world *w)
{
    pod_cleanup(&w->pod);
}

static char *two(const char *a, const char *b)
{
    char *s = malloc(strlen(a) + strlen(b) + 4);
    sprintf(s, "[%s,%s]", a, b);
    return s;
}

static void with_statuses(json_object *pod, char *gpu, const char *other, const char *phase)
{
    char *arr = two(gpu, other);
    set_statuses(pod, arr, phase);
    free(arr);
    free(gpu);
}

static void test_projection(void **state)
{
    (void)state;
    struct world w = {0};
    json_object *pod = pod_json(NULL);
    with_statuses(pod, start_error_json("cuda", "StartError", 128, driver_not_loaded), running_side,
                  "Running");
    assert_int_equal(project_pod(pod, &test_gpus, &w.pod), K_OK);
    json_object_put(pod);
    const struct pod_containers *cs = w.pod.containers;
    assert_non_null(cs);
    assert_int_equal(cs->n, 2);
    assert_string_equal(cs->items[0].name, "cuda");
    assert_true(cs->items[0].gpu_resource);
    assert_false(cs->items[1].gpu_resource);
    assert_string_equal(cs->items[0].waiting_reason, "CrashLoopBackOff");
    assert_string_equal(cs->items[0].last_reason, "StartError");
    assert_int_equal(cs->items[0].last_exit_code, 128);
    assert_int_equal(cs->items[0].restarts, 3);
    assert_false(container_started_once(&cs->items[0]));
    assert_true(container_started_once(&cs->items[1]));
    assert_false(pod_gpu_containers_started(&w.pod, false));
    done(&w);
}

/*
 * Classify the pod (RuntimeClass `rc`; its GPU container's status `gpu`, owned, beside the
 * sidecar's `side`, in phase `phase`; no statuses at all when gpu is NULL) with the kubelet
 * Events ev[0..n), and check the word and up to two fragments of the detail (NULL: none).
 */
static void expect_word(const char *rc, char *gpu, const char *side, const char *phase,
                        const struct placement_event *ev, size_t n, enum cause want,
                        const char *has1, const char *has2)
{
    struct world w = {0};
    json_object *pod = pod_json(rc);
    if (gpu)
        with_statuses(pod, gpu, side, phase);
    for (size_t i = 0; i < n; i++)
        w.events[i] = ev[i];
    run(&w, pod, n);
    if (w.out.cause != want || (has1 && !strstr(w.out.detail, has1)) ||
        (has2 && !strstr(w.out.detail, has2)))
        fail_msg("%s: %s", cause_word(w.out.cause), w.out.detail);
    done(&w);
}

#define SANDBOX_PREFIX "Failed to create pod sandbox: rpc error: code = Unknown desc = "

static void test_runtime_missing(void **state)
{
    (void)state;
    const struct placement_event containerd = {
        "FailedCreatePodSandBox",
        SANDBOX_PREFIX "failed to get sandbox runtime: no runtime for \"nvidia\" is configured",
        100};
    expect_word(
        "nvidia", waiting_json("cuda", "ContainerCreating", NULL),
        "{\"name\":\"side\",\"state\":{\"waiting\":{\"reason\":\"ContainerCreating\"}}}", "Pending",
        &containerd, 1, CAUSE_RUNTIME_MISSING,
        "node node-a: the container runtime has no handler \"nvidia\" (RuntimeClass nvidia)",
        "no runtime for \"nvidia\" is configured");
    /* CRI-O; no statuses yet: the kubelet has written none */
    const struct placement_event crio = {"FailedCreatePodSandBox",
                                         SANDBOX_PREFIX "failed to find runtime handler nvidia "
                                                        "from runtime list map[crun:0xc000 "
                                                        "runc:0xc001]",
                                         100};
    expect_word("nvidia", NULL, NULL, NULL, &crio, 1, CAUSE_RUNTIME_MISSING,
                "no handler \"nvidia\"", NULL);
    const struct placement_event old = {
        "FailedCreatePodSandBox", SANDBOX_PREFIX "RuntimeHandler \"nvidia\" not supported", 100};
    expect_word(NULL, NULL, NULL, NULL, &old, 1, CAUSE_RUNTIME_MISSING,
                "the pod has no runtimeClassName", NULL);
    /* a sandbox failure for another reason is no runtime-missing; nothing else is ours: ok */
    const struct placement_event cni = {
        "FailedCreatePodSandBox",
        SANDBOX_PREFIX "failed to setup network for sandbox: plugin type=\"calico\" failed", 100};
    expect_word(NULL, NULL, NULL, NULL, &cni, 1, CAUSE_OK, "bound to node node-a", NULL);
}

static void test_image_pull(void **state)
{
    (void)state;
    const struct placement_event ev[2] = {
        {"Failed",
         "Failed to pull image \"nvcr.io/nvidia/cuda:12.8\": failed to pull and unpack image "
         "\"nvcr.io/nvidia/cuda:12.8\": failed to extract layer sha256:ab12: write "
         "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots/51/fs/usr/lib/"
         "libcublas.so.12: no space left on device",
         100},
        {"Failed", "Error: ImagePullBackOff", 120},
    };
    expect_word(NULL,
                waiting_json("cuda", "ImagePullBackOff",
                             "Back-off pulling image \"nvcr.io/nvidia/cuda:12.8\""),
                running_side, "Pending", ev, 2, CAUSE_IMAGE_PULL_FAILED,
                "container cuda on node node-a cannot pull its image (ImagePullBackOff): "
                "Failed to pull image",
                "no space left on device; the node's image filesystem is full");
    /* no Event: the waiting message */
    expect_word(NULL,
                waiting_json("cuda", "ErrImagePull",
                             "failed to pull and unpack image \"nvcr.io/nim/llama:1\": failed "
                             "to resolve reference: pull access denied, insufficient_scope: "
                             "authorization failed"),
                running_side, "Pending", NULL, 0, CAUSE_IMAGE_PULL_FAILED, "insufficient_scope",
                "imagePullSecret");
    /* the sidecar's image does not pull: not a GPU container, not ours */
    char *side = waiting_json("side", "ErrImagePull", "not found");
    expect_word(NULL, strdup("{\"name\":\"cuda\",\"state\":{\"running\":{}},\"started\":true}"),
                side, "Pending", NULL, 0, CAUSE_OK, NULL, NULL);
    free(side);
}

static void expect_start(const char *message, const char *hint, bool with_labels, const char *also)
{
    struct world w = {0};
    json_object *pod = pod_json(NULL);
    with_statuses(pod, start_error_json("cuda", "StartError", 128, message), running_side,
                  "Running");
    struct kv labels[] = {{"nvidia.com/cuda.driver-version.full", "535.104.05"},
                          {"nvidia.com/cuda.runtime-version.full", "12.2"}};
    assert_int_equal(project_pod(pod, &test_gpus, &w.pod), K_OK);
    json_object_put(pod);
    w.node.name = "node-a";
    if (with_labels)
        w.node.labels = (struct kv_list){labels, 2};
    w.nodes[0] = &w.node;
    w.in = (struct classify_input){.pod = &w.pod, .nodes = w.nodes, .n_nodes = 1};
    assert_int_equal(classify(&w.in, &w.out), K_OK);
    assert_int_equal(w.out.cause, CAUSE_CONTAINER_START_FAILED);
    if (!strstr(w.out.detail, hint) || (also && !strstr(w.out.detail, also)))
        fail_msg("detail: %s", w.out.detail);
    assert_non_null(strstr(w.out.detail, "container cuda on node node-a failed to start: "));
    done(&w);
}

static void test_start_driver_not_loaded(void **state)
{
    (void)state;
    expect_start(driver_not_loaded, "driver not loaded", false, "nvml error: driver not loaded");
    expect_start(libnvml_missing, "driver not loaded", false, "libnvidia-ml.so.1");
}

static void test_start_cuda_requirement(void **state)
{
    (void)state;
    expect_start(cuda_requirement, "CUDA requirement above the node's driver", true,
                 "requires CUDA >= 12.8 but node node-a's driver 535.104.05 supports CUDA 12.2");
    expect_start(cuda_requirement, "requires CUDA >= 12.8, more than node node-a's driver", false,
                 NULL);
}

static void test_start_toolkit_other(void **state)
{
    (void)state;
    expect_start(ldcache, "toolkit hook error", false, "ldcache error");
}

/* Runtime-native CDI fails at create: CreateContainerError, the message in the status. */
/* Runtime-native CDI fails at create (CreateContainerError, the message in the status);
 * RunContainerError without a message: the kubelet's "Error: " Event tells. */
static void test_create_and_run_errors(void **state)
{
    (void)state;
    expect_word(NULL, waiting_json("cuda", "CreateContainerError", cdi_create), running_side,
                "Pending", NULL, 0, CAUSE_CONTAINER_START_FAILED, "CDI device unresolved",
                "unresolvable CDI devices nvidia.com/gpu=GPU-4e1a9c2b");
    char msg[1024];
    snprintf(msg, sizeof(msg), "Error: %s", driver_not_loaded);
    const struct placement_event ev = {"Failed", msg, 100};
    expect_word(NULL, waiting_json("cuda", "RunContainerError", NULL), running_side, "Pending", &ev,
                1, CAUSE_CONTAINER_START_FAILED, "driver not loaded", NULL);
}

/* An application that ran and crashed (exit 1), a start error of no GPU concern, a missing
 * ConfigMap: ok. Once the GPU container runs, the old Events no longer speak: ok. */
static void test_not_ours(void **state)
{
    (void)state;
    expect_word(NULL, start_error_json("cuda", "Error", 1, "CUDA driver version is insufficient"),
                running_side, "Running", NULL, 0, CAUSE_OK, NULL, NULL);
    expect_word(NULL,
                start_error_json("cuda", "StartError", 128,
                                 "failed to create containerd task: exec: \"train.py\": "
                                 "executable file not found in $PATH: unknown"),
                running_side, "Running", NULL, 0, CAUSE_OK, NULL, NULL);
    expect_word(
        NULL,
        waiting_json("cuda", "CreateContainerConfigError", "configmap \"train-config\" not found"),
        running_side, "Pending", NULL, 0, CAUSE_OK, NULL, NULL);
    const struct placement_event sandbox = {
        "FailedCreatePodSandBox",
        SANDBOX_PREFIX "failed to get sandbox runtime: no runtime for \"nvidia\" is configured",
        100};
    expect_word("nvidia", strdup("{\"name\":\"cuda\",\"state\":{\"running\":{}},\"started\":true}"),
                running_side, "Running", &sandbox, 1, CAUSE_OK, NULL, NULL);
}

/* A claim-only pod: its container references the claim; the DRA view is absent. */
static void test_claim_container(void **state)
{
    (void)state;
    struct world w = {0};
    json_object *pod = json_tokener_parse(
        "{\"metadata\":{\"namespace\":\"ml\",\"name\":\"dra\",\"uid\":\"u2\"},"
        "\"spec\":{\"nodeName\":\"node-a\",\"resourceClaims\":[{\"name\":\"gpu\","
        "\"resourceClaimTemplateName\":\"one-gpu\"}],\"containers\":[{\"name\":\"cuda\","
        "\"resources\":{\"claims\":[{\"name\":\"gpu\"}]}},{\"name\":\"side\"}]},"
        "\"status\":{\"phase\":\"Pending\"}}");
    with_statuses(pod, waiting_json("cuda", "CreateContainerError", cdi_create), running_side,
                  "Pending");
    assert_int_equal(project_pod(pod, &test_gpus, &w.pod), K_OK);
    json_object_put(pod);
    assert_true(w.pod.containers->items[0].claim_ref);
    assert_false(w.pod.containers->items[1].claim_ref);
    assert_false(pod_gpu_containers_started(&w.pod, true));
    assert_true(pod_gpu_containers_started(&w.pod, false) == false); /* none GPU: all count */
    done(&w);
}

static void test_event_kept(void **state)
{
    (void)state;
    assert_true(placement_event_kept("kubelet", "Warning", "FailedCreatePodSandBox", "x"));
    assert_true(placement_event_kept("kubelet", "Warning", "Failed", "Failed to pull image \"a\""));
    assert_true(placement_event_kept("kubelet", "Warning", "Failed", "Error: failed to create"));
    assert_false(placement_event_kept("kubelet", "Warning", "Failed", "Error: ErrImagePull"));
    assert_false(placement_event_kept("kubelet", "Warning", "Failed", "Error: ImagePullBackOff"));
    assert_false(placement_event_kept("kubelet", "Normal", "Pulling", "Pulling image"));
    assert_false(placement_event_kept("kubelet", "Warning", "BackOff", "Back-off"));
    assert_false(placement_event_kept("someone", "Warning", "Failed", "Error: x"));
    assert_false(placement_event_kept(NULL, NULL, NULL, NULL));
}

/* Bounds: a message past CONTAINER_MESSAGE_MAX is cut on a character boundary; the detail
 * quotes the tail of a long runtime error. */
static void test_bounds(void **state)
{
    (void)state;
    size_t n = CONTAINER_MESSAGE_MAX + 100;
    char *big = malloc(n + 1);
    for (size_t i = 0; i < n; i += 2) {
        big[i] = (char)0xC3; /* é */
        big[i + 1] = (char)0xA9;
    }
    big[n] = '\0';
    char *cut = NULL;
    assert_int_equal(container_message_dup(big, &cut), 0);
    assert_true(strlen(cut) <= CONTAINER_MESSAGE_MAX);
    assert_int_equal(strlen(cut) % 2, 0);
    free(cut);
    free(big);

    struct world w = {0};
    json_object *pod = pod_json(NULL);
    char msg[4096] = "";
    for (int i = 0; i < 30; i++)
        strcat(msg, "wrapped error chain, ");
    strcat(msg, driver_not_loaded);
    with_statuses(pod, start_error_json("cuda", "StartError", 128, msg), running_side, "Running");
    run(&w, pod, 0);
    assert_int_equal(w.out.cause, CAUSE_CONTAINER_START_FAILED);
    assert_non_null(strstr(w.out.detail, "driver not loaded: unknown"));
    assert_true(strlen(w.out.detail) < sizeof(w.out.detail));
    /* the quote starts at a word of the message, not inside one ("...e create failed") */
    const char *q = strstr(w.out.detail, "...");
    assert_non_null(q);
    char word[64];
    size_t wl = strcspn(q + 3, " ");
    assert_true(wl > 0 && wl < sizeof(word) - 2);
    snprintf(word, sizeof(word), " %.*s ", (int)wl, q + 3);
    if (!strstr(msg, word))
        fail_msg("the quote starts inside a word: %s", q);
    done(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_projection),
        cmocka_unit_test(test_runtime_missing),
        cmocka_unit_test(test_image_pull),
        cmocka_unit_test(test_start_driver_not_loaded),
        cmocka_unit_test(test_start_cuda_requirement),
        cmocka_unit_test(test_start_toolkit_other),
        cmocka_unit_test(test_create_and_run_errors),
        cmocka_unit_test(test_not_ours),
        cmocka_unit_test(test_claim_container),
        cmocka_unit_test(test_event_kept),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
