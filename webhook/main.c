/*
 * main.c - gputri-webhook: parse the flags (options.h), start serving (run.h), and stop on
 * SIGTERM or SIGINT.
 */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "kube/client.h"
#include "kube/exec.h"
#include "options.h"
#include "run.h"
#include "util/flags.h"
#include "util/log.h"
#include "util/result.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv)
{
    struct wh_options o;
    char err[512];
    if (wh_options_parse(argc, argv, &o, err, sizeof(err)) != K_OK) {
        fprintf(stderr, "gputri-webhook: %s\n", err);
        wh_options_usage(stderr);
        return 2;
    }
    if (flags_answer(&(struct flags_common){.help = o.help, .version = o.version}, "gputri-webhook",
                     wh_options_usage))
        return 0;
    log_set_verbosity(o.verbosity);
    log_set_format(o.log_format);
    kube_set_rate_limit(o.kube_api_qps, o.kube_api_burst, NULL); /* values checked by the parser */
    /* Blocks of 128 KiB and more (request bodies, large JSON strings and arrays) are mmapped
     * and go back to the system when freed. Setting the threshold turns off glibc's dynamic
     * raise of it, which after the first 3 MiB body would keep later ones in the arenas. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    kube_exec_set_daemon(); /* an exec plugin never prompts a daemon */

    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    /* block them in every thread; the main thread waits for them in sigsuspend() */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, &old);

    struct wh_run *r;
    int status = wh_run_start(&o, &r);
    if (status != 0)
        return status;
    while (!stop)
        sigsuspend(&old);
    log_info_kv(0, "shutting down: draining requests");
    wh_run_stop(r, WH_RUN_DRAIN_MS);
    return 0;
}
