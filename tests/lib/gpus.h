/*
 * gpus.h - the default GPU resource set (GPU_SET_DEFAULT) as a cmocka group fixture, for the
 * unit tests that project, store or classify objects with the names the programs use by default.
 */
#ifndef GPUTRI_TEST_GPUS_H
#define GPUTRI_TEST_GPUS_H

#include "model/gpu.h"

/* The set, valid between test_gpus_setup() and test_gpus_teardown(). */
extern struct gpu_set test_gpus;

/*
 * test_gpus_setup() / test_gpus_teardown() - parse GPU_SET_DEFAULT into test_gpus / free it; the
 * group setup and teardown of cmocka_run_group_tests(). Setup returns 0, or -1 when the set
 * cannot be parsed (out of memory). Not thread-safe: call from the test's main thread.
 */
int test_gpus_setup(void **state);
int test_gpus_teardown(void **state);

#endif
