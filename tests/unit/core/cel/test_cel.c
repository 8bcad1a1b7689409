/*
 * test_cel.c - core/cel/cel.c against upstream's own CEL cases
 * (kubernetes/kubernetes: staging/src/k8s.io/dynamic-resource-allocation/cel/compile_test.go)
 * and the DeviceClasses and example claims of the NVIDIA (NVIDIA/k8s-dra-driver-gpu), Intel
 * (intel/intel-resource-drivers-for-kubernetes) and AMD (ROCm/k8s-gpu-dra-driver) DRA drivers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cel/cel.h"
#include "util/clock.h"

#define A_LIST 99 /* an attribute kind the library does not model (list-valued) */

struct tattr {
    const char *domain, *name;
    int kind;
    bool b;
    int64_t i;
    const char *s;
};

struct tcap {
    const char *domain, *name, *quantity;
};

struct tdev {
    const char *driver;
    struct tattr attrs[8];
    struct tcap caps[4];
};

static bool same(const char *a, const char *b, size_t blen)
{
    return strlen(a) == blen && memcmp(a, b, blen) == 0;
}

static enum cel_lookup t_attr(const void *ctx, const char *domain, size_t dlen, const char *name,
                              size_t nlen, struct cel_attr_value *out)
{
    const struct tdev *d = ctx;
    for (size_t k = 0; k < 8 && d->attrs[k].domain; k++) {
        const struct tattr *a = &d->attrs[k];
        if (!same(a->domain, domain, dlen))
            continue;
        if (!name)
            return CEL_LOOKUP_FOUND;
        if (!same(a->name, name, nlen))
            continue;
        if (a->kind == A_LIST)
            return CEL_LOOKUP_UNKNOWN;
        out->kind = (enum cel_attr_kind)a->kind;
        out->b = a->b;
        out->i = a->i;
        out->s = a->s;
        out->len = a->s ? strlen(a->s) : 0;
        return CEL_LOOKUP_FOUND;
    }
    return CEL_LOOKUP_MISSING;
}

static enum cel_lookup t_cap(const void *ctx, const char *domain, size_t dlen, const char *name,
                             size_t nlen, int64_t *milli)
{
    const struct tdev *d = ctx;
    for (size_t k = 0; k < 4 && d->caps[k].domain; k++) {
        const struct tcap *c = &d->caps[k];
        if (!same(c->domain, domain, dlen))
            continue;
        if (!name)
            return CEL_LOOKUP_FOUND;
        if (same(c->name, name, nlen))
            return cel_quantity_milli(c->quantity, milli);
    }
    return CEL_LOOKUP_MISSING;
}

#define EX "dra.example.com"
#define NV "gpu.nvidia.com"
#define IG "gpu.intel.com"

#define ABOOL(d, n, v)                                                                             \
    {                                                                                              \
        d, n, CEL_ATTR_BOOL, v, 0, NULL                                                            \
    }
#define AINT(d, n, v)                                                                              \
    {                                                                                              \
        d, n, CEL_ATTR_INT, false, v, NULL                                                         \
    }
#define ASTR(d, n, v)                                                                              \
    {                                                                                              \
        d, n, CEL_ATTR_STRING, false, 0, v                                                         \
    }
#define AVER(d, n, v)                                                                              \
    {                                                                                              \
        d, n, CEL_ATTR_VERSION, false, 0, v                                                        \
    }
#define ALIST(d, n)                                                                                \
    {                                                                                              \
        d, n, A_LIST, false, 0, NULL                                                               \
    }

/* Devices of upstream's compile_test.go (unqualified names filed under the driver's domain). */
static const struct tdev dev_none = {.driver = ""};
static const struct tdev dev_example = {.driver = EX};
static const struct tdev dev_something = {.driver = "", .attrs = {ABOOL(EX, "something", true)}};
static const struct tdev dev_name_bool = {.driver = EX, .attrs = {ABOOL(EX, "name", true)}};
static const struct tdev dev_other_bool = {.driver = EX,
                                           .attrs = {ABOOL("other.example.com", "name", true)}};
static const struct tdev dev_name_int = {.driver = EX, .attrs = {AINT(EX, "name", 1)}};
static const struct tdev dev_name_str = {.driver = EX, .attrs = {ASTR(EX, "name", "fish")}};
static const struct tdev dev_name_ver = {.driver = EX, .attrs = {AVER(EX, "name", "1.0.0")}};
static const struct tdev dev_names_list = {.driver = EX, .attrs = {ALIST(EX, "names")}};
static const struct tdev dev_cap_name = {.driver = EX, .caps = {{EX, "name", "1Mi"}}};
static const struct tdev dev_all = {.driver = EX,
                                    .attrs = {ABOOL(EX, "bool", true), AINT(EX, "int", 1),
                                              ASTR(EX, "string", "fish"),
                                              AVER(EX, "version", "1.0.0")},
                                    .caps = {{EX, "quantity", "1Mi"}}};
static const struct tdev dev_many = {
    .driver = EX, .attrs = {ABOOL(EX, "a", true), ABOOL(EX, "b", true), ABOOL(EX, "c", true)}};
static const struct tdev dev_cap_unknown = {.driver = EX, .caps = {{EX, "tiny", "1n"}}};

/* Devices as the drivers publish them (attribute names from their deviceinfo code and docs). */
static const struct tdev nv_gpu = {
    .driver = NV,
    .attrs = {ASTR(NV, "type", "gpu"), ASTR(NV, "productName", "NVIDIA A100-SXM4-40GB"),
              AINT(NV, "index", 0), AVER(NV, "driverVersion", "550.54.15"),
              AVER(NV, "cudaComputeCapability", "8.0.0")},
    .caps = {{NV, "memory", "40Gi"}}};
static const struct tdev nv_mig = {
    .driver = NV,
    .attrs = {ASTR(NV, "type", "mig"), ASTR(NV, "profile", "1g.5gb"), AINT(NV, "index", 2)},
    .caps = {{NV, "multiprocessors", "14"}, {NV, "memory", "4864Mi"}}};
