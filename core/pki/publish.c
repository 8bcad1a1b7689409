/*
 * publish.c - store certificates in a kubernetes.io/tls Secret and inject the CA into the
 * webhook configuration's caBundle, with GET, POST and merge-patch from core/kube/client.h.
 */
#include "pki/publish.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "util/result.h"

#define CA_BUNDLE_ATTEMPTS 5 /* GET + PATCH rounds before a 409 is given up */
#define SECRET_TYPE_TLS "kubernetes.io/tls"

static int fail(struct kube_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Record an error found on our side (no HTTP status) and return its code. */
static int fail(struct kube_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    err->code = code;
    err->http_status = 0;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
    return code;
}

/* Add key = base64(pem) to obj. */
static int add_b64(json_object *obj, const char *key, const char *pem)
{
    char *b64 = NULL;
    int rc = certgen_base64(pem, strlen(pem), &b64);
    if (rc)
        return rc;
    json_object_object_add(obj, key, json_object_new_string(b64));
    free(b64);
    return K_OK;
}

int publish_data(const char *const *keys, const char *const *pems, size_t n, json_object **out)
{
    json_object *data = json_object_new_object();
    int rc = K_OK;
    for (size_t i = 0; rc == K_OK && i < n; i++)
        rc = add_b64(data, keys[i], pems[i]);
    if (rc) {
        json_object_put(data);
        return rc;
    }
    *out = data;
    return K_OK;
}

char *publish_secret_pem(json_object *data, const char *key)
{
    const char *b64 = kube_json_str(data, key);
    char *out = NULL;
    size_t len;
    if (!b64 || certgen_unbase64(b64, &out, &len) != K_OK)
        return NULL;
    if (len == 0 || strlen(out) != len) { /* empty, or a NUL inside: not PEM */
        free(out);
        return NULL;
    }
    return out;
}

static int secret_data(const struct certgen_bundle *b, json_object **out)
{
    const char *const keys[] = {"tls.crt", "tls.key", "ca.crt"};
    const char *const pems[] = {b->tls_cert_pem, b->tls_key_pem, b->ca_cert_pem};
    return publish_data(keys, pems, 3, out);
}

json_object *publish_new_tls_secret(const char *namespace_name, const char *name, json_object *data,
                                    const char *managed_by)
{
    json_object *obj = json_object_new_object();
    json_object *meta = json_object_new_object();
    json_object *labels = json_object_new_object();
    json_object_object_add(labels, "app.kubernetes.io/name", json_object_new_string("gputri"));
    json_object_object_add(labels, "app.kubernetes.io/component",
                           json_object_new_string("webhook"));
    json_object_object_add(labels, "app.kubernetes.io/managed-by",
                           json_object_new_string(managed_by));
    json_object_object_add(meta, "name", json_object_new_string(name));
    json_object_object_add(meta, "namespace", json_object_new_string(namespace_name));
    json_object_object_add(meta, "labels", labels);
    json_object_object_add(obj, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(obj, "kind", json_object_new_string("Secret"));
    json_object_object_add(obj, "metadata", meta);
    json_object_object_add(obj, "type", json_object_new_string(SECRET_TYPE_TLS));
    json_object_object_add(obj, "data", data);
    return obj;
}

static int create_secret(struct kube_client *c, const char *ns, const char *ns_esc,
                         const char *name, json_object *data, struct kube_error *err)
{
    char path[512];
    json_object *obj = publish_new_tls_secret(ns, name, json_object_get(data), "gputri-certs");
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets", ns_esc);
    int rc = kube_post(c, path, obj, NULL, err);
    json_object_put(obj);
    return rc;
}

int publish_tls_secret(struct kube_client *c, const char *namespace_name, const char *name,
                       const struct certgen_bundle *b, bool *created, struct kube_error *err)
{
    char ns_esc[256], name_esc[256], path[640];
    json_object *data = NULL, *existing = NULL, *patch = NULL;
    int rc;

    *created = false;
    if (kube_path_escape(namespace_name, ns_esc, sizeof(ns_esc)) ||
        kube_path_escape(name, name_esc, sizeof(name_esc)))
        return fail(err, K_EINVAL, "namespace %s or secret name %s too long", namespace_name, name);
    rc = secret_data(b, &data);
    if (rc)
        return fail(err, rc, "encoding secret %s/%s", namespace_name, name);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ns_esc, name_esc);

    rc = kube_get(c, path, &existing, err);
    if (rc == K_ENOTFOUND) {
        rc = create_secret(c, namespace_name, ns_esc, name, data, err);
        if (rc == K_OK) {
            *created = true;
            goto out;
        }
        if (rc != K_ECONFLICT) /* 409 AlreadyExists: someone created it meanwhile; patch it */
            goto out;
        rc = kube_get(c, path, &existing, err);
    }
    if (rc)
        goto out;
    const char *t = kube_json_str(existing, "type");
    if (!t)
        t = "Opaque";
    if (strcmp(t, SECRET_TYPE_TLS) != 0) {
        rc = fail(err, K_EINVAL, "secret %s has type %s, not kubernetes.io/tls; delete it first",
                  name, t);
        goto out;
    }
    /* A merge patch of data replaces exactly these three keys and leaves the rest alone. */
    patch = json_object_new_object();
    json_object_object_add(patch, "data", json_object_get(data));
    rc = kube_patch_merge(c, path, patch, NULL, err);
out:
    json_object_put(patch);
    json_object_put(existing);
    json_object_put(data);
    return rc;
}

/* One GET + PATCH round. Returns K_ECONFLICT when the object changed in between. */
static int inject_once(struct kube_client *c, const char *path, const char *name,
                       const char *ca_b64, int *n_webhooks, struct kube_error *err)
{
    json_object *obj = NULL, *patch = NULL, *rv = NULL, *hooks = NULL;
    int rc = kube_get(c, path, &obj, err);
    if (rc)
        return rc;
    hooks = kube_json_get(obj, "webhooks", json_type_array);
    if (!hooks || json_object_array_length(hooks) == 0) {
        rc = fail(err, K_EINVAL, "validatingwebhookconfiguration %s has no webhooks", name);
        goto out;
    }
    size_t n = json_object_array_length(hooks);
    for (size_t i = 0; i < n; i++) {
        json_object *cc =
            kube_json_get(json_object_array_get_idx(hooks, i), "clientConfig", json_type_object);
        if (!cc) {
            rc = fail(err, K_EPARSE, "validatingwebhookconfiguration %s: webhook without %s", name,
                      "clientConfig");
            goto out;
        }
        json_object_object_add(cc, "caBundle", json_object_new_string(ca_b64));
    }
    patch = json_object_new_object();
    rv = kube_json_field(kube_json_get(obj, "metadata", json_type_object), "resourceVersion");
    if (rv) {
        json_object *pmeta = json_object_new_object();
        json_object_object_add(pmeta, "resourceVersion", json_object_get(rv));
        json_object_object_add(patch, "metadata", pmeta);
    }
    json_object_object_add(patch, "webhooks", json_object_get(hooks));
    rc = kube_patch_merge(c, path, patch, NULL, err);
    if (rc == K_OK)
        *n_webhooks = (int)n;
out:
    json_object_put(patch);
    json_object_put(obj);
    return rc;
}

int publish_ca_bundle(struct kube_client *c, const char *name, const char *ca_pem, int *n_webhooks,
                      struct kube_error *err)
{
    char name_esc[256], path[512];
    char *ca_b64 = NULL;
    int rc;

    *n_webhooks = 0;
    if (kube_path_escape(name, name_esc, sizeof(name_esc)))
        return fail(err, K_EINVAL, "webhook configuration name %s too long", name);
    snprintf(path, sizeof(path),
             "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/%s", name_esc);
    rc = certgen_base64(ca_pem, strlen(ca_pem), &ca_b64);
    if (rc)
        return fail(err, rc, "encoding the CA bundle");
    for (int attempt = 0; attempt < CA_BUNDLE_ATTEMPTS; attempt++) {
        rc = inject_once(c, path, name, ca_b64, n_webhooks, err);
        if (rc != K_ECONFLICT)
            break;
    }
    free(ca_b64);
    return rc;
}
