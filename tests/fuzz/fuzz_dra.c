/*
 * fuzz_dra.c - libFuzzer target for the DRA projection (core/kube/project_dra.c).
 *
 * The first byte picks the kind (DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate,
 * DeviceTaintRule);
 * the rest is a JSON object, parsed by json-c and projected. Besides the sanitizers, the target
 * checks what project.h promises: a known result code, and a record that its *_cleanup() frees
 * (leaks show under ASan). Each input is projected twice and must give the same result.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "kube/project.h"
#include "model/dra.h"
#include "util/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int project_once(unsigned kind, json_object *obj)
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1u << 20))
        return 0;
    unsigned kind = data[0] % 5;
    json_tokener *tok = json_tokener_new_ex(64);
    if (!tok)
        return 0;
    json_object *obj = json_tokener_parse_ex(tok, (const char *)data + 1, (int)(size - 1));
    json_tokener_free(tok);
    if (!obj)
        return 0;
    int a = project_once(kind, obj);
    int b = project_once(kind, obj);
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