static const struct tdev intel_gpu = {
    .driver = IG,
    .attrs = {ASTR(IG, "family", "Flex"), ABOOL(IG, "sriov", true), ASTR(IG, "driver", "i915")},
    .caps = {{IG, "memory", "16Gi"}, {IG, "millicores", "1k"}}};
static const struct tdev intel_gaudi = {.driver = "gaudi.intel.com",
                                        .attrs = {ASTR("gaudi.intel.com", "model", "Gaudi2"),
                                                  ABOOL("gaudi.intel.com", "healthy", true)}};
static const struct tdev intel_qat = {.driver = "qat.intel.com",
                                      .attrs = {ASTR("qat.intel.com", "services", "sym;asym")}};
static const struct tdev amd_gpu = {.driver = "gpu.amd.com",
                                    .attrs = {ASTR("gpu.amd.com", "type", "amdgpu")},
                                    .caps = {{"gpu.amd.com", "memory", "192Gi"}}};

#define OKT CEL_OK, CEL_TRUE
#define OKF CEL_OK, CEL_FALSE
#define OKE CEL_OK, CEL_ERROR
#define OKU CEL_OK, CEL_UNKNOWN
#define UNS CEL_UNSUPPORTED, 0
#define INV CEL_INVALID, 0
#define LIM CEL_LIMIT, 0

struct ccase {
    const char *name;
    const char *expr;
    const struct tdev *dev;
    int status;
    enum cel_result want;
    const char *msg; /* substring of the compile or eval message, or NULL */
};

static const struct ccase upstream_cases[] = {
    {"true", "true", &dev_none, OKT, NULL},
    {"false", "false", &dev_none, OKF, NULL},
    {"syntax-error", "?!", &dev_none, INV, NULL},
    {"type-error", "1", &dev_none, INV, "must evaluate to bool"},
    {"runtime-error-lookup-identifier",
     "device.attributes[\"no-such-domain\"].noSuchAttr.isGreaterThan(quantity(\"0\"))", &dev_none,
     OKE, "no such key: noSuchAttr"},
    {"runtime-error-lookup-map",
     "device.attributes[\"no-such-domain\"][\"noSuchAttr\"].isGreaterThan(quantity(\"0\"))",
     &dev_none, OKE, "no such key: noSuchAttr"},
    {"domain-check-negative", "\"no-such-domain\" in device.attributes", &dev_none, OKF, NULL},
    {"domain-check-positive", "\"dra.example.com\" in device.attributes", &dev_something, OKT,
     NULL},
    {"empty-driver-name", "device.driver == \"\"", &dev_none, OKT, NULL},
    {"real-driver-name", "device.driver == \"dra.example.com\"", &dev_example, OKT, NULL},
    {"driver-name-qualifier", "device.attributes[\"dra.example.com\"].name", &dev_name_bool, OKT,
     NULL},
    {"driver-name-qualifier-map-lookup", "device.attributes[\"dra.example.com\"][\"name\"]",
     &dev_name_bool, OKT, NULL},
    {"bind", "cel.bind(dra, device.attributes[\"dra.example.com\"], dra.name)", &dev_name_bool, UNS,
     "identifier cel"},
    {"qualified-attribute-name", "device.attributes[\"other.example.com\"].name", &dev_other_bool,
     OKT, NULL},
    {"bool", "device.attributes[\"dra.example.com\"].name", &dev_name_bool, OKT, NULL},
    {"int", "device.attributes[\"dra.example.com\"].name > 0", &dev_name_int, OKT, NULL},
    {"string", "device.attributes[\"dra.example.com\"].name == \"fish\"", &dev_name_str, OKT, NULL},
    {"macro-exists-on-int", "device.attributes[\"dra.example.com\"].name.exists(x, x > 0)",
     &dev_name_int, UNS, "method exists()"},
    {"list-result-type-causes-match-error", "device.attributes[\"dra.example.com\"].names",
     &dev_names_list, OKU, NULL},
    {"includes-function", "device.attributes[\"dra.example.com\"].name.includes(\"fish\")",
     &dev_name_str, UNS, "method includes()"},
    {"list-of-string", "device.attributes[\"dra.example.com\"].names.size() == 2", &dev_names_list,
     UNS, "method size()"},
    {"in-operator-on-list", "1 in device.attributes[\"dra.example.com\"].names", &dev_names_list,
     UNS, "'in' on dyn"},
    {"version", "device.attributes[\"dra.example.com\"].name.isGreaterThan(semver(\"0.0.1\"))",
     &dev_name_ver, OKT, NULL},
    {"version_v",
     "device.attributes[\"dra.example.com\"].name.isGreaterThan(semver(\"v0.0.1\", true)) && "
     "isSemver(\"v1.0.0\", true)",
     &dev_name_ver, UNS, "function isSemver()"},
    {"version_v without isSemver",
     "device.attributes[\"dra.example.com\"].name.isGreaterThan(semver(\"v0.0.1\", true))",
     &dev_name_ver, OKT, NULL},
    {"macro-exists-on-version",
     "device.attributes[\"dra.example.com\"].name.exists(x, x.isGreaterThan(semver(\"0.0.1\")))",
     &dev_name_ver, UNS, NULL},
    {"quantity", "device.capacity[\"dra.example.com\"].name.isGreaterThan(quantity(\"1Ki\"))",
     &dev_cap_name, OKT, NULL},
    {"check-positive",
     "\"name\" in device.capacity[\"dra.example.com\"] && "
     "device.capacity[\"dra.example.com\"].name.isGreaterThan(quantity(\"1Ki\"))",
     &dev_cap_name, OKT, NULL},
    {"check-negative",
     "!(\"name\" in device.capacity[\"dra.example.com\"]) || "
     "device.capacity[\"dra.example.com\"].name.isGreaterThan(quantity(\"1Ki\"))",
     &dev_none, OKT, NULL},
    {"all",
     "\ndevice.capacity[\"dra.example.com\"].quantity.isGreaterThan(quantity(\"1Ki\")) &&\n"
     "device.attributes[\"dra.example.com\"].bool &&\n"
     "device.attributes[\"dra.example.com\"].int > 0 &&\n"
     "device.attributes[\"dra.example.com\"].string == \"fish\" &&\n"
     "device.attributes[\"dra.example.com\"].version.isGreaterThan(semver(\"0.0.1\")) &&\n"
     "device.capacity[\"dra.example.com\"][\"quantity\"].isGreaterThan(quantity(\"1Ki\")) &&\n"
     "device.attributes[\"dra.example.com\"][\"bool\"] &&\n"
     "device.attributes[\"dra.example.com\"][\"int\"] > 0 &&\n"
     "device.attributes[\"dra.example.com\"][\"string\"] == \"fish\" &&\n"
     "device.attributes[\"dra.example.com\"][\"version\"].isGreaterThan(semver(\"0.0.1\"))\n",
     &dev_all, OKT, NULL},
    {"many",
     "device.attributes[\"dra.example.com\"].a && device.attributes[\"dra.example.com\"].b && "
     "device.attributes[\"dra.example.com\"].c",
     &dev_many, OKT, NULL},
    {"check_attribute_domains", "device.attributes.exists_one(x, x == \"dra.example.com\")",
     &dev_example, UNS, NULL},
    {"split_attribute",
     "device.attributes[\"dra.example.com\"].services.split(\"example\").size() >= 2", &dev_example,
     UNS, "method split()"},
    {"regexp_attribute", "device.attributes[\"dra.example.com\"].services.matches(\"[^a]?sym\")",
     &dev_example, UNS, "method matches()"},
    {"expensive",
     "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, true))",
     &dev_example, UNS, "method all()"},
    {"allow_multiple_allocations", "device.allowMultipleAllocations == true", &dev_example, UNS,
     "field device.allowMultipleAllocations"},
};

