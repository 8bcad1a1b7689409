/* placement.c - the after-placement steps of the ladder (placement.h). */
#include "placement.h"

#include <stdio.h>
#include <string.h>

#include "classify/line.h"
#include "model/containers.h"

/* How much of a runtime's or a registry's message a detail quotes (its tail: the specific error
 * comes last in the wrapped chain). */
#define QUOTE_MAX 360

bool placement_event_kept(const char *component, const char *type, const char *reason,
                          const char *message)
{
    if (!component || strcmp(component, "kubelet") != 0 || !type || strcmp(type, "Warning") != 0 ||
        !reason)
        return false;
    if (strcmp(reason, "FailedCreatePodSandBox") == 0)
        return true;
    if (strcmp(reason, "Failed") != 0 || !message)
        return false;
    return strcmp(message, "Error: ErrImagePull") != 0 &&
           strcmp(message, "Error: ImagePullBackOff") != 0;
}

/* Quote s: whole when short, else at most its last QUOTE_MAX bytes from the start of a word (the
 * runtime's words matter at the end: "... runc create failed: ..."), or from a character
 * boundary when those bytes hold no space. */
static void put_quote(struct line *l, const char *s)
{
    size_t len = strlen(s);
    if (len <= QUOTE_MAX) {
        line_printf(l, "%s", s);
        return;
    }
    size_t from = len - QUOTE_MAX;
    if (s[from - 1] != ' ') {
        const char *sp = strchr(s + from, ' ');
        if (sp)
            from = (size_t)(sp - s) + 1; /* mid-word: start at the next word */
    }
    while (from < len && s[from] == ' ')
        from++;
    while (from < len && ((unsigned char)s[from] & 0xC0) == 0x80)
        from++; /* a continuation byte: start at the next character */
    line_printf(l, "...%s", s + from);
}

/* The text after `prefix` in s up to one of `stop` (or the end), at most cap-1 bytes; false
 * when s lacks prefix or the text is empty. */
static bool after(const char *s, const char *prefix, const char *stop, char *out, size_t cap)
{
    const char *p = s ? strstr(s, prefix) : NULL;
    if (!p)
        return false;
    p += strlen(prefix);
    size_t n = strcspn(p, stop);
    if (n == 0)
        return false;
    if (n >= cap)
        n = cap - 1;
    memcpy(out, p, n);
    out[n] = '\0';
    return true;
}

/* The runtime handler a sandbox error says is missing, into out; false when it says none. */
static bool missing_handler(const char *msg, char *out, size_t cap)
{
    if (after(msg, "no runtime for \"", "\"", out, cap))
        return true; /* containerd CRI */
    if (after(msg, "failed to find runtime handler ", " \"", out, cap))
        return true; /* CRI-O */
    return strstr(msg, "not supported") && after(msg, "RuntimeHandler \"", "\"", out, cap);
}

/* The newest Event of `reason` whose message starts with `prefix` (NULL: any), or NULL. */
static const struct placement_event *newest(const struct placement_facts *f, const char *reason,
                                            const char *prefix)
{
    const struct placement_event *best = NULL;
    for (size_t i = 0; f && f->events && i < f->n_events; i++) {
        const struct placement_event *e = &f->events[i];
        if (!e->reason || !e->message || strcmp(e->reason, reason) != 0)
            continue;
        if (prefix && strncmp(e->message, prefix, strlen(prefix)) != 0)
            continue;
        if (!best || e->at > best->at)
            best = e;
    }
    return best;
}

static bool has(const char *s, const char *frag)
{
    return s && strstr(s, frag) != NULL;
}

static bool waiting(const struct container_state *c, const char *reason)
{
    return c->waiting_reason && strcmp(c->waiting_reason, reason) == 0;
}

/* Not past the sandbox: no status yet, or waiting in ContainerCreating / PodInitializing. */
static bool before_sandbox(const struct container_state *c)
{
    return !c->has_status || (!c->running && !c->terminated && !c->has_last &&
                              (!c->waiting_reason || waiting(c, "ContainerCreating") ||
                               waiting(c, "PodInitializing")));
}

/* ---- runtime-missing ------------------------------------------------------------------------ */

static bool runtime_missing(const struct kpod *pod, const struct container_state *const *gpu,
                            size_t n, const struct placement_facts *f, struct line *l)
{
    for (size_t i = 0; i < n; i++)
        if (!before_sandbox(gpu[i]))
            return false;
    const struct placement_event *e = newest(f, "FailedCreatePodSandBox", NULL);
    char handler[128];
    if (!e || !missing_handler(e->message, handler, sizeof(handler)))
        return false;
    line_printf(l, "node %s: the container runtime has no handler \"%s\"", pod->node_name, handler);
    if (pod->runtime_class && *pod->runtime_class)
        line_printf(l, " (RuntimeClass %s)", pod->runtime_class);
    else
        line_printf(l, " (its default runtime; the pod has no runtimeClassName)");
    line_printf(l, ", so the pod sandbox cannot be created: configure the handler in containerd "
                   "or CRI-O on the node (the NVIDIA container toolkit's nvidia-ctk runtime "
                   "configure, or the GPU Operator's toolkit pod there), or run the pod where it "
                   "is; kubelet: ");
    put_quote(l, e->message);
    return true;
}

