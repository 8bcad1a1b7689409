/* cmdline.c - a program's command line run in a unit test (cmdline.h). */
#include "cmdline.h"

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define ARGS_MAX 32

int cmdline_runv(struct cmdline_run *r, cmdline_main_fn fn, void *ctx, const char *argv0,
                 va_list ap)
{
    char *argv[ARGS_MAX];
    int argc = 0;
    argv[argc++] = strdup(argv0);
    for (const char *a; argc < ARGS_MAX - 1 && (a = va_arg(ap, const char *)) != NULL;)
        argv[argc++] = strdup(a);
    argv[argc] = NULL;
    for (int i = 0; i < argc; i++)
        assert_non_null(argv[i]);
    cmdline_run_cleanup(r);
    size_t olen, elen;
    FILE *out = open_memstream(&r->out, &olen), *err = open_memstream(&r->err, &elen);
    assert_non_null(out);
    assert_non_null(err);
    r->status = fn(argc, argv, out, err, ctx);
    fclose(out);
    fclose(err);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    return r->status;
}

void cmdline_run_cleanup(struct cmdline_run *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

int cmdline_setup(void **state)
{
    struct cmdline_fixture *fx = calloc(1, sizeof(*fx));
    if (!fx)
        return -1;
    fake_kube_init(&fx->fake);
    fx->client = fake_kube_client(&fx->fake);
    *state = fx;
    return fx->client ? 0 : -1;
}

int cmdline_teardown(void **state)
{
    struct cmdline_fixture *fx = *state;
    cmdline_run_cleanup(&fx->r);
    kube_client_free(fx->client);
    fake_kube_cleanup(&fx->fake);
    free(fx);
    return 0;
}
