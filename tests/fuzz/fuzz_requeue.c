/*
 * fuzz_requeue.c - libFuzzer target for the targeted re-check policy (core/triage/requeue.c)
 * against re-checking every pending pod.
 *
 * The input is a sequence of changes, 4 bytes each (op, a, b, c as tests/lib/requeue_model.h
 * reads them: pods created, respecified, bound, finished, deleted; nodes added, removed,
 * relabelled, tainted, cordoned, their capacity or allocatable changed; a DeviceClass, slices,
 * claims allocated and released), at most 4096 of them,
 * applied to an empty cluster of up to 6 nodes and 12 pods. After each change the model
 * re-checks the pods the policy names and compares every pending GPU pod's recorded word with
 * its classification from scratch; a difference aborts with the step, the pod and both words.
 * The unit test tests/unit/core/triage/test_requeue.c runs fixed seeds of the same model.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "requeue_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_STEPS 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rq_model *m = rq_model_new();
    if (!m)
        return 0;
    for (size_t i = 0; i + 4 <= size && i / 4 < MAX_STEPS; i += 4) {
        if (rq_model_step(m, data[i], data[i + 1], data[i + 2], data[i + 3]) != 0) {
            fprintf(stderr, "fuzz_requeue: %s\n", rq_model_why(m));
            abort();
        }
    }
    rq_model_free(m);
    return 0;
}