static const struct ccase driver_cases[] = {
    /* NVIDIA DeviceClasses (deployments/helm/.../deviceclass-*.yaml) */
    {"nv class gpu on gpu",
     "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
     &nv_gpu, OKT, NULL},
    {"nv class gpu on mig",
     "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
     &nv_mig, OKF, NULL},
    {"nv class gpu on amd (false && error)",
     "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
     &amd_gpu, OKF, NULL},
    {"nv class mig on mig",
     "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",
     &nv_mig, OKT, NULL},
    {"nv class mig profile",
     "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig' && "
     "device.attributes['gpu.nvidia.com'].profile == '1g.12gb'",
     &nv_mig, OKF, NULL},
    {"nv class vfio",
     "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'vfio'",
     &nv_gpu, OKF, NULL},
    {"nv compute-domain channel on gpu",
     "device.driver == 'compute-domain.nvidia.com' && "
     "device.attributes['compute-domain.nvidia.com'].type == 'channel' && "
     "device.attributes['compute-domain.nvidia.com'].id == 0",
     &nv_gpu, OKF, NULL},
    /* NVIDIA examples (demo/specs/quickstart, tests/bats/specs) */
    {"nv mig profile on mig", "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'", &nv_mig,
     OKT, NULL},
    {"nv mig profile on full gpu: no such key",
     "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'", &nv_gpu, OKE,
     "no such key: profile"},
    {"nv simple-mig",
     "device.capacity['gpu.nvidia.com'].multiprocessors.isGreaterThan(quantity(\"10\"))\n&&\n"
     "device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity(\"10Gi\"))\n",
     &nv_mig, OKF, NULL},
    {"nv multiple-mig small",
     "device.capacity['gpu.nvidia.com'].multiprocessors.isLessThan(quantity(\"30\"))\n", &nv_mig,
     OKT, NULL},
    {"nv multiple-mig large",
     "device.capacity['gpu.nvidia.com'].multiprocessors.isGreaterThan(quantity(\"50\"))\n", &nv_mig,
     OKF, NULL},
    {"nv gpu-test6",
     "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$')\n&&\n"
     "(device.attributes['gpu.nvidia.com'].index == 0 ||\n"
     " device.attributes['gpu.nvidia.com'].index == 2 ||\n"
     " device.attributes['gpu.nvidia.com'].index == 4 ||\n"
     " device.attributes['gpu.nvidia.com'].index == 6)\n",
     &nv_gpu, UNS, "method lowerAscii()"},
    {"nv gpu-test6 index part",
     "(device.attributes['gpu.nvidia.com'].index == 0 ||\n"
     " device.attributes['gpu.nvidia.com'].index == 2 ||\n"
     " device.attributes['gpu.nvidia.com'].index == 4 ||\n"
     " device.attributes['gpu.nvidia.com'].index == 6)\n",
     &nv_mig, OKT, NULL},
    {"nv nonexistent product",
     "device.attributes[\"gpu.nvidia.com\"].productName == \"NONEXISTENT-GPU-XYZ\"", &nv_gpu, OKF,
     NULL},
    {"nv product A100",
     "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-40GB'", &nv_gpu, OKT,
     NULL},
    {"nv memory compareTo",
     "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0", &nv_gpu, OKT,
     NULL},
    {"nv driverVersion",
     "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('550.0.0'))", &nv_gpu,
     OKT, NULL},
    {"nv cudaComputeCapability",
     "device.attributes['gpu.nvidia.com'].cudaComputeCapability.compareTo(semver('9.0.0')) >= 0",
     &nv_gpu, OKF, NULL},
    /* Intel DeviceClasses and examples */
    {"intel class", "device.driver == \"gpu.intel.com\"", &intel_gpu, OKT, NULL},
    {"intel memory 16Gi",
     "device.capacity[\"gpu.intel.com\"].memory.compareTo(quantity(\"16Gi\")) >= 0", &intel_gpu,
     OKT, NULL},
    {"intel memory 4Gi",
     "device.capacity[\"gpu.intel.com\"].memory.compareTo(quantity(\"4Gi\")) >= 0", &intel_gpu, OKT,
     NULL},
    {"intel sriov", "device.attributes[\"gpu.intel.com\"].sriov == true", &intel_gpu, OKT, NULL},
    {"intel family", "device.attributes[\"gpu.intel.com\"].family == 'Flex'", &intel_gpu, OKT,
     NULL},
    {"intel family startsWith", "device.attributes[\"gpu.intel.com\"].family.startsWith(\"Arc\")",
     &intel_gpu, OKF, NULL},
    {"intel vfio",
     "device.attributes[\"gpu.intel.com\"].driver == 'vfio-pci' || "
     "device.attributes[\"gpu.intel.com\"].driver == 'xe-vfio-pci'",
     &intel_gpu, OKF, NULL},
    {"intel i915", "device.attributes[\"gpu.intel.com\"].driver == \"i915\"", &intel_gpu, OKT,
     NULL},
    {"gaudi model", "device.attributes[\"gaudi.intel.com\"].model == 'Gaudi2'", &intel_gaudi, OKT,
     NULL},
    {"gaudi model 3", "device.attributes[\"gaudi.intel.com\"].model == 'Gaudi3'", &intel_gaudi, OKF,
     NULL},
    {"gaudi healthy", "device.attributes[\"gaudi.intel.com\"].healthy == true", &intel_gaudi, OKT,
     NULL},
    {"qat sym",
     "device.attributes[\"qat.intel.com\"].services == \"sym\" ||\n"
     "device.attributes[\"qat.intel.com\"].services == \"sym;asym\" ||\n"
     "device.attributes[\"qat.intel.com\"].services == \"sym;dc\" ||\n"
     "device.attributes[\"qat.intel.com\"].services == \"asym;sym\" ||\n"
     "device.attributes[\"qat.intel.com\"].services == \"dc;sym\"",
     &intel_qat, OKT, NULL},
    {"qat dc",
     "device.attributes[\"qat.intel.com\"].services == \"dc\" ||\n"
     "device.attributes[\"qat.intel.com\"].services == \"dc;sym\" ||\n"
     "device.attributes[\"qat.intel.com\"].services == \"dcc\"",
     &intel_qat, OKF, NULL},
    {"dranet rdma", "device.attributes[\"dra.net/rdma\"].bool == true", &intel_qat, OKE,
     "no such key: bool"},
    /* AMD */
    {"amd class", "device.driver == 'gpu.amd.com'", &amd_gpu, OKT, NULL},
    {"amd full gpu", "device.attributes[\"gpu.amd.com\"].type == \"amdgpu\"", &amd_gpu, OKT, NULL},
    {"amd partition", "device.attributes[\"gpu.amd.com\"].type == \"amdgpu-partition\"", &amd_gpu,
     OKF, NULL},
};

