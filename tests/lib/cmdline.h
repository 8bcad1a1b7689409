/*
 * cmdline.h - running a program's command line in a unit test: the entry point of its module
 * (gputri_main, plugin_main, certs_main) called with an argv built from a list of strings, its
 * two streams captured in memory, and a recording fake API server (fake_kube.h) for its client.
 */
#ifndef GPUTRI_TEST_CMDLINE_H
#define GPUTRI_TEST_CMDLINE_H

#include <stdarg.h>
#include <stdio.h>

#include "fake_kube.h"

/*
 * An entry point adapted to one shape: run argv[0..argc) writing to out and err, with `ctx` what
 * the test passes through (the fake's client). Returns the exit status.
 */
typedef int (*cmdline_main_fn)(int argc, char **argv, FILE *out, FILE *err, void *ctx);

/* What a run did: its exit status and what it wrote (NUL-terminated, "" when nothing). */
struct cmdline_run {
    int status;
    char *out, *err;
};

/*
 * cmdline_runv() - call fn with argv = argv0 then the strings of `ap` up to a NULL (at most 30;
 * each copied, so the program may write into argv as into a real one). The previous outputs of
 * `r` are freed first. Returns r->status; fails the running cmocka test when out of memory.
 */
int cmdline_runv(struct cmdline_run *r, cmdline_main_fn fn, void *ctx, const char *argv0,
                 va_list ap);

/* cmdline_run_cleanup() - free the outputs; `r` may run again. */
void cmdline_run_cleanup(struct cmdline_run *r);

/* A test's state for cmdline_setup()/cmdline_teardown(): the fake, its client, the last run. */
struct cmdline_fixture {
    struct fake_kube fake;
    struct kube_client *client;
    struct cmdline_run r;
};

/* cmocka setup/teardown: *state becomes a new struct cmdline_fixture, and is freed. */
int cmdline_setup(void **state);
int cmdline_teardown(void **state);

#endif
