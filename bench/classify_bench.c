/*
 * classify_bench.c - the controller's own cost per pod: classification from the cache (the
 * store of core/cache, as controller/reconcile.c reads it) at 5,000 nodes. A benchmark, not a
 * test: it prints figures.
 *
 *   build/bench/bench_classify [--nodes N] [--pods-per-node P] [--blocked K]
 *
 * The store is filled the way the informers fill it (store_*_apply_json on Node and Pod JSON)
 * with bench/scale's mix, scaled to N nodes (default 5,000): 45% GPU nodes and 5% tainted GPU
 * nodes (bench/reserved=yes:NoSchedule) with nvidia.com/gpu 8, 50% CPU-only nodes, labels
 * kubernetes.io/hostname, kubernetes.io/os, type, bench/pool; each GPU node holds 4 to 8 of its
 * GPUs through one or two bound pods, and every node has P bound CPU pods (default 30: 150,000
 * pods at 5,000 nodes). Then K pending GPU pods (default 200) of each of bench/scale's causes
 * are stored and classified one at a time from the store, as the controller's reconcile does
 * (read lock, core/triage triage_pod: the facts, classify with the store's usage): exhausted
 * (8 GPUs, tolerates everything), label-mismatch (a nodeSelector no node has), no-gpu-node
 * (selector on the CPU pool), taint (selector on the tainted pool, no toleration). Printed per
 * cause: the candidate nodes (those passing node selection), the word classify found, the CPU time
 * per pod, per node in the store and per candidate node (CLOCK_PROCESS_CPUTIME_ID over all K pods),
 * and how many times faster than the seed script's ~0.3 s per pod.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "cache/store.h"
#include "classify/classify.h"
#include "model/gpu.h"
#include "triage/triage.h"
#include "util/result.h"

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void apply(struct store *s, const char *json, int pod)
{
    json_object *o = json_tokener_parse(json);
    char key[STORE_KEY_MAX];
    unsigned changed = 0;
    int rc = o ? (pod ? store_pod_apply_json(s, o, 0, key, &changed)
                      : store_node_apply_json(s, o, 0, key, &changed))
               : K_EPARSE;
    json_object_put(o);
    if (rc != K_OK) {
        fprintf(stderr, "bench_classify: cannot store %s: %s\n", json, k_strerror(rc));
        exit(1);
    }
}

static void pod_json(char *buf, size_t len, const char *ns, const char *name, const char *node,
                     int gpus, const char *selector, int tolerate)
{
    char res[96] = "", sel[160] = "", bind[160] = "";
    if (gpus)
        snprintf(res, sizeof(res), ",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"%d\"}}", gpus);
    if (selector)
        snprintf(sel, sizeof(sel), ",\"nodeSelector\":{%s}", selector);
    if (node)
        snprintf(bind, sizeof(bind), ",\"nodeName\":\"%s\"", node);
    snprintf(buf, len,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"%s\",\"uid\":\"uid-%s-%s\"},\"spec\":{\"containers\":[{\"name\":"
             "\"c\",\"image\":\"registry.k8s.io/pause:3.10\"%s}]%s%s%s},\"status\":{\"phase\":"
             "\"%s\"%s}}",
             name, ns, ns, name, res, sel, bind,
             tolerate ? ",\"tolerations\":[{\"operator\":\"Exists\"}]" : "",
             node ? "Running" : "Pending",
             node ? ""
                  : ",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
                    "\"reason\":\"Unschedulable\"}]");
}

int main(int argc, char **argv)
{
    long n_nodes = 5000, per_node = 30, blocked = 200;
    for (int i = 1; i + 1 < argc; i += 2) {
        long v = atol(argv[i + 1]);
        if (strcmp(argv[i], "--nodes") == 0)
            n_nodes = v;
        else if (strcmp(argv[i], "--pods-per-node") == 0)
            per_node = v;
        else if (strcmp(argv[i], "--blocked") == 0)
            blocked = v;
    }
    if (n_nodes < 20 || per_node < 0 || blocked < 1) {
        fprintf(stderr, "usage: bench_classify [--nodes N>=20] [--pods-per-node P] "
                        "[--blocked K]\n");
        return 2;
    }
    struct gpu_set gpus;
    if (gpu_set_parse(&gpus, GPU_SET_DEFAULT) != K_OK)
        return 1;
    struct store *s = store_new(&gpus);
    if (!s)
        return 1;
    double t0 = cpu_s();
    long n_gpu = n_nodes * 50 / 100, n_tainted = n_nodes * 5 / 100, pods = 0;
    char buf[2048], name[64], pname[64];
    for (long i = 0; i < n_nodes; i++) {
        const char *kind = i >= n_gpu ? "cpu" : i < n_tainted ? "tainted" : "gpu";
        snprintf(name, sizeof(name), "node-%05ld", i);
        snprintf(buf, sizeof(buf),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
                 "\"labels\":{\"kubernetes.io/hostname\":\"%s\",\"kubernetes.io/os\":\"linux\","
                 "\"type\":\"kwok\",\"bench/pool\":\"%s\"}},\"spec\":{%s},\"status\":{"
                 "\"capacity\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\"%s},"
                 "\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\"%s}}}",
                 name, name, kind,
                 strcmp(kind, "tainted") == 0
                     ? "\"taints\":[{\"key\":\"bench/reserved\",\"value\":\"yes\","
                       "\"effect\":\"NoSchedule\"}]"
                     : "",
                 strcmp(kind, "cpu") ? ",\"nvidia.com/gpu\":\"8\"" : "",
                 strcmp(kind, "cpu") ? ",\"nvidia.com/gpu\":\"8\"" : "");
        apply(s, buf, 0);
        if (strcmp(kind, "cpu") != 0) { /* 4 to 8 of the 8 GPUs held, at most 4 free */
            int held = 4 + (int)(i % 5);
            int first = held > 4 ? held - 4 : held;
            snprintf(pname, sizeof(pname), "gpu-%05ld-a", i);
            pod_json(buf, sizeof(buf), "bench", pname, name, first, NULL, 1);
            apply(s, buf, 1);
            pods++;
            if (held > 4) {
                snprintf(pname, sizeof(pname), "gpu-%05ld-b", i);
                pod_json(buf, sizeof(buf), "bench", pname, name, 4, NULL, 1);
                apply(s, buf, 1);
                pods++;
            }
        }
        for (long k = 0; k < per_node; k++) {
            snprintf(pname, sizeof(pname), "cpu-%05ld-%03ld", i, k);
            pod_json(buf, sizeof(buf), "bench", pname, name, 0, NULL, 0);
            apply(s, buf, 1);
            pods++;
        }
    }
    static const struct {
        const char *cause, *selector;
        int gpus, tolerate;
    } kinds[] = {
        {"exhausted", NULL, 8, 1},
        {"label-mismatch", "\"nvidia.com/gpu.product\":\"NVIDIA-H200\"", 1, 0},
        {"no-gpu-node", "\"bench/pool\":\"cpu\"", 1, 0},
        {"taint", "\"bench/pool\":\"tainted\"", 1, 0},
    };
    size_t nk = sizeof(kinds) / sizeof(kinds[0]);
    for (size_t k = 0; k < nk; k++)
        for (long i = 0; i < blocked; i++) {
            snprintf(pname, sizeof(pname), "%s-%03ld", kinds[k].cause, i);
            pod_json(buf, sizeof(buf), "bench-blocked", pname, NULL, kinds[k].gpus,
                     kinds[k].selector, kinds[k].tolerate);
            apply(s, buf, 1);
        }
    printf("store: %zu nodes (%ld GPU, %ld of them tainted, %ld CPU), %zu pods (%ld bound); "
           "filled in %.1f s CPU\n",
           store_node_count(s), n_gpu, n_tainted, n_nodes - n_gpu, store_pod_count(s), pods,
           cpu_s() - t0);
    printf("%-15s %10s %-15s %11s %12s %16s %13s\n", "pending pod", "candidates", "classified as",
           "us per pod", "ns per node", "ns per candidate", "vs 0.3 s/pod");
    struct triage_source src = {.store = s, .now = 1767225600};
    for (size_t k = 0; k < nk; k++) {
        enum cause got = CAUSE_COUNT;
        size_t cand = 0;
        double start = cpu_s();
        for (long i = 0; i < blocked; i++) {
            snprintf(pname, sizeof(pname), "%s-%03ld", kinds[k].cause, i);
            store_read_lock(s);
            const struct kpod *pod = store_pod_get(s, "bench-blocked", pname);
            struct classify_result r;
            r.verdicts = NULL;
            if (!pod || triage_pod(&src, pod, &r) != K_OK) {
                store_read_unlock(s);
                fprintf(stderr, "bench_classify: %s not classified\n", pname);
                return 1;
            }
            got = r.cause;
            cand = r.n_candidates;
            store_read_unlock(s);
        }
        double per_pod = (cpu_s() - start) / (double)blocked;
        char per_cand[32] = "-";
        if (cand)
            snprintf(per_cand, sizeof(per_cand), "%.1f", per_pod * 1e9 / (double)cand);
        printf("%-15s %10zu %-15s %11.1f %12.1f %16s %12.0fx\n", kinds[k].cause, cand,
               cause_word(got), per_pod * 1e6, per_pod * 1e9 / (double)store_node_count(s),
               per_cand, 0.3 / per_pod);
    }
    store_free(s);
    return 0;
}