/* ---- image-pull-failed ---------------------------------------------------------------------- */

static void pull_hint(struct line *l, const char *msg)
{
    if (has(msg, "no space left on device"))
        line_printf(l, "; the node's image filesystem is full: free space there or give the node "
                       "a larger disk (CUDA images are large)");
    else if (has(msg, "nauthorized") || has(msg, "401") || has(msg, "403") ||
             has(msg, "insufficient_scope") || has(msg, "authorization failed") ||
             has(msg, "denied"))
        line_printf(l, "; the registry refused the credentials: add an imagePullSecret for it");
    else if (has(msg, "deadline exceeded") || has(msg, "timeout") || has(msg, "timed out"))
        line_printf(l, "; the pull timed out: pre-pull the image on the node or raise the "
                       "kubelet's --runtime-request-timeout (or containerd's "
                       "image_pull_progress_timeout)");
    else if (has(msg, "not found") || has(msg, "manifest unknown"))
        line_printf(l, "; the image or its tag does not exist in the registry");
}

static bool image_pull_failed(const struct kpod *pod, const struct container_state *const *gpu,
                              size_t n, const struct placement_facts *f, struct line *l)
{
    for (size_t i = 0; i < n; i++) {
        const struct container_state *c = gpu[i];
        if (!waiting(c, "ErrImagePull") && !waiting(c, "ImagePullBackOff"))
            continue;
        const struct placement_event *e = newest(f, "Failed", "Failed to pull image");
        const char *msg = e ? e->message : c->waiting_message ? c->waiting_message : "";
        line_printf(l, "container %s on node %s cannot pull its image (%s): ", c->name,
                    pod->node_name, c->waiting_reason);
        put_quote(l, *msg ? msg : "no message");
        pull_hint(l, msg);
        return true;
    }
    return false;
}

/* ---- container-start-failed ----------------------------------------------------------------- */

/* A node label, or NULL. */
static const char *label(const struct knode *node, const char *key)
{
    return node ? kv_list_get(&node->labels, key) : NULL;
}

/* "a.b" or "a.b.c" from labels of the parts, or false. */
static bool parts(const struct knode *node, const char *const keys[3], size_t n, char *out,
                  size_t cap)
{
    const char *v[3] = {NULL, NULL, NULL};
    for (size_t i = 0; i < n; i++)
        if (!(v[i] = label(node, keys[i])))
            return false;
    if (n == 2)
        snprintf(out, cap, "%.16s.%.16s", v[0], v[1]);
    else
        snprintf(out, cap, "%.16s.%.16s.%.16s", v[0], v[1], v[2]);
    return true;
}

/* The driver version and the CUDA version it supports, from GPU feature discovery's labels. */
static void node_versions(const struct knode *node, char *driver, char *cuda, size_t cap)
{
    static const char *const drv_new[3] = {"nvidia.com/cuda.driver-version.major",
                                           "nvidia.com/cuda.driver-version.minor",
                                           "nvidia.com/cuda.driver-version.revision"};
    static const char *const drv_old[3] = {"nvidia.com/cuda.driver.major",
                                           "nvidia.com/cuda.driver.minor",
                                           "nvidia.com/cuda.driver.rev"};
    static const char *const rt_new[3] = {"nvidia.com/cuda.runtime-version.major",
                                          "nvidia.com/cuda.runtime-version.minor", NULL};
    static const char *const rt_old[3] = {"nvidia.com/cuda.runtime.major",
                                          "nvidia.com/cuda.runtime.minor", NULL};
    const char *full = label(node, "nvidia.com/cuda.driver-version.full");
    driver[0] = cuda[0] = '\0';
    if (full)
        snprintf(driver, cap, "%.48s", full);
    else if (!parts(node, drv_new, 3, driver, cap))
        (void)parts(node, drv_old, 3, driver, cap);
    full = label(node, "nvidia.com/cuda.runtime-version.full");
    if (full)
        snprintf(cuda, cap, "%.48s", full);
    else if (!parts(node, rt_new, 2, cuda, cap))
        (void)parts(node, rt_old, 2, cuda, cap);
}

/* The hint for a start error of the GPU stack, written to l; false when the message is not
 * one (the container failed for a reason of its own). */