static const struct ccase semantic_cases[] = {
    /* && and || are commutative over errors */
    {"false && error", "false && device.attributes['x'].y", &dev_none, OKF, NULL},
    {"error && false", "device.attributes['x'].y && false", &dev_none, OKF, NULL},
    {"true && error", "true && device.attributes['x'].y", &dev_none, OKE, "no such key: y"},
    {"true || error", "true || device.attributes['x'].y", &dev_none, OKT, NULL},
    {"error || true", "device.attributes['x'].y || true", &dev_none, OKT, NULL},
    {"error || false", "device.attributes['x'].y || false", &dev_none, OKE, NULL},
    {"!error", "!device.attributes['x'].y", &dev_none, OKE, NULL},
    {"non-bool operand", "device.attributes['dra.example.com'].name && true", &dev_name_str, OKE,
     "no such overload"},
    {"non-bool operand absorbed", "device.attributes['dra.example.com'].name && false",
     &dev_name_str, OKF, NULL},
    {"non-bool result", "device.attributes['dra.example.com'].name", &dev_name_str, OKE,
     "not a bool"},
    /* unknown values: decide only what is certain */
    {"unknown", "device.capacity['dra.example.com'].tiny.isGreaterThan(quantity('0'))",
     &dev_cap_unknown, OKU, NULL},
    {"false && unknown", "false && device.capacity['dra.example.com'].tiny == quantity('0')",
     &dev_cap_unknown, OKF, NULL},
    {"true && unknown", "true && device.capacity['dra.example.com'].tiny == quantity('0')",
     &dev_cap_unknown, OKU, NULL},
    {"error && unknown",
     "device.attributes['x'].y && device.capacity['dra.example.com'].tiny == quantity('0')",
     &dev_cap_unknown, OKU, NULL},
    {"has unknown", "'tiny' in device.capacity['dra.example.com']", &dev_cap_unknown, OKT, NULL},
    /* heterogeneous equality (cel-go) */
    {"int attr == string", "device.attributes['dra.example.com'].name == 'a'", &dev_name_int, OKF,
     NULL},
    {"int attr != string", "device.attributes['dra.example.com'].name != 'a'", &dev_name_int, OKT,
     NULL},
    {"version attr == string", "device.attributes['dra.example.com'].name == '1.0.0'",
     &dev_name_ver, OKE, "no such overload"},
    {"version attr != string (Equal is not true)",
     "device.attributes['dra.example.com'].name != '1.0.0'", &dev_name_ver, OKT, NULL},
    {"capacity != int attribute",
     "device.capacity['dra.example.com'].quantity != device.attributes['dra.example.com'].int",
     &dev_all, OKT, NULL},
    {"version == version", "device.attributes['dra.example.com'].name == semver('1.0.0+b')",
     &dev_name_ver, OKT, NULL},
    {"int literal == string literal", "1 == 'a'", &dev_none, UNS, "comparison of int with string"},
    {"int attr < string", "device.attributes['dra.example.com'].name < 'a'", &dev_name_int, OKE,
     NULL},
    {"bool ordering", "false < true", &dev_none, OKT, NULL},
    {"string ordering", "'abc' < 'abd' && 'ab' < 'abc' && !('b' <= 'a')", &dev_none, OKT, NULL},
    {"quantity ordering operator", "quantity('1') < quantity('2')", &dev_none, UNS, NULL},
    {"capacity equality", "device.capacity['dra.example.com'].name == quantity('1024Ki')",
     &dev_cap_name, OKT, NULL},
    {"capacity vs string", "device.capacity['dra.example.com'].name == '1Mi'", &dev_cap_name, UNS,
     NULL},
    {"missing capacity", "device.capacity['dra.example.com'].other == quantity('1')", &dev_cap_name,
     OKE, "no such key: other"},
    {"compareTo on int attr",
     "device.attributes['dra.example.com'].name.compareTo(quantity('1')) == 0", &dev_name_int, OKE,
     NULL},
    /* in */
    {"in list", "device.attributes['dra.example.com'].name in ['x', 'fish']", &dev_name_str, OKT,
     NULL},
    {"in list mixed", "device.attributes['dra.example.com'].name in ['1', 1]", &dev_name_int, UNS,
     "mixed-type list literal"},
    {"in int list", "device.attributes['dra.example.com'].name in [2, 1]", &dev_name_int, OKT,
     NULL},
    {"int in string list", "1 in ['1']", &dev_none, UNS, "int in list of string"},
    {"dyn does not join list types", "'a' in [device.attributes['x'].y, 'a']", &dev_none, UNS,
     "mixed-type list literal"},
    {"not in list", "device.attributes['dra.example.com'].name in ['x', 'y',]", &dev_name_str, OKF,
     NULL},
    {"in empty list", "1 in []", &dev_none, OKF, NULL},
    {"error in empty list", "device.attributes['x'].y in []", &dev_none, OKF, NULL},
    {"error in list", "device.attributes['x'].y in ['a']", &dev_none, OKE, "no such key: y"},
    {"version in strings", "device.attributes['dra.example.com'].name in ['1.0.0']", &dev_name_ver,
     OKE, "unhashable"},
    {"version in literals aborts even under false &&",
     "device.attributes['dra.example.com'].name in ['1.0.0'] && false", &dev_name_ver, OKE,
     "unhashable"},
    {"false && version in literals is never evaluated",
     "false && device.attributes['dra.example.com'].name in ['1.0.0']", &dev_name_ver, OKF, NULL},
    {"version in non-literal list: Equal error does not match",
     "device.attributes['dra.example.com'].name in [device.driver]", &dev_name_ver, OKF, NULL},
    {"quantity in list of int attribute",
     "device.capacity['dra.example.com'].quantity in [device.attributes['dra.example.com'].int]",
     &dev_all, OKF, NULL},
    {"version in versions",
     "device.attributes['dra.example.com'].name in [semver('2.0.0'), semver('1.0.0')]",
     &dev_name_ver, OKT, NULL},
    {"in list with error element",
     "device.attributes['x'].y in [device.attributes['x'].z, device.attributes['x'].y]", &dev_none,
     OKE, NULL},
    {"in device.driver", "'a' in device.driver", &dev_none, UNS, NULL},
    {"has", "has(device.attributes['dra.example.com'].name)", &dev_name_bool, OKT, NULL},
    {"has missing", "has(device.attributes['dra.example.com'].other)", &dev_name_bool, OKF, NULL},
    {"has capacity", "has(device.capacity['dra.example.com'].name)", &dev_cap_name, OKT, NULL},
    {"has on index", "has(device.attributes['dra.example.com']['name'])", &dev_name_bool, UNS,
     NULL},
    {"has on domain", "has(device.attributes.foo)", &dev_name_bool, UNS, NULL},
    {"domain as field", "device.attributes.foo.bar == 1", &dev_none, OKE, "no such key: bar"},
    /* literals */
    {"escapes", "device.driver == 'dra\\x2eexample\\u002e\\U00000063om'", &dev_example, OKT, NULL},
    {"octal", "'\\101\\102' == 'AB' && '\\a\\b\\f\\n\\r\\t\\v\\\\\\'\\\"\\?\\`' != ''", &dev_none,
     OKT, NULL},
    {"raw string", "r'\\d' == '\\\\d' && R\"a\\\"\" != ''", &dev_none, INV, NULL},
    {"raw string ok", "r'\\d' == '\\\\d'", &dev_none, OKT, NULL},
    {"triple quotes", "'''a\n'b''' == \"a\\n'b\" && \"\"\"x\"\"\" == 'x'", &dev_none, OKT, NULL},
    {"utf-8", "'\\u00e9' == '\xc3\xa9'", &dev_none, OKT, NULL},
    {"not utf-8", "'\xff' == ''", &dev_none, UNS, "UTF-8"},
    {"overlong utf-8", "'\xc0\xaf' == ''", &dev_none, UNS, "UTF-8"},
    {"truncated utf-8", "'' == '\xe2\x82", &dev_none, UNS, "UTF-8"},
    {"bad escape", "'\\q' == ''", &dev_none, INV, "escape"},
    {"surrogate", "'\\ud800' == ''", &dev_none, INV, NULL},
    {"unterminated", "'abc", &dev_none, INV, "unterminated"},
    {"newline in string", "'a\nb' == ''", &dev_none, INV, NULL},
    {"comment", "true // and more\n && !false", &dev_none, OKT, NULL},
    {"negative int", "-1 < 0 && -9223372036854775808 < 0 && 9223372036854775807 > 0", &dev_none,
     OKT, NULL},
    {"hex", "0x10 == 16 && 0xfF == 255 && -0x8000000000000000 < 0", &dev_none, OKT, NULL},
    {"hex with capital X", "0XfF == 255", &dev_none, INV, NULL},
    {"int overflow", "9223372036854775808 > 0", &dev_none, INV, "out of range"},
    {"double", "1.5 > 1", &dev_none, UNS, "double literal"},
    {"double exp", "1e3 > 1", &dev_none, UNS, "double literal"},
    {"uint", "1u == 1u", &dev_none, UNS, "uint literal"},
    {"bytes", "b'a' == b'a'", &dev_none, UNS, "bytes literal"},
    {"null", "device.driver == null", &dev_none, UNS, "null"},
    /* quantity() and semver() */
    {"quantity sub-milli", "quantity('1n') == quantity('1n')", &dev_none, UNS, "quantity"},
    {"quantity junk", "quantity('abc') == quantity('1')", &dev_none, UNS, NULL},
    {"quantity of non-literal", "quantity(device.driver) == quantity('1')", &dev_none, UNS, NULL},
    {"quantity compareTo", "quantity('1500m').compareTo(quantity('1.5')) == 0", &dev_none, OKT,
     NULL},
    {"semver invalid", "semver('1.0').isLessThan(semver('2.0.0'))", &dev_none, OKE, "semver"},
    {"semver leading zero", "semver('01.0.0') == semver('1.0.0')", &dev_none, OKE, NULL},
    {"semver normalize", "semver('1.0', true).compareTo(semver('1.0.0')) == 0", &dev_none, OKT,
     NULL},
    {"semver normalize v", "semver('v01.02.03', true) == semver('1.2.3')", &dev_none, OKT, NULL},
    {"semver normalize short pre", "semver('1-alpha', true) == semver('1.0.0')", &dev_none, OKE,
     NULL},
    {"semver pre < release", "semver('1.0.0-alpha').isLessThan(semver('1.0.0'))", &dev_none, OKT,
     NULL},
    {"semver pre order",
     "semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1')) && "
     "semver('1.0.0-alpha.1').isLessThan(semver('1.0.0-alpha.beta')) && "
     "semver('1.0.0-beta.2').isLessThan(semver('1.0.0-beta.11')) && "
     "semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))",
     &dev_none, OKT, NULL},
    {"semver build ignored", "semver('1.0.0+build.1').compareTo(semver('1.0.0')) == 0", &dev_none,
     OKT, NULL},
    {"semver numbers", "semver('1.10.0').isGreaterThan(semver('1.9.0'))", &dev_none, OKT, NULL},
    {"semver bad pre", "semver('1.0.0-01') == semver('1.0.0')", &dev_none, OKE, NULL},
    {"semver vs quantity", "semver('1.0.0').compareTo(quantity('1')) == 0", &dev_none, UNS, NULL},
    /* outside the subset */
    {"ternary", "device.driver == '' ? true : false", &dev_none, UNS, "conditional"},
    {"arithmetic", "1 + 1 == 2", &dev_none, UNS, "arithmetic"},
    {"map literal", "{'a': 1}['a'] == 1", &dev_none, UNS, "map literal"},
    {"unknown field", "device.foo == 'x'", &dev_none, UNS, "field device.foo"},
    {"function", "size(device.driver) > 0", &dev_none, UNS, "function size()"},
    {"optional", "device.attributes[?'x'].y == 1", &dev_none, UNS, "optional"},
    {"unary minus on attribute", "-device.attributes['x'].y < 0", &dev_none, UNS, NULL},
    {"leading dot", ".device.driver == ''", &dev_none, UNS, NULL},
    {"index by int", "device.attributes[1].x == 1", &dev_none, UNS, NULL},
    /* certainly invalid */
    {"map as result", "device.attributes", &dev_none, INV, "must evaluate to bool"},
    {"string as result", "device.driver", &dev_none, INV, "must evaluate to bool"},
    {"empty", "", &dev_none, INV, NULL},
    {"unbalanced", "(true", &dev_none, INV, NULL},
    {"two expressions", "true true", &dev_none, INV, NULL},
    {"reserved word as field", "device.attributes['x'].as == 1", &dev_none, OKE, "no such key: as"},
    {"keyword as field", "device.attributes['x'].in == 1", &dev_none, INV, NULL},
    {"reserved word", "if == 1", &dev_none, INV, "reserved word"},
    {"single &", "true & false", &dev_none, INV, NULL},
    {"dangling &&", "true &&", &dev_none, INV, NULL},
};

