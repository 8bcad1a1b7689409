/*
 * cel_cost_bench.c - CPU per step of core/cel's cost model (cel.h: CEL_NS_PER_STEP): selectors
 * of several shapes, each near CEL_MAX_EXPR_LEN, evaluated against one device of 8 attributes
 * and 2 capacities (looked up by a linear scan, as core/classify's device records are), with an
 * unbounded budget to count the steps. A benchmark, not a test: it prints figures.
 *
 *   build/bench/bench_cel_cost [ITERATIONS]
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cel/cel.h"

struct battr {
    const char *name;
    enum cel_attr_kind kind;
    int64_t i;
    const char *s;
};

static const struct battr attrs[] = {
    {"architecture", CEL_ATTR_STRING, 0, "Hopper"},
    {"brand", CEL_ATTR_STRING, 0, "Nvidia"},
    {"productName", CEL_ATTR_STRING, 0, "NVIDIA H100 80GB HBM3 with a longer product name"},
    {"type", CEL_ATTR_STRING, 0, "gpu"},
    {"uuid", CEL_ATTR_STRING, 0, "GPU-4cf8db2d-06c0-7d70-1a51-e59b25b2c16c"},
    {"index", CEL_ATTR_INT, 3, NULL},
    {"minor", CEL_ATTR_INT, 3, NULL},
    {"driverVersion", CEL_ATTR_VERSION, 0, "550.54.15"},
};
#define DOMAIN "gpu.nvidia.com"

static bool is(const char *a, const char *b, size_t blen)
{
    return strlen(a) == blen && memcmp(a, b, blen) == 0;
}

static enum cel_lookup b_attr(const void *ctx, const char *domain, size_t dlen, const char *name,
                              size_t nlen, struct cel_attr_value *out)
{
    (void)ctx;
    if (!is(DOMAIN, domain, dlen))
        return CEL_LOOKUP_MISSING;
    if (!name)
        return CEL_LOOKUP_FOUND;
    for (size_t k = 0; k < sizeof(attrs) / sizeof(attrs[0]); k++) {
        if (!is(attrs[k].name, name, nlen))
            continue;
        out->kind = attrs[k].kind;
        out->i = attrs[k].i;
        out->s = attrs[k].s;
        out->len = attrs[k].s ? strlen(attrs[k].s) : 0;
        return CEL_LOOKUP_FOUND;
    }
    return CEL_LOOKUP_MISSING;
}

static enum cel_lookup b_cap(const void *ctx, const char *domain, size_t dlen, const char *name,
                             size_t nlen, int64_t *milli)
{
    (void)ctx;
    if (!is(DOMAIN, domain, dlen))
        return CEL_LOOKUP_MISSING;
    if (!name)
        return CEL_LOOKUP_FOUND;
    if (is("memory", name, nlen) || is("cores", name, nlen)) {
        *milli = 85899345920000;
        return CEL_LOOKUP_FOUND;
    }
    return CEL_LOOKUP_MISSING;
}

struct shape {
    const char *pre, *post; /* a term is pre, its number, post */
};

/* Terms joined by " || " up to CEL_MAX_EXPR_LEN bytes. */
static size_t build(char *buf, size_t cap, const struct shape *sh, size_t *terms)
{
    size_t n = 0;
    *terms = 0;
    for (;;) {
        char term[256];
        int k = snprintf(term, sizeof(term), "%s%zu%s", sh->pre, *terms, sh->post);
        size_t need = (size_t)k + (n ? 4 : 0);
        if (n + need >= cap)
            break;
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? " || " : "", term);
        (*terms)++;
    }
    return n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 20000;
    if (iters <= 0) {
        fprintf(stderr, "usage: bench_cel_cost [ITERATIONS]\n");
        return 2;
    }
    static const struct shape shapes[] = {
        {"device.attributes['" DOMAIN "'].productName == 'NVIDIA H", "'"},
        {"device.attributes['" DOMAIN "'].architecture == 'Hopper-", "'"},
        {"device.driver == 'x", ".example.com'"},
        {"device.attributes['" DOMAIN "'].index == 1", ""},
        {"device.attributes['" DOMAIN "'].productName.contains('H", "')"},
        {"device.capacity['" DOMAIN "'].memory.compareTo(quantity('", "Gi')) == 0"},
        {"device.attributes['" DOMAIN "'].driverVersion.isLessThan(semver('1.", ".0'))"},
        {"device.attributes['" DOMAIN "'].missing", " == 'x'"},
        {"device.attributes['" DOMAIN "'].productName in ['a", "', 'b', 'c', 'd', 'e']"},
    };
    struct cel_device dev = {
        .driver = DOMAIN, .driver_len = strlen(DOMAIN), .attribute = b_attr, .capacity = b_cap};
    static char src[CEL_MAX_EXPR_LEN + 1];
    double worst = 0;
    printf("%-72s %5s %6s %9s %8s\n", "shape (joined by ||, up to 10 KiB)", "terms", "steps",
           "us/eval", "ns/step");
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        size_t terms;
        size_t len = build(src, sizeof(src), &shapes[i], &terms);
        char label[80];
        snprintf(label, sizeof(label), "%s<n>%s", shapes[i].pre, shapes[i].post);
        struct cel_program *prog;
        char err[128];
        if (cel_compile(src, len, &prog, err, sizeof(err)) != CEL_OK) {
            fprintf(stderr, "bench_cel_cost: %s: %s\n", label, err);
            return 1;
        }
        struct cel_budget b;
        cel_budget_init(&b, UINT64_MAX);
        enum cel_result r = cel_eval_budget(prog, &dev, &b, NULL, 0);
        uint64_t steps = b.spent;
        double t0 = now_s();
        for (long k = 0; k < iters; k++)
            r = cel_eval_budget(prog, &dev, NULL, NULL, 0);
        double t = now_s() - t0;
        double per_eval = t / (double)iters * 1e9;
        double per_step = per_eval / (double)(steps ? steps : 1);
        if (per_step > worst)
            worst = per_step;
        printf("%-72.72s %5zu %6llu %9.2f %8.2f%s\n", label, terms, (unsigned long long)steps,
               per_eval / 1e3, per_step, r == CEL_TRUE ? " (true)" : "");
        cel_program_free(prog);
    }
    printf("worst: %.2f ns/step (cel.h CEL_NS_PER_STEP %d)\n", worst, CEL_NS_PER_STEP);
    return 0;
}
