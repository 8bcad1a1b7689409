/* test_triage.c - the explain header's annotation line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "classify/classify.h"
#include "triage.h"
#include "util/result.h"

static char *explain(const struct kpod *pod, enum cause cause)
{
    struct triage t = {.pod = pod};
    t.result.cause = cause;
    snprintf(t.result.detail, sizeof(t.result.detail), "d");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(triage_print_explain(&t, f), K_OK);
    assert_int_equal(fclose(f), 0);
    return text;
}

/* A pod without a GPU request is never annotated: explain says so instead of "not yet". */
static void test_annotation_line(void **state)
{
    (void)state;
    struct kpod pod = {.ns = (char *)"ns", .name = (char *)"p"};
    char *text = explain(&pod, CAUSE_NO_REQUEST);
    assert_non_null(strstr(text, "never annotates a pod without a GPU request"));
    assert_null(strstr(text, "has not annotated"));
    free(text);

    struct resource_amount req = {(char *)"nvidia.com/gpu", 1};
    pod.gpu_requests = (struct resource_list){&req, 1};
    pod.node_name = (char *)"n1";
    text = explain(&pod, CAUSE_OK);
    assert_non_null(strstr(text, "none (gputri-controller has not annotated the pod)"));
    free(text);

    pod.cause = (char *)"ok";
    text = explain(&pod, CAUSE_OK);
    assert_non_null(strstr(text, "gputri/cause=ok"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_annotation_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
