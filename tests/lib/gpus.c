/* gpus.c - the default GPU set as a cmocka group fixture (see gpus.h). */
#include "gpus.h"

#include "util/result.h"

struct gpu_set test_gpus;

int test_gpus_setup(void **state)
{
    (void)state;
    return gpu_set_parse(&test_gpus, GPU_SET_DEFAULT) == K_OK ? 0 : -1;
}

int test_gpus_teardown(void **state)
{
    (void)state;
    gpu_set_cleanup(&test_gpus);
    return 0;
}
