/*
 * fuzz_cel.c - libFuzzer target for core/cel/cel.c (the DRA selector CEL subset).
 *
 * Input: an expression, optionally followed by a 0x01 byte and a value. The expression is
 * compiled; when it compiles it is evaluated against fixed devices and against a device whose
 * every attribute lookup answers with the value (as a string, int, bool or version, chosen by
 * the attribute name's length) and whose every capacity is the value parsed as a quantity.
 * Checks: no crash, leak or UB under the sanitizers; compile and eval are deterministic;
 * results are in range. The cost model (cel.h): an unbounded budget gives cel_eval's answer and
 * takes at least one step and at most cel_program_size() plus the string bytes' steps; the same
 * evaluation with exactly those steps gives the same answer, with fewer (a count taken from the
 * input) CEL_UNKNOWN, CEL_TOO_COSTLY and an exhausted budget, and an exhausted budget answers at
 * once.
 *
 * Build and run by hand from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE \
 *     -Icore tests/fuzz/fuzz_cel.c core/cel/cel.c core/model/quantity.c core/util/errbuf.c \
 *     -o build/fuzz_cel
 *   mkdir -p build/fuzz_cel_corpus && build/fuzz_cel -max_total_time=300 build/fuzz_cel_corpus
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fdev {
    const char *val;
    size_t len;
    char cstr[64];
};

static enum cel_lookup f_attr(const void *ctx, const char *domain, size_t dlen, const char *name,
                              size_t nlen, struct cel_attr_value *out)
{
    const struct fdev *d = ctx;
    (void)domain;
    if (dlen == 0)
        return CEL_LOOKUP_MISSING;
    if (!name)
        return CEL_LOOKUP_FOUND;
    switch (nlen % 5) {
    case 0:
        return CEL_LOOKUP_MISSING;
    case 1:
        out->kind = CEL_ATTR_STRING;
        out->s = d->val;
        out->len = d->len;
        return CEL_LOOKUP_FOUND;
    case 2:
        out->kind = CEL_ATTR_VERSION;
        out->s = d->val;
        out->len = d->len;
        return CEL_LOOKUP_FOUND;
    case 3:
        out->kind = CEL_ATTR_INT;
        out->i = (int64_t)d->len - 3;
        return CEL_LOOKUP_FOUND;
    default:
        out->kind = CEL_ATTR_BOOL;
        out->b = d->len & 1;
        return CEL_LOOKUP_FOUND;
    }
}

static enum cel_lookup f_cap(const void *ctx, const char *domain, size_t dlen, const char *name,
                             size_t nlen, int64_t *milli)
{
    const struct fdev *d = ctx;
    (void)domain;
    (void)nlen;
    if (dlen == 0)
        return CEL_LOOKUP_MISSING;
    if (!name)
        return CEL_LOOKUP_FOUND;
    return cel_quantity_milli(d->cstr, milli);
}

static enum cel_lookup none_attr(const void *ctx, const char *domain, size_t dlen, const char *name,
                                 size_t nlen, struct cel_attr_value *out)
{
    (void)ctx;
    (void)domain;
    (void)dlen;
    (void)name;
    (void)nlen;
    (void)out;
    return CEL_LOOKUP_UNKNOWN;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data;
    const char *sep = memchr(in, 1, size);
    size_t elen = sep ? (size_t)(sep - in) : size;
    struct fdev fd = {"", 0, ""};
    if (sep) {
        fd.val = sep + 1;
        fd.len = size - elen - 1;
        size_t n = fd.len < sizeof(fd.cstr) - 1 ? fd.len : sizeof(fd.cstr) - 1;
        memcpy(fd.cstr, fd.val, n);
        fd.cstr[n] = '\0';
        int64_t m;
        enum cel_lookup q = cel_quantity_milli(fd.cstr, &m);
        if (q > CEL_LOOKUP_UNKNOWN)
            abort();
    }

    struct cel_program *prog = NULL, *again = NULL;
    char err[200];
    int st = cel_compile(in, elen, &prog, err, sizeof(err));
    int st2 = cel_compile(in, elen, &again, NULL, 0);
    cel_program_free(again);
    if (st != st2 || st < CEL_OK || st > CEL_NOMEM || (st == CEL_OK) != (prog != NULL))
        abort();
    if (st != CEL_OK)
        return 0;
    if (strlen(err) != 0 || memcmp(cel_program_source(prog), in, elen) != 0)
        abort();

    const struct cel_device devs[] = {
        {"gpu.nvidia.com", 14, &fd, f_attr, f_cap},
        {fd.val, fd.len, &fd, f_attr, f_cap},
        {NULL, 0, NULL, NULL, NULL},
        {"x", 1, NULL, none_attr, NULL},
    };
    /* a budget size from the input, below the steps taken */
    uint64_t cut = size ? data[size - 1] : 0;
    for (size_t k = 0; k < sizeof(devs) / sizeof(devs[0]); k++) {
        enum cel_result r = cel_eval(prog, &devs[k], err, sizeof(err));
        if (r > CEL_UNKNOWN || cel_eval(prog, &devs[k], NULL, 0) != r)
            abort();
        if ((r == CEL_ERROR || r == CEL_UNKNOWN) && err[0] == '\0')
            abort();
        struct cel_budget b;
        cel_budget_init(&b, UINT64_MAX);
        if (cel_eval_budget(prog, &devs[k], &b, NULL, 0) != r || b.exhausted)
            abort();
        uint64_t steps = b.spent;
        /* strings traversed: at most the source's literals and the value, each compared with
           every other at most once per node (contains() at every offset) */
        uint64_t bytes = (uint64_t)(elen + fd.len + 16) * (elen + fd.len + 16);
        if (steps < 1 || steps > cel_program_size(prog) * (2 + bytes / CEL_COST_STRING_BYTES))
            abort();
        cel_budget_init(&b, steps);
        if (cel_eval_budget(prog, &devs[k], &b, NULL, 0) != r || b.exhausted || b.left != 0)
            abort();
        uint64_t less = cut % steps;
        cel_budget_init(&b, less);
        if (cel_eval_budget(prog, &devs[k], &b, err, sizeof(err)) != CEL_UNKNOWN || !b.exhausted ||
            strcmp(err, CEL_TOO_COSTLY) != 0 || b.spent != less)
            abort();
        if (cel_eval_budget(prog, &devs[k], &b, NULL, 0) != CEL_UNKNOWN || b.spent != less)
            abort();
    }
    cel_program_free(prog);
    return 0;
}
