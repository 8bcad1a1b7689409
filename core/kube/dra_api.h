/*
 * dra_api.h - which version of the Dynamic Resource Allocation API (group resource.k8s.io) the
 * API server serves, the collection paths at that version, and the layout of an older version's
 * objects as the projection (project.h project_dra_*) reads them.
 *
 * Versions read, best first: v1 (1.34+), v1beta2 (1.33+, same layout as v1), v1beta1 (1.32+; 1.32
 * and 1.33 serve it only when enabled: --runtime-config=resource.k8s.io/v1beta1=true and the
 * DynamicResourceAllocation gate). v1alpha3 is never read. Discovery is one GET of the APIGroup
 * document /apis/resource.k8s.io (its `versions[].version` are the versions served; no RBAC is
 * needed: system:discovery), as client-go's discovery client reads it
 * (kubernetes/kubernetes: staging/src/k8s.io/client-go/discovery/discovery_client.go;
 * staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go APIGroup). 404: the group is not
 * served at all (DRA off).
 *
 * Layouts (kubernetes/kubernetes: staging/src/k8s.io/api/resource/{v1beta1,v1beta2,v1}/types.go):
 *   v1beta2 and v1 are the same for every field gputri reads;
 *   v1beta1 keeps a request's deviceClassName, selectors, allocationMode, count, adminAccess,
 *   tolerations and capacity on the DeviceRequest itself (v1: in `exactly`; firstAvailable is the
 *   same in both), and a ResourceSlice device's fields in `basic` (v1: on the device). DeviceClass
 *   and a claim's status are the same in all three.
 *
 * Thread-safety: everything here is pure or uses only its arguments.
 */
#ifndef GPUTRI_KUBE_DRA_API_H
#define GPUTRI_KUBE_DRA_API_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "kube/client.h"

/* The versions gputri reads, worst first (DRA_API_NONE: the API server serves none of them). */
enum dra_api_version {
    DRA_API_NONE = 0,
    DRA_API_V1BETA1,
    DRA_API_V1BETA2,
    DRA_API_V1,
    DRA_API_VERSION_COUNT,
};

/* The APIGroup discovery document of the group. */
#define DRA_API_GROUP "resource.k8s.io"
#define DRA_API_GROUP_PATH "/apis/resource.k8s.io"

/* The kinds gputri reads; the first DRA_KIND_CORE_COUNT wherever DRA is served, DeviceTaintRules
 * only where the version read lists them (cache/dra_store.h dra_kind_served). */
enum dra_kind {
    DRA_KIND_CLAIM,
    DRA_KIND_TEMPLATE,
    DRA_KIND_CLASS,
    DRA_KIND_SLICE,
    DRA_KIND_TAINT_RULE,
    DRA_KIND_COUNT,
};
#define DRA_KIND_CORE_COUNT DRA_KIND_TAINT_RULE

/* dra_kind_name() - "resourceclaims", "resourceclaimtemplates", "deviceclasses",
 * "resourceslices", "devicetaintrules"; "" for anything else. Static string. */
const char *dra_kind_name(enum dra_kind k);

/*
 * dra_kind_path() - the collection path of kind `k` at version `v`, e.g.
 * "/apis/resource.k8s.io/v1beta2/resourceslices"; "" for DRA_API_NONE or an invalid kind. Static
 * string.
 */
const char *dra_kind_path(enum dra_kind k, enum dra_api_version v);

/* dra_api_version_name() - "v1", "v1beta2", "v1beta1"; "none" for DRA_API_NONE. Static string. */
const char *dra_api_version_name(enum dra_api_version v);

/*
 * dra_api_version_parse() - "v1", "v1beta2" or "v1beta1" into its version; DRA_API_NONE for
 * anything else (v1alpha3, NULL). Pure.
 */
enum dra_api_version dra_api_version_parse(const char *s);

/*
 * dra_api_served() - the versions an APIGroup document (`group`, borrowed; GET
 * DRA_API_GROUP_PATH) lists in versions[].version that gputri reads, as a bit set
 * (1u << enum dra_api_version). 0 for NULL, a document of another group, or none listed. Pure.
 */
unsigned dra_api_served(json_object *group);

/* dra_api_choose() - the best version in `served` (dra_api_served bits): v1, else v1beta2, else
 * v1beta1, else DRA_API_NONE. Pure. */
enum dra_api_version dra_api_choose(unsigned served);

/*
 * dra_api_describe() - `served` as "v1beta1, v1beta2" (worst first), "none" when empty, into buf
 * (len bytes, always terminated). Returns buf. Pure.
 */
char *dra_api_describe(unsigned served, char *buf, size_t len);

/*
 * dra_api_discover() - one discovery GET of DRA_API_GROUP_PATH through `client` (borrowed).
 * K_OK: *served holds the versions read that are served (0 when the group answered 404: not
 * served). Any other K_* (transport, 401/403, 5xx...; err filled) means it is not known: *served
 * is left unchanged. Uses only its arguments (one client per thread, client.h).
 */
int dra_api_discover(struct kube_client *client, unsigned *served, struct kube_error *err);

/*
 * What the checks of one daemon remember (zero-initialise; one per discovery loop, not
 * thread-safe): the version chosen, the versions served, whether a check has answered, and
 * whether a failure was said.
 */
struct dra_api_probe {
    enum dra_api_version version;
    unsigned served;
    bool checked;
    bool failure_said;
};

/*
 * dra_api_probe_step() - one discovery check (dra_api_discover) through `client`, applied to
 * `p`. Returns true when p->version changed (the first answer counts as a change, even to
 * DRA_API_NONE). Logs one line at --v=0 on the first answer and on every change of the version
 * chosen ("DRA API resource.k8s.io: reading v1beta2 (served: v1beta1, v1beta2)", "... not
 * served: running without DRA"); a check that fails keeps p->version and is said once at --v=0
 * (then at --v=2 until one answers). Nothing else is logged, however often it runs.
 */
bool dra_api_probe_step(struct kube_client *client, struct dra_api_probe *p);

/* ---- layout (dra_layout.c) ----------------------------------------------------------------- */

/*
 * dra_json_as_v1() - object `obj` of kind `k` (borrowed), read at version `v`, in the layout of
 * v1, into *out (a new reference the caller puts): for v1 and v1beta2 obj itself (its count
 * raised); for v1beta1 a shallow copy whose changed parts are new objects and whose other members
 * are references to obj's (obj is not modified): each request of a claim's spec.devices or a
 * template's spec.spec.devices without `exactly` or `firstAvailable` gets its members other than
 * `name` moved into `exactly`; each ResourceSlice device's `basic` members are moved onto the
 * device. Anything not shaped as expected is left as it is (the projection then judges it).
 * Returns K_OK or K_ENOMEM (*out NULL). Thread-safe on distinct objects.
 */
int dra_json_as_v1(enum dra_kind k, enum dra_api_version v, json_object *obj, json_object **out);

#endif