static void run(const struct ccase *c, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        struct cel_program *prog = NULL;
        char err[256];
        int st = cel_compile(c[k].expr, strlen(c[k].expr), &prog, err, sizeof(err));
        if (st != c[k].status)
            fail_msg("%s: compile status %d, want %d (%s)", c[k].name, st, c[k].status, err);
        if (st != CEL_OK) {
            assert_null(prog);
            if (c[k].msg && !strstr(err, c[k].msg))
                fail_msg("%s: compile message '%s' lacks '%s'", c[k].name, err, c[k].msg);
            continue;
        }
        struct cel_device dev = {c[k].dev->driver, strlen(c[k].dev->driver), c[k].dev, t_attr,
                                 t_cap};
        enum cel_result r = cel_eval(prog, &dev, err, sizeof(err));
        if (r != c[k].want)
            fail_msg("%s: result %d, want %d (%s)", c[k].name, r, c[k].want, err);
        if (c[k].msg && !strstr(err, c[k].msg))
            fail_msg("%s: eval message '%s' lacks '%s'", c[k].name, err, c[k].msg);
        /* a program is reusable: the same answer again */
        assert_int_equal(cel_eval(prog, &dev, NULL, 0), r);
        /* the budget: enough steps give the same answer; one fewer stops the evaluation */
        struct cel_budget b;
        cel_budget_init(&b, UINT64_MAX);
        assert_int_equal(cel_eval_budget(prog, &dev, &b, NULL, 0), r);
        assert_false(b.exhausted);
        uint64_t steps = b.spent;
        assert_true(steps >= 1);
        cel_budget_init(&b, steps);
        assert_int_equal(cel_eval_budget(prog, &dev, &b, NULL, 0), r);
        assert_int_equal(b.left, 0);
        assert_false(b.exhausted);
        cel_budget_init(&b, steps - 1);
        if (cel_eval_budget(prog, &dev, &b, err, sizeof(err)) != CEL_UNKNOWN)
            fail_msg("%s: %llu steps of %llu did not stop it", c[k].name,
                     (unsigned long long)steps - 1, (unsigned long long)steps);
        assert_string_equal(err, CEL_TOO_COSTLY);
        assert_true(b.exhausted);
        assert_int_equal(b.spent, steps - 1);
        assert_string_equal(cel_program_source(prog), c[k].expr);
        cel_program_free(prog);
    }
}

