/*
 * fuzz_dra.c - libFuzzer target for the DRA projection (core/kube/project_dra.c).
 *
 * The first byte picks the kind (DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate;
 * bits 0-1) and whether the object is read at resource.k8s.io/v1beta1 (bit 2: through
 * core/kube/dra_api.h dra_json_as_v1 first, which must leave the object as it was); the rest is a
 * JSON object, parsed by json-c and projected. Besides the sanitizers, the target
 * checks what project.h promises: a known result code, and a record that its *_cleanup() frees
 * (leaks show under ASan). Each input is projected twice and must give the same result.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "kube/dra_api.h"
#include "kube/project.h"
#include "model/dra.h"
#include "util/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
        dra_slice_cleanup(&s);
        break;
    }
    case 2: {
        struct dra_claim c;
        rc = project_dra_claim(obj, &c);
        dra_claim_cleanup(&c);
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
    static const enum dra_kind kinds[4] = {DRA_KIND_CLASS, DRA_KIND_SLICE, DRA_KIND_CLAIM,
                                           DRA_KIND_TEMPLATE};
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
    unsigned kind = data[0] & 3;
    bool v1beta1 = data[0] & 4;
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
