/*
 * fuzz_dra.c - libFuzzer target for the DRA projection (core/kube/project_dra.c).
 *
 * The first byte picks the kind (its value % 8, modulo 5: DeviceClass, ResourceSlice,
 * ResourceClaim, ResourceClaimTemplate, DeviceTaintRule) and whether the object is read at
 * resource.k8s.io/v1beta1 (bit 3: through core/kube/dra_api.h dra_json_as_v1 first, which must
 * leave the object as it was); the rest is a JSON object, parsed by json-c and projected. Besides
 * the sanitizers, the target
 * checks what project.h promises: a known result code, and a record that its *_cleanup() frees
 * (leaks show under ASan). Each input is projected twice and must give the same result.
 *
 * A ResourceSlice that projects is also run through the shared counters and consumable capacity
 * of the ladder (core/classify/dra_share.h): its counter sets are tallied, its devices allocated
 * one by one; every device's verdict, for a request asking nothing and for one asking each of its
 * capacities at the device's own value, is a known one, the same twice, and explained (a held
 * device names its counter or capacity, a device never fitting names its capacity).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "classify/dra_share.h"
#include "kube/dra_api.h"
#include "kube/project.h"
#include "model/dra.h"
#include "util/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_fit(const struct dra_counters *c, const struct dra_slice *s,
                      const struct dra_device *d, const struct dra_exact *e)
{
    struct dra_fit_why w1, w2;
    enum dra_fit a = dra_share_fit(c, s, d, e, NULL, 0, &w1);
    enum dra_fit b = dra_share_fit(c, s, d, e, NULL, 0, &w2);
    if (a != b || (unsigned)a > DRA_FIT_UNKNOWN) {
        fprintf(stderr, "device %s: fit %d then %d\n", d->name, a, b);
        abort();
    }
    if ((a == DRA_FIT_HELD && !w1.counter && !w1.capacity) ||
        (a == DRA_FIT_NEVER && !w1.capacity && !w1.missing)) {
        fprintf(stderr, "device %s: verdict %d without a reason\n", d->name, a);
        abort();
    }
}

/* The shared counters and capacity of a projected slice (the header comment). */
static void share_slice(const struct dra_slice *s)
{
    static struct dra_counters c;
    dra_counters_reset(&c);
    dra_counters_add_sets(&c, s);
    if (c.n > DRA_MAX_COUNTER_ENTRIES)
        abort();
    struct dra_quantity asks[DRA_MAX_ATTRS_PER_DEVICE];
    for (size_t k = 0; k <= s->n_devices; k++) {
        for (size_t i = 0; i < s->n_devices; i++) {
            const struct dra_device *d = &s->devices[i];
            struct dra_exact none = {0}, own = {0};
            check_fit(&c, s, d, &none);
            for (size_t j = 0; j < d->n_caps && j < DRA_MAX_ATTRS_PER_DEVICE; j++)
                asks[j] = (struct dra_quantity){.name = d->caps[j].name, .value = d->caps[j].value};
            own.capacity = asks;
            own.n_capacity = d->n_caps < DRA_MAX_ATTRS_PER_DEVICE ? d->n_caps : 0;
            check_fit(&c, s, d, &own);
        }
        if (k < s->n_devices)
            dra_counters_charge(&c, s, &s->devices[k], NULL);
    }
}

static int project_v1(unsigned kind, json_object *obj)
{
    int rc;
    switch (kind) {
    case 0: {
        struct dra_class c;
        rc = project_dra_class(obj, &c);
        dra_class_cleanup(&c);
        break;
    }
    case 1: {
        struct dra_slice s;
        rc = project_dra_slice(obj, &s);
        if (rc == K_OK)
            share_slice(&s);
        dra_slice_cleanup(&s);
        break;
    }
    case 2: {
        struct dra_claim c;
        rc = project_dra_claim(obj, &c);
        dra_claim_cleanup(&c);
        break;
    }
    case 4: {
        struct dra_taint_rule r;
        rc = project_dra_taint_rule(obj, &r);
        dra_taint_rule_cleanup(&r);
        break;
    }
    default: {
        struct dra_template t;
        rc = project_dra_template(obj, &t);
        dra_template_cleanup(&t);
        break;
    }
    }
    return rc;
}

/* At v1beta1: the object in the layout of v1, projected; the object itself is not changed. */
static int project_once(unsigned kind, bool v1beta1, json_object *obj)
{
    if (!v1beta1)
        return project_v1(kind, obj);
    static const enum dra_kind kinds[5] = {DRA_KIND_CLASS, DRA_KIND_SLICE, DRA_KIND_CLAIM,
                                           DRA_KIND_TEMPLATE, DRA_KIND_TAINT_RULE};
    char *before = strdup(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN));
    json_object *v1 = NULL;
    int rc = dra_json_as_v1(kinds[kind], DRA_API_V1BETA1, obj, &v1);
    if (rc == K_OK)
        rc = project_v1(kind, v1);
    json_object_put(v1);
    if (before && strcmp(before, json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN))) {
        fprintf(stderr, "kind %u: dra_json_as_v1 changed the object\n", kind);
        abort();
    }
    free(before);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1u << 20))
        return 0;
    unsigned kind = (data[0] & 7) % 5;
    bool v1beta1 = data[0] & 8;
    json_tokener *tok = json_tokener_new_ex(64);
    if (!tok)
        return 0;
    json_object *obj = json_tokener_parse_ex(tok, (const char *)data + 1, (int)(size - 1));
    json_tokener_free(tok);
    if (!obj)
        return 0;
    int a = project_once(kind, v1beta1, obj);
    int b = project_once(kind, v1beta1, obj);
    if (a != b) {
        fprintf(stderr, "kind %u: projected twice, %d then %d\n", kind, a, b);
        abort();
    }
    if (a != K_OK && a != K_EPARSE && a != K_ETOOBIG && a != K_ENOMEM && a != K_EINVAL) {
        fprintf(stderr, "kind %u: unexpected result %d\n", kind, a);
        abort();
    }
    json_object_put(obj);
    return 0;
}