static void test_upstream(void **state)
{
    (void)state;
    run(upstream_cases, sizeof(upstream_cases) / sizeof(upstream_cases[0]));
}

static void test_drivers(void **state)
{
    (void)state;
    run(driver_cases, sizeof(driver_cases) / sizeof(driver_cases[0]));
}

static void test_semantics(void **state)
{
    (void)state;
    run(semantic_cases, sizeof(semantic_cases) / sizeof(semantic_cases[0]));
}

static void test_no_callbacks(void **state)
{
    (void)state;
    struct cel_program *prog;
    const char *e = "'d' in device.attributes || device.capacity['d'].x == quantity('1')";
    assert_int_equal(cel_compile(e, strlen(e), &prog, NULL, 0), CEL_OK);
    struct cel_device dev = {0};
    char err[128];
    assert_int_equal(cel_eval(prog, &dev, err, sizeof(err)), CEL_ERROR);
    assert_non_null(strstr(err, "no such key: x"));
    cel_program_free(prog);
    cel_program_free(NULL);
}

static void test_embedded_nul(void **state)
{
    (void)state;
    struct cel_program *prog;
    const char e[] = "device.driver == 'a\\x00b'";
    assert_int_equal(cel_compile(e, sizeof(e) - 1, &prog, NULL, 0), CEL_OK);
    struct cel_device dev = {"a\0b", 3, NULL, NULL, NULL};
    assert_int_equal(cel_eval(prog, &dev, NULL, 0), CEL_TRUE);
    dev.driver_len = 1;
    assert_int_equal(cel_eval(prog, &dev, NULL, 0), CEL_FALSE);
    cel_program_free(prog);
    /* a NUL byte in the source itself is not CEL */
    const char bad[] = "true\0";
    assert_int_equal(cel_compile(bad, sizeof(bad) - 1, &prog, NULL, 0), CEL_INVALID);
}

