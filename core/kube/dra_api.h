/*
 * dra_api.h - which version of the Dynamic Resource Allocation API (group resource.k8s.io) the
 * API server serves, the collection paths at that version, and the layout of an older version's
 * objects as the projection (project.h project_dra_*) reads them.
 *
 * Versions read, best first, chosen per kind (dra_kind_versions):
 *   - the core kinds (claims, templates, classes, slices), all at one version: v1 (1.34+),
 *     v1beta2 (1.33+, same layout as v1), v1beta1 (1.32+; 1.32 and 1.33 serve it only when
 *     enabled: --runtime-config=resource.k8s.io/v1beta1=true and the DynamicResourceAllocation
 *     gate). v1alpha3 (the alpha DRA of 1.31 and earlier) is never read for them.
 *   - DeviceTaintRules, wherever the API server lists them: v1 (1.37+, on by default), v1beta2
 *     (1.36: the DRADeviceTaintRules gate and --runtime-config=resource.k8s.io/v1beta2=true),
 *     v1alpha3 (1.33-1.35: the DRADeviceTaints gate, from 1.35 DRADeviceTaintRules, and
 *     --runtime-config=resource.k8s.io/v1alpha3=true). The version the core kinds are read at does
 *     not decide it: 1.36 with the gate and the betas serves them at v1beta2 only.
 * Discovery is one GET of the APIGroup document /apis/resource.k8s.io (its `versions[].version`
 * are the versions served; no RBAC is needed: system:discovery), as client-go's discovery client
 * reads it (kubernetes/kubernetes: staging/src/k8s.io/client-go/discovery/discovery_client.go;
 * staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go APIGroup, APIResourceList), and for
 * DeviceTaintRules the APIResourceList of each candidate version served, newest first
 * (GET /apis/resource.k8s.io/<version>, also system:discovery) until one lists them. 404: the
 * group is not served at all (DRA off).
 *
 * Layouts (kubernetes/kubernetes: staging/src/k8s.io/api/resource/{v1beta1,v1beta2,v1}/types.go):
 *   v1beta2 and v1 are the same for every field gputri reads;
 *   v1beta1 keeps a request's deviceClassName, selectors, allocationMode, count, adminAccess,
 *   tolerations and capacity on the DeviceRequest itself (v1: in `exactly`; firstAvailable is the
 *   same in both), and a ResourceSlice device's fields in `basic` (v1: on the device). DeviceClass
 *   and a claim's status are the same in all three.
 *   A DeviceTaintRule (kubernetes/kubernetes: staging/src/k8s.io/api/resource/{v1alpha3,v1beta2,
 *   v1}/types.go DeviceTaintRuleSpec, DeviceTaintSelector, DeviceTaint) is the same at v1,
 *   v1beta2 and 1.35's v1alpha3 (spec.deviceSelector{driver, pool, device}, spec.taint); 1.33's and
 *   1.34's v1alpha3 selector also has deviceClassName and selectors[] (CEL), which narrow the
 *   devices selected in ways gputri does not evaluate (dra_json_as_v1).
 *
 * Thread-safety: everything here is pure or uses only its arguments.
 */
#ifndef GPUTRI_KUBE_DRA_API_H
#define GPUTRI_KUBE_DRA_API_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "kube/client.h"

/* The versions gputri reads, worst first (DRA_API_NONE: the API server serves none of them);
 * v1alpha3 for DeviceTaintRules only (dra_kind_versions). */
enum dra_api_version {
    DRA_API_NONE = 0,
    DRA_API_V1ALPHA3,
    DRA_API_V1BETA1,
    DRA_API_V1BETA2,
    DRA_API_V1,
    DRA_API_VERSION_COUNT,
};

/* The APIGroup discovery document of the group. */
#define DRA_API_GROUP "resource.k8s.io"
#define DRA_API_GROUP_PATH "/apis/resource.k8s.io"

/* The kinds gputri reads; the first DRA_KIND_CORE_COUNT wherever DRA is served, DeviceTaintRules
 * at the newest version that lists them (dra_kind_served, dra_api_discover_kinds). */
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

/* dra_api_version_name() - "v1", "v1beta2", "v1beta1", "v1alpha3"; "none" for DRA_API_NONE.
 * Static string. */
const char *dra_api_version_name(enum dra_api_version v);

/*
 * dra_api_version_parse() - "v1", "v1beta2", "v1beta1" or "v1alpha3" into its version;
 * DRA_API_NONE for anything else (v1alpha2, NULL). Pure.
 */
enum dra_api_version dra_api_version_parse(const char *s);

