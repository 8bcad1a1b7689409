/*
 * gpu.h - which extended resources count as GPUs.
 *
 * A GPU set is a list of patterns: an exact resource name ("nvidia.com/gpu") or a prefix ending
 * in '*' ("nvidia.com/mig-*"; "gpu.intel.com/" + "*" for a whole domain). The default set
 * (GPU_SET_DEFAULT) covers:
 *   nvidia.com/gpu, nvidia.com/gpu.shared   NVIDIA device plugin, time-slicing renamed
 *   nvidia.com/mig-*                        NVIDIA MIG profiles (mixed strategy)
 *   amd.com/gpu                             AMD device plugin
 *   gpu.intel.com/ + *                      Intel GPU plugin (i915, xe, millicores, memory...)
 *   tke.cloud.tencent.com/qgpu-core, tke.cloud.tencent.com/qgpu-memory   Tencent qGPU slicing
 *   alpha.kubernetes.io/nvidia-gpu          the pre-device-plugin resource, still seen in the wild
 * The controller and the CLI take --gpu-resources=a,b,c to replace it.
 * A set is immutable after gpu_set_parse() and may be shared between threads.
 */
#ifndef GPUTRI_GPU_H
#define GPUTRI_GPU_H

#include <stdbool.h>
#include <stddef.h>

#define GPU_SET_DEFAULT                                                                            \
    "nvidia.com/gpu,nvidia.com/gpu.shared,nvidia.com/mig-*,amd.com/gpu,gpu.intel.com/*,"           \
    "tke.cloud.tencent.com/qgpu-core,tke.cloud.tencent.com/qgpu-memory,"                           \
    "alpha.kubernetes.io/nvidia-gpu"

/*
 * The DRA counterpart: DeviceClass and driver name patterns (same syntax) whose requests count as
 * GPU requests (a request counts when its DeviceClass name, or the driver that class selects,
 * matches; model/dra.h dra_class.driver). The controller and the CLI take
 * --gpu-device-classes=a,b to replace it (beside --gpu-resources). Default: NVIDIA gpu.nvidia.com
 * and mig.nvidia.com (k8s-dra-driver-gpu), Intel gpu.intel.com, AMD gpu.amd.com, and every name
 * beginning with "gpu.".
 */
#define DRA_GPU_SET_DEFAULT "gpu.nvidia.com,mig.nvidia.com,gpu.intel.com,gpu.amd.com,gpu.*"

struct gpu_set {
    char **patterns;
    size_t n;
};

/*
 * gpu_set_parse() - parse a comma-separated pattern list into `set` (which it overwrites).
 * Whitespace around entries is ignored; empty entries are skipped. Returns K_OK, K_EINVAL for an
 * empty list or a '*' anywhere but at the end, or K_ENOMEM.
 */
int gpu_set_parse(struct gpu_set *set, const char *csv);

/*
 * gpu_set_invalid_reason() - why gpu_set_parse() rejects `csv` with K_EINVAL, for a message:
 * "no resource names" (empty, or only commas and blanks) or "'*' may only end a name", and NULL
 * when the list parses (allocation is not tried). Static string. Pure; thread-safe.
 */
const char *gpu_set_invalid_reason(const char *csv);

/* gpu_set_contains() - whether `resource` is a GPU resource under this set. */
bool gpu_set_contains(const struct gpu_set *set, const char *resource);

/* gpu_set_cleanup() - free the patterns. */
void gpu_set_cleanup(struct gpu_set *set);

/*
 * gpu_vendor_scheduler() - for an extended resource that only a vendor's own scheduler places
 * (HAMi's nvidia.com/gpumem, nvidia.com/gpumem-percentage, nvidia.com/gpucores; Volcano's
 * volcano.sh/vgpu-number, vgpu-memory, vgpu-cores): the scheduler's usual name ("hami-scheduler",
 * "volcano"), and through *canonical the table's own copy of the resource name (static). NULL for
 * any other resource. No node advertises these as capacity; the default scheduler then reports
 * "Insufficient <resource>". Pure; thread-safe.
 */
const char *gpu_vendor_scheduler(const char *resource, const char **canonical);

#endif