static char *repeat(const char *head, const char *unit, size_t n, const char *tail)
{
    size_t len = strlen(head) + strlen(unit) * n + strlen(tail) + 1;
    char *s = malloc(len);
    assert_non_null(s);
    strcpy(s, head);
    for (size_t k = 0; k < n; k++)
        strcat(s, unit);
    strcat(s, tail);
    return s;
}

static void test_limits(void **state)
{
    (void)state;
    struct cel_program *prog;
    char err[128];
    /* exactly CEL_MAX_EXPR_LEN bytes is allowed, one more is not */
    char *s = repeat("true", " ", CEL_MAX_EXPR_LEN - 4, "");
    assert_int_equal(strlen(s), CEL_MAX_EXPR_LEN);
    assert_int_equal(cel_compile(s, strlen(s), &prog, err, sizeof(err)), CEL_OK);
    cel_program_free(prog);
    free(s);
    s = repeat("true", " ", CEL_MAX_EXPR_LEN - 3, "");
    assert_int_equal(cel_compile(s, strlen(s), &prog, err, sizeof(err)), CEL_LIMIT);
    assert_null(prog);
    free(s);

    /* long && / || chains are flat: no depth problem */
    s = repeat("true", " && true", 1000, "");
    assert_int_equal(cel_compile(s, strlen(s), &prog, err, sizeof(err)), CEL_OK);
    assert_int_equal(cel_eval(prog, &(struct cel_device){0}, NULL, 0), CEL_TRUE);
    cel_program_free(prog);
    free(s);

    /* deep parentheses, negations and comparison chains stop at CEL_MAX_DEPTH */
    const char *deep[][3] = {
        {"", "(", "true"}, {"", "!", "true"}, {"true", " == true", ""}, {"", "[", "1"}};
    for (size_t k = 0; k < sizeof(deep) / sizeof(deep[0]); k++) {
        s = repeat(deep[k][0], deep[k][1], 1000, deep[k][2]);
        assert_int_equal(cel_compile(s, strlen(s), &prog, err, sizeof(err)), CEL_LIMIT);
        assert_non_null(strstr(err, "nested deeper"));
        free(s);
    }
    /* a little nesting is fine */
    s = repeat("", "(", 20, "true))))))))))))))))))))");
    assert_int_equal(cel_compile(s, strlen(s), &prog, err, sizeof(err)), CEL_OK);
    cel_program_free(prog);
    free(s);

    assert_int_equal(cel_compile(NULL, 0, &prog, err, sizeof(err)), CEL_INVALID);
}

static void test_budget_charge(void **state)
{
    (void)state;
    struct cel_budget b;
    cel_budget_init(&b, 10);
    assert_true(cel_budget_charge(&b, 4));
    assert_int_equal(b.left, 6);
    assert_int_equal(b.spent, 4);
    assert_false(cel_budget_charge(&b, 7)); /* takes what is left */
    assert_true(b.exhausted);
    assert_int_equal(b.left, 0);
    assert_int_equal(b.spent, 10);
    assert_false(cel_budget_charge(&b, 0)); /* spent stays spent */
    assert_true(cel_budget_charge(NULL, UINT64_MAX));
}

/* A deadline exhausts the budget at the first clock reading past it (b.late), the charge that
 * read the clock still done; one in the future, within CEL_DEADLINE_CHECK_STEPS, changes
 * nothing. */
static void test_budget_deadline(void **state)
{
    (void)state;
    struct cel_budget b;
    cel_budget_init(&b, 1000000);
    cel_budget_set_deadline(&b, clock_mono_ns(NULL) - 1);
    assert_true(cel_budget_charge(&b, 5));
    assert_true(b.exhausted);
    assert_true(b.late);
    assert_int_equal(b.left, 0);
    assert_int_equal(b.spent, 5);
    assert_false(cel_budget_charge(&b, 1));
    cel_budget_init(&b, UINT64_MAX);
    cel_budget_set_deadline(&b, clock_mono_ns(NULL) + 3600 * 1000000000LL);
    for (int i = 0; i < 100; i++)
        assert_true(cel_budget_charge(&b, CEL_DEADLINE_CHECK_STEPS / 3));
    assert_false(b.exhausted);
    assert_false(b.late);
}

/* Steps of one evaluation of `e` against `d` (unbounded budget). */
static uint64_t steps_of(const char *e, const struct tdev *d, enum cel_result want)
{
    struct cel_program *prog;
    char err[128];
    if (cel_compile(e, strlen(e), &prog, err, sizeof(err)) != CEL_OK)
        fail_msg("%s: %s", e, err);
    struct cel_device dev = {d->driver, strlen(d->driver), d, t_attr, t_cap};
    struct cel_budget b;
    cel_budget_init(&b, UINT64_MAX);
    assert_int_equal(cel_eval_budget(prog, &dev, &b, NULL, 0), want);
    cel_program_free(prog);
    return b.spent;
}

