/*
 * admission_bench.c - CPU time and allocations of one AdmissionReview through
 * webhook/admission.c, without TLS or HTTP: the members the checks do not read cut and the tree
 * of the rest built from the text (admission_handle) against the whole tree built by json-c's
 * tokener (ADMISSION_PARSE_FULL, as before).
 * A benchmark, not a test: it prints figures.
 *
 *   build/bench/bench_admission [REVIEW.json [FIXTURE.json [ITERATIONS [cut|full]]]]
 *
 * REVIEW defaults to bench/admission-review.json (a 2.4 KB Pod review of 32 JSON objects, as
 * the API server sends it: managedFields, userInfo, options, a container with command, env and
 * volume mounts); the snapshot is the "snapshot" member of FIXTURE (default
 * tests/fixtures/admission/deployment_taint.json: the lab's three nodes, so the pod gets the
 * taint warning). Allocations are counted by wrapping malloc, calloc, realloc and free of this
 * process (glibc's __libc_* underneath).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admission.h"
#include "model/gpu.h"
#include "util/file.h"
#include "util/result.h"

#include "snapshot_fixture.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define NO_COUNTING 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NO_COUNTING 1
#endif

static uint64_t n_allocs;

#ifndef NO_COUNTING /* a sanitizer owns malloc: allocations are not counted (0) */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

void *malloc(size_t n)
{
    n_allocs++;
    return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
    n_allocs++;
    return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
    n_allocs++;
    return __libc_realloc(p, n);
}

void free(void *p)
{
    __libc_free(p);
}
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 4096 > cap) {
            cap = (cap + 4096) * 2;
            char *b = realloc(buf, cap);
            if (!b)
                break;
            buf = b;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        if (r == 0)
            break;
        n += r;
    }
    fclose(f);
    if (buf)
        buf[n] = 0;
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    const char *review = argc > 1 ? argv[1] : "bench/admission-review.json";
    const char *fixture = argc > 2 ? argv[2] : "tests/fixtures/admission/deployment_taint.json";
    long iters = argc > 3 ? atol(argv[3]) : 200000;
    size_t len, flen;
    char *body = slurp(review, &len), *fx = slurp(fixture, &flen);
    if (!body || !fx || iters <= 0) {
        fprintf(stderr, "usage: bench_admission [REVIEW.json [FIXTURE.json [ITERATIONS]]] "
                        "(run from the repository)\n");
        return 2;
    }
    json_object *c = json_tokener_parse(fx), *snapj;
    struct gpu_set gpus;
    struct snapshot_fixture os;
    if (!c || !json_object_object_get_ex(c, "snapshot", &snapj) ||
        gpu_set_parse(&gpus, GPU_SET_DEFAULT) != K_OK ||
        snapshot_fixture_build(&os, snapj, &gpus) != K_OK) {
        fprintf(stderr, "bench_admission: %s has no usable snapshot\n", fixture);
        return 1;
    }
    struct admission_result *r = malloc(sizeof(*r));
    printf("review %s: %zu bytes; snapshot %s: %zu nodes; %ld iterations each\n", review, len,
           fixture, os.snap.n_nodes, iters);
    static const struct {
        const char *name;
        unsigned flags;
    } modes[] = {{"whole tree (before)", ADMISSION_PARSE_FULL}, {"cut to what is read", 0}};
    double us[2] = {0};
    const char *only = argc > 4 ? argv[4] : "";
    for (size_t m = 0; m < 2; m++) {
        if ((strcmp(only, "cut") == 0 && m == 0) || (strcmp(only, "full") == 0 && m == 1))
            continue;
        /* warm up, and show the answer */
        if (admission_handle_ex(body, len, &os.snap, modes[m].flags, r) != K_OK) {
            fprintf(stderr, "bench_admission: %s: %s\n", modes[m].name, r->error);
            return 1;
        }
        if (m == 1)
            printf("answer: %s\n", r->response);
        admission_result_cleanup(r);
        uint64_t a0 = n_allocs;
        double t0 = now_s();
        for (long i = 0; i < iters; i++) {
            admission_handle_ex(body, len, &os.snap, modes[m].flags, r);
            admission_result_cleanup(r);
        }
        double t = now_s() - t0;
        us[m] = t / (double)iters * 1e6;
        printf("%-22s %7.2f us/request  %6.1f allocations/request\n", modes[m].name, us[m],
               (double)(n_allocs - a0) / (double)iters);
    }
    if (us[0] > 0 && us[1] > 0)
        printf("ratio whole/cut: %.2fx\n", us[0] / us[1]);
    free(r);
    snapshot_fixture_cleanup(&os);
    gpu_set_cleanup(&gpus);
    json_object_put(c);
    free(body);
    free(fx);
    return 0;
}
