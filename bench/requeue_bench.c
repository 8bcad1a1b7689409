/*
 * requeue_bench.c - what a GPU holder replaced costs the controller with the targeted re-check
 * policy (core/triage/requeue.h) beside re-checking every pending pod. A benchmark, not a test:
 * it prints figures.
 *
 *   build/bench/bench_requeue [--nodes N] [--backlog B] [--changes C] [--ask G]
 *
 * The store is filled as the informers fill it (the *_delta writers on Node and Pod JSON): N
 * nodes (default 1,000), 45% GPU nodes and 5% tainted GPU nodes with nvidia.com/gpu 8, 50% CPU
 * nodes; each GPU node holds 4 to 8 one-GPU holder pods. B pending GPU pods (default 2,000), a
 * quarter each of exhausted (G GPUs, default 8, tolerating everything), label-mismatch,
 * no-gpu-node (selector on the CPU pool) and taint (selector on the tainted pool), are
 * classified once, their words recorded. Then C changes (default 400): a holder on a GPU node
 * deleted, then created again (a replacement is two usage changes), each followed by what the
 * controller does: every pending pod judged (requeue_store_change_reaches, then
 * requeue_after_store_change against its record), the pods named classified again and their
 * records updated. Printed: the CPU time of judging per change, the re-checks per change and
 * their CPU time, beside the CPU time of classifying every pending pod per change measured over
 * the first 20 changes (CLOCK_PROCESS_CPUTIME_ID).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "cache/key.h"
#include "cache/store.h"
#include "kube/project.h"
#include "model/gpu.h"
#include "triage/requeue.h"
#include "triage/triage.h"
#include "util/result.h"

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_requeue: %s\n", what);
    exit(1);
}

static void node(struct store *s, int i, int n)
{
    char buf[512];
    int kind = i * 100 / n; /* 0..44 GPU, 45..49 tainted GPU, 50.. CPU */
    bool gpu = kind < 50, tainted = kind >= 45 && kind < 50;
    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"node-%05d\",\"labels\":{\"bench/pool\":\"%s\"}},"
             "\"spec\":{\"taints\":[%s]},\"status\":{\"capacity\":{%s},\"allocatable\":{%s}}}",
             i, gpu ? (tainted ? "reserved" : "gpu") : "cpu",
             tainted ? "{\"key\":\"bench/reserved\",\"value\":\"yes\",\"effect\":\"NoSchedule\"}"
                     : "",
             gpu ? "\"nvidia.com/gpu\":\"8\"" : "", gpu ? "\"nvidia.com/gpu\":\"8\"" : "");
    json_object *o = json_tokener_parse(buf);
    struct store_delta d;
    if (!o || store_node_apply_json_delta(s, o, 0, NULL, &d) != K_OK)
        die("cannot store a node");
    store_delta_cleanup(&d);
    json_object_put(o);
}

static void pod(struct store *s, const struct gpu_set *g, const char *ns, const char *name,
                const char *on, int gpus, const char *pool, bool tolerate, struct store_delta *d)
{
    char buf[1024], sel[64] = "", where[64] = "";
    if (pool)
        snprintf(sel, sizeof(sel), "\"nodeSelector\":{\"bench/pool\":\"%s\"},", pool);
    if (on)
        snprintf(where, sizeof(where), "\"nodeName\":\"%s\",", on);
    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\",\"uid\":\"%s-%s\"},\"spec\":{"
             "%s%s\"tolerations\":[%s],\"containers\":[{\"name\":\"c\",\"resources\":{"
             "\"requests\":{\"nvidia.com/gpu\":\"%d\"}}}]},\"status\":{\"phase\":\"%s\"}}",
             ns, name, ns, name, where, sel, tolerate ? "{\"operator\":\"Exists\"}" : "", gpus,
             on ? "Running" : "Pending");
    json_object *o = json_tokener_parse(buf);
    struct kpod p;
    if (!o || project_pod(o, g, &p) != K_OK || store_pod_upsert_delta(s, &p, d) != K_OK)
        die("cannot store a pod");
    json_object_put(o);
}

struct backlog {
    int n;
    struct requeue_record *rec;
};

/* Classify pending pod w/w<i> and record its word (read lock held). */
static void classify_one(struct store *s, struct backlog *b, int i)
{
    char name[32];
    snprintf(name, sizeof(name), "w%d", i);
    const struct kpod *p = store_pod_get(s, "w", name);
    struct triage_source src = {.store = s};
    struct classify_result r;
    r.verdicts = NULL;
    if (!p || triage_pod(&src, p, &r) != K_OK)
        die("cannot classify");
    b->rec[i].valid = true;
    b->rec[i].word = r.cause;
    snprintf(b->rec[i].uid, sizeof(b->rec[i].uid), "%s", p->uid);
}

static int arg_int(int argc, char **argv, const char *flag, int def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], flag) == 0)
            return atoi(argv[i + 1]);
    return def;
}