static void test_cost_model(void **state)
{
    (void)state;
    /* one step per node: `driver == 'x'` visits the comparison, the driver and the literal */
    assert_int_equal(steps_of("device.driver == 'x'", &nv_gpu, CEL_FALSE), 3);
    assert_int_equal(steps_of("true", &dev_none, CEL_TRUE), 1);
    /* && and || stop at the deciding operand, and so does the count */
    assert_int_equal(steps_of("false && device.driver == 'x'", &nv_gpu, CEL_FALSE), 2);
    /* strings compared cost one step per CEL_COST_STRING_BYTES bytes */
    static const char *const long_name =
        "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-40GB'";
    assert_int_equal(steps_of(long_name, &nv_gpu, CEL_TRUE), 3 + 21 / CEL_COST_STRING_BYTES);
    /* contains() compares at every offset */
    uint64_t starts = steps_of("device.attributes['gpu.nvidia.com'].productName.startsWith('SXM')",
                               &nv_gpu, CEL_FALSE);
    uint64_t contains = steps_of("device.attributes['gpu.nvidia.com'].productName.contains('SXM')",
                                 &nv_gpu, CEL_TRUE);
    assert_true(contains > starts + 4);
    /* comparing versions parses both */
    assert_true(steps_of("device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan("
                         "semver('1.0.0'))",
                         &nv_gpu, CEL_TRUE) >= 3 + 8);

    /* the hostile shape of issue 18: 10 KiB of `||` comparisons, every one false */
    char *e = malloc(CEL_MAX_EXPR_LEN + 1);
    assert_non_null(e);
    size_t n = 0, terms = 0;
    for (;;) {
        char t[64];
        int k = snprintf(t, sizeof(t), "%sdevice.driver == 'd%05zu'", n ? " || " : "", terms);
        if (n + (size_t)k > CEL_MAX_EXPR_LEN)
            break;
        memcpy(e + n, t, (size_t)k + 1);
        n += (size_t)k;
        terms++;
    }
    assert_true(terms > 300);
    struct cel_program *prog;
    assert_int_equal(cel_compile(e, n, &prog, NULL, 0), CEL_OK);
    /* the compiled size: three nodes a term and the || */
    assert_int_equal(cel_program_size(prog), 3 * terms + 1);
    struct cel_device dev = {NV, strlen(NV), &nv_gpu, t_attr, t_cap};
    struct cel_budget b;
    cel_budget_init(&b, UINT64_MAX);
    assert_int_equal(cel_eval_budget(prog, &dev, &b, NULL, 0), CEL_FALSE);
    assert_int_equal(b.spent, 3 * terms + 1);
    /* a budget for 10 such evaluations stops the 11th part-way and every one after at once */
    cel_budget_init(&b, 10 * (3 * terms + 1));
    for (int i = 0; i < 10; i++)
        assert_int_equal(cel_eval_budget(prog, &dev, &b, NULL, 0), CEL_FALSE);
    assert_int_equal(b.left, 0);
    assert_false(b.exhausted);
    char err[64];
    assert_int_equal(cel_eval_budget(prog, &dev, &b, err, sizeof(err)), CEL_UNKNOWN);
    assert_string_equal(err, CEL_TOO_COSTLY);
    assert_true(b.exhausted);
    uint64_t spent = b.spent;
    assert_int_equal(cel_eval_budget(prog, &dev, &b, NULL, 0), CEL_UNKNOWN);
    assert_int_equal(b.spent, spent);
    /* NULL: unbounded, as cel_eval */
    assert_int_equal(cel_eval_budget(prog, &dev, NULL, NULL, 0), CEL_FALSE);
    cel_program_free(prog);
    free(e);
    assert_int_equal(cel_program_size(NULL), 0);
}

static void test_quantity_milli(void **state)
{
    (void)state;
    int64_t m = 0;
    assert_int_equal(cel_quantity_milli("40Gi", &m), CEL_LOOKUP_FOUND);
    assert_true(m == 42949672960000LL);
    assert_int_equal(cel_quantity_milli("1500m", &m), CEL_LOOKUP_FOUND);
    assert_int_equal(m, 1500);
    assert_int_equal(cel_quantity_milli("0.5", &m), CEL_LOOKUP_FOUND);
    assert_int_equal(m, 500);
    assert_int_equal(cel_quantity_milli("1000000n", &m), CEL_LOOKUP_FOUND);
    assert_int_equal(m, 1);
    assert_int_equal(cel_quantity_milli("0.5Ki", &m), CEL_LOOKUP_FOUND);
    assert_int_equal(m, 512000);
    assert_int_equal(cel_quantity_milli("1e-3", &m), CEL_LOOKUP_FOUND);
    assert_int_equal(m, 1);
    assert_int_equal(cel_quantity_milli("-2k", &m), CEL_LOOKUP_FOUND);
    assert_int_equal(m, -2000000);
    assert_int_equal(cel_quantity_milli("0n", &m), CEL_LOOKUP_FOUND);
    assert_int_equal(m, 0);
    assert_int_equal(cel_quantity_milli("1n", &m), CEL_LOOKUP_UNKNOWN);
    assert_int_equal(cel_quantity_milli("0.0001", &m), CEL_LOOKUP_UNKNOWN);
    assert_int_equal(cel_quantity_milli("1e-4", &m), CEL_LOOKUP_UNKNOWN);
    assert_int_equal(cel_quantity_milli("10E", &m), CEL_LOOKUP_UNKNOWN);
    assert_int_equal(cel_quantity_milli("abc", &m), CEL_LOOKUP_MISSING);
    assert_int_equal(cel_quantity_milli(NULL, &m), CEL_LOOKUP_MISSING);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upstream),        cmocka_unit_test(test_drivers),
        cmocka_unit_test(test_semantics),       cmocka_unit_test(test_no_callbacks),
        cmocka_unit_test(test_embedded_nul),    cmocka_unit_test(test_limits),
        cmocka_unit_test(test_quantity_milli),  cmocka_unit_test(test_budget_charge),
        cmocka_unit_test(test_budget_deadline), cmocka_unit_test(test_cost_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