/*
 * dra_kind_versions() - the versions kind `k` is read at, as a bit set (1u << enum
 * dra_api_version): v1, v1beta2, v1beta1 for the core kinds; v1, v1beta2, v1alpha3 for
 * DeviceTaintRules; 0 for an invalid kind. Pure.
 */
unsigned dra_kind_versions(enum dra_kind k);

/*
 * dra_kind_served() - whether an APIResourceList (`doc`, borrowed: the body of GET
 * /apis/resource.k8s.io/<version>) lists kind `k`'s resource (dra_kind_name() in
 * resources[].name). The core kinds are served whenever the group version is (true for any doc);
 * NULL doc: false. Pure.
 */
bool dra_kind_served(json_object *doc, enum dra_kind k);

/*
 * dra_api_served() - the versions an APIGroup document (`group`, borrowed; GET
 * DRA_API_GROUP_PATH) lists in versions[].version that gputri reads for some kind, as a bit set
 * (1u << enum dra_api_version). 0 for NULL, a document of another group, or none listed. Pure.
 */
unsigned dra_api_served(json_object *group);

/* dra_api_choose() - the best version in `served` (dra_api_served bits) for the core kinds: v1,
 * else v1beta2, else v1beta1, else DRA_API_NONE (v1alpha3 alone is none). Pure. */
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
 * dra_api_discover_kind() - the version kind `k` is read at, given the group's versions served
 * (`served`, dra_api_discover): a core kind's is dra_api_choose(served) (no request); an optional
 * kind's the newest of its versions (dra_kind_versions) in `served` whose APIResourceList (GET
 * /apis/resource.k8s.io/<version>, one per version asked, newest first; a 404 is "not listed")
 * lists it (dra_kind_served), else DRA_API_NONE. K_OK: *out set. Any other K_* of a GET (err
 * filled): *out left unchanged. Uses only its arguments.
 */
int dra_api_discover_kind(struct kube_client *client, enum dra_kind k, unsigned served,
                          enum dra_api_version *out, struct kube_error *err);

/* What discovery found: the versions of the group served, and the version each kind is read at
 * (DRA_API_NONE: not read; every kind when the core kinds have none). */
struct dra_api_found {
    unsigned served;
    enum dra_api_version kind[DRA_KIND_COUNT];
};

/*
 * dra_api_discover_kinds() - dra_api_discover(), the core kinds' version (dra_api_choose), and
 * for each optional kind in `optional` (bits 1u << kind, kinds >= DRA_KIND_CORE_COUNT; others
 * ignored) dra_api_discover_kind() (not asked, and none, when the core kinds have no version).
 * K_OK: *out filled. Any other K_* of a GET (err
 * filled): not known, *out left unchanged. Uses only its arguments.
 */
int dra_api_discover_kinds(struct kube_client *client, unsigned optional, struct dra_api_found *out,
                           struct kube_error *err);

/*
 * What the checks of one daemon remember (zero-initialise, then set `optional`; one per
 * discovery loop, not thread-safe): the optional kinds the owner reads (bits 1u << kind, see
 * dra_api_discover_kinds), the core kinds' version chosen, each kind's version (kinds[]: the core
 * ones = version), the versions served, whether a check has answered, and whether a failure was
 * said.
 */
struct dra_api_probe {
    unsigned optional;
    enum dra_api_version version;
    enum dra_api_version kinds[DRA_KIND_COUNT];
    unsigned served;
    bool checked;
    bool failure_said;
};

/*
 * dra_api_probe_step() - one discovery check (dra_api_discover_kinds with p->optional) through
 * `client`, applied to `p`. Returns true when p->version or the version of an optional kind
 * changed (the first answer counts as a change, even to DRA_API_NONE). Logs one line at --v=0 on
 * the first answer and on every change ("DRA API resource.k8s.io: reading v1 (served: v1beta1,
 * v1beta2, v1); devicetaintrules at v1beta2", "... not served: running without DRA",
 * "DRA API resource.k8s.io: devicetaintrules now at v1beta2"); a check that fails keeps what was
 * known and is said once at --v=0 (then at --v=2 until one answers). Nothing else is logged,
 * however often it runs.
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
 * device. For v1alpha3 a DeviceTaintRule is obj itself unless its spec.deviceSelector sets
 * deviceClassName or selectors (1.33/1.34): then a copy without spec.deviceSelector, a rule that
 * selects no device as far as gputri can tell (it does not evaluate a class's or a selector's
 * CEL, and naming a rule that spares the device would be a false dra-tainted). Anything not
 * shaped as expected is left as it is (the projection then judges it).
 * Returns K_OK or K_ENOMEM (*out NULL). Thread-safe on distinct objects.
 */
int dra_json_as_v1(enum dra_kind k, enum dra_api_version v, json_object *obj, json_object **out);

#endif