static bool start_hint(struct line *l, const char *msg, const struct kpod *pod,
                       const struct knode *node)
{
    char required[32];
    if (has(msg, "unresolvable CDI devices") || has(msg, "CDI device injection failed") ||
        has(msg, "failed to inject CDI devices")) {
        line_printf(l,
                    "CDI device unresolved: the runtime finds no CDI spec for the device on "
                    "node %s; generate it there (nvidia-ctk cdi generate, or the GPU "
                    "Operator's / device plugin's CDI refresh) and check /var/run/cdi and "
                    "/etc/cdi",
                    pod->node_name);
        return true;
    }
    if (after(msg, "unsatisfied condition: cuda>=", ",; \"", required, sizeof(required))) {
        char driver[64], cuda[64];
        node_versions(node, driver, cuda, sizeof(driver));
        line_printf(l, "CUDA requirement above the node's driver: the image requires CUDA >= %s",
                    required);
        if (driver[0] && cuda[0])
            line_printf(l, " but node %s's driver %s supports CUDA %s", pod->node_name, driver,
                        cuda);
        else if (driver[0])
            line_printf(l, " but node %s's driver is %s", pod->node_name, driver);
        else if (cuda[0])
            line_printf(l, " but node %s's driver supports CUDA %s", pod->node_name, cuda);
        else
            line_printf(l,
                        ", more than node %s's driver supports (no "
                        "nvidia.com/cuda.driver-version labels name it)",
                        pod->node_name);
        line_printf(l, ": upgrade the driver there, place the pod on a node with a newer one, or "
                       "use an image built for an earlier CUDA");
        return true;
    }
    if (has(msg, "driver not loaded") || has(msg, "libnvidia-ml.so") || has(msg, "nvml error") ||
        has(msg, "driver error") || has(msg, "Failed to initialize NVML")) {
        line_printf(l,
                    "driver not loaded: the NVIDIA kernel driver or its user-space libraries "
                    "are not available on node %s; check the driver there (the GPU Operator's "
                    "driver pod, nvidia-smi on the node) and restart the toolkit once it is "
                    "loaded",
                    pod->node_name);
        return true;
    }
    if (has(msg, "nvidia-container-cli") || has(msg, "nvidia-container-runtime") ||
        has(msg, "nvidia-ctk") || has(msg, "nvidia-cdi-hook") ||
        has(msg, "nvidia-container-toolkit")) {
        line_printf(l,
                    "toolkit hook error: the NVIDIA container toolkit's hook failed on node "
                    "%s; read the error below and the toolkit's log there",
                    pod->node_name);
        return true;
    }
    return false;
}

/* The runtime's message for a container that failed to start, or NULL when it did not. */
static const char *start_error(const struct container_state *c, const struct placement_facts *f)
{
    const char *msg = NULL;
    if (waiting(c, "CreateContainerError") || waiting(c, "RunContainerError"))
        msg = c->waiting_message;
    else if (c->has_last && container_start_failed_reason(c->last_reason))
        msg = c->last_message;
    else if (!(c->terminated && container_start_failed_reason(c->term_reason)))
        return NULL;
    if (msg && *msg)
        return msg;
    const struct placement_event *e = newest(f, "Failed", "Error: ");
    return e ? e->message : "";
}

static bool start_failed(const struct kpod *pod, const struct knode *node,
                         const struct container_state *const *gpu, size_t n,
                         const struct placement_facts *f, struct line *l)
{
    for (size_t i = 0; i < n; i++) {
        const struct container_state *c = gpu[i];
        const char *msg = start_error(c, f);
        if (!msg)
            continue;
        /* the hint decides whether it is ours; written into scratch first */
        char hint[640];
        struct line h = {.buf = hint, .cap = sizeof(hint)};
        if (!start_hint(&h, msg, pod, node))
            continue;
        line_finish(&h);
        /* no restart count: the detail stays the same while the failure does */
        line_printf(l, "container %s on node %s failed to start: %s; runtime: ", c->name,
                    pod->node_name, hint);
        put_quote(l, msg);
        return true;
    }
    return false;
}

enum cause placement_word(const struct kpod *pod, const struct knode *node, bool claims_gpu,
                          const struct placement_facts *facts, struct line *l)
{
    const struct pod_containers *cs = pod->containers;
    if (!cs || !pod->node_name || pod_gpu_containers_started(pod, claims_gpu))
        return CAUSE_COUNT;
    /* the GPU containers that have not started (every container when none is a GPU one) */
    const struct container_state *gpu[POD_CONTAINERS_MAX];
    size_t n = 0;
    bool any = pod_containers_any_gpu(cs, claims_gpu);
    for (size_t i = 0; i < cs->n && n < POD_CONTAINERS_MAX; i++) {
        const struct container_state *c = &cs->items[i];
        if ((!any || container_is_gpu(c, claims_gpu)) && !container_started_once(c))
            gpu[n++] = c;
    }
    if (runtime_missing(pod, gpu, n, facts, l))
        return CAUSE_RUNTIME_MISSING;
    if (image_pull_failed(pod, gpu, n, facts, l))
        return CAUSE_IMAGE_PULL_FAILED;
    if (start_failed(pod, node, gpu, n, facts, l))
        return CAUSE_CONTAINER_START_FAILED;
    return CAUSE_COUNT;
}