int main(int argc, char **argv)
{
    int n = arg_int(argc, argv, "--nodes", 1000);
    int backlog = arg_int(argc, argv, "--backlog", 2000);
    int changes = arg_int(argc, argv, "--changes", 400);
    int ask = arg_int(argc, argv, "--ask", 8);
    if (n < 20 || backlog < 4 || changes < 2 || ask < 1)
        die("--nodes >= 20, --backlog >= 4, --changes >= 2, --ask >= 1");
    struct gpu_set g;
    if (gpu_set_parse(&g, GPU_SET_DEFAULT) != K_OK)
        die("gpu set");
    struct store *s = store_new(&g);
    if (!s)
        die("out of memory");
    store_keep_gpu_pods_only(s);
    struct store_delta d;
    int gpu_nodes = n / 2, holders = 0;
    for (int i = 0; i < n; i++)
        node(s, i, n);
    char name[32], on[32];
    for (int i = 0; i < gpu_nodes; i++)
        for (int k = 0; k < 4 + i % 5; k++, holders++) {
            snprintf(name, sizeof(name), "h%d-%d", i, k);
            snprintf(on, sizeof(on), "node-%05d", i);
            pod(s, &g, "h", name, on, 1, NULL, true, &d);
            store_delta_cleanup(&d);
        }
    static const char *const pools[4] = {NULL, "nowhere", "cpu", "reserved"};
    for (int i = 0; i < backlog; i++) {
        snprintf(name, sizeof(name), "w%d", i);
        pod(s, &g, "w", name, NULL, i % 4 == 0 ? ask : 1, pools[i % 4], i % 4 == 0, &d);
        store_delta_cleanup(&d);
    }
    struct backlog b = {backlog, calloc((size_t)backlog, sizeof(*b.rec))};
    int *named = calloc((size_t)backlog, sizeof(*named));
    if (!b.rec || !named)
        die("out of memory");
    store_read_lock(s);
    for (int i = 0; i < backlog; i++)
        classify_one(s, &b, i);
    store_read_unlock(s);

    double judge = 0, recheck = 0, all = 0;
    long rechecks = 0;
    int all_measured = 0;
    unsigned seed = 1;
    for (int c = 0; c < changes; c++) {
        /* a holder on a GPU node: deleted on even changes, created again on odd ones */
        if (c % 2 == 0)
            seed = seed * 1103515245u + 12345u;
        int nd = (int)((seed >> 8) % (unsigned)(gpu_nodes * 9 / 10)); /* untainted GPU nodes */
        snprintf(name, sizeof(name), "h%d-0", nd);
        snprintf(on, sizeof(on), "node-%05d", nd);
        if (c % 2 == 0) {
            if (store_pod_delete_delta(s, "h", name, &d) != K_OK)
                die("delete");
        } else {
            pod(s, &g, "h", name, on, 1, NULL, true, &d);
        }
        store_read_lock(s);
        double t0 = cpu_s();
        const struct knode *now_node = d.node[0] ? store_node_get(s, d.node) : NULL;
        int n_named = 0;
        for (int i = 0; i < backlog; i++) {
            char w[32];
            snprintf(w, sizeof(w), "w%d", i);
            const struct kpod *p = store_pod_get(s, "w", w);
            if (requeue_store_change_reaches(p, &d, now_node) &&
                requeue_after_store_change(p, &b.rec[i], &d, now_node, store_node_usage, s)) {
                named[n_named++] = i;
            }
        }
        double t1 = cpu_s();
        for (int k = 0; k < n_named; k++)
            classify_one(s, &b, named[k]);
        double t2 = cpu_s();
        if (c < 20) { /* the old policy: every pending pod, records left alone */
            struct classify_result r;
            r.verdicts = NULL;
            for (int i = 0; i < backlog; i++) {
                char w[32];
                snprintf(w, sizeof(w), "w%d", i);
                struct triage_source src = {.store = s};
                if (triage_pod(&src, store_pod_get(s, "w", w), &r) != K_OK)
                    die("cannot classify");
            }
            all += cpu_s() - t2;
            all_measured++;
        }
        store_read_unlock(s);
        store_delta_cleanup(&d);
        judge += t1 - t0;
        recheck += t2 - t1;
        rechecks += n_named;
    }
    printf("%d nodes, %d holder pods, %d pending GPU pods (exhausted asking %d GPUs, "
           "label-mismatch, no-gpu-node, taint: a quarter each), %d usage changes (holders "
           "deleted and created again)\n",
           n, holders, backlog, ask, changes);
    printf("targeted:  judging every pending pod %.3f ms CPU per change (%.2f us per pod); "
           "%.2f re-checks per change, %.3f ms CPU; total %.3f ms per change\n",
           judge * 1e3 / changes, judge * 1e6 / changes / backlog, (double)rechecks / changes,
           recheck * 1e3 / changes, (judge + recheck) * 1e3 / changes);
    printf("all:       %d re-checks per change, %.3f ms CPU per change (measured over the first "
           "%d changes)\n",
           backlog, all * 1e3 / all_measured, all_measured);
    store_free(s);
    free(b.rec);
    free(named);
    gpu_set_cleanup(&g);
    return 0;
}
