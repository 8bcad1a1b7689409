/* key.c - "namespace/name" keys (see key.h). */
#include "key.h"

#include <string.h>

#include "util/result.h"

int meta_namespace_key(char *out, size_t len, const char *ns, const char *name)
{
    if (!len)
        return K_ETOOBIG;
    /* copies, not snprintf: every cache lookup makes a key (the webhook several per review) */
    size_t nl = ns && *ns ? strlen(ns) : 0, ml = strlen(name);
    size_t total = nl + (nl ? 1 : 0) + ml;
    if (total >= len) {
        out[0] = '\0';
        return K_ETOOBIG;
    }
    if (nl) {
        memcpy(out, ns, nl);
        out[nl++] = '/';
    }
    memcpy(out + nl, name, ml + 1);
    return K_OK;
}

int split_meta_namespace_key(const char *key, char *ns, size_t ns_len, char *name, size_t name_len)
{
    const char *slash = strchr(key, '/');
    const char *n = slash ? slash + 1 : key;
    size_t ns_n = slash ? (size_t)(slash - key) : 0;
    if (!*n || strchr(n, '/'))
        return K_EINVAL;
    if (ns_n >= ns_len || strlen(n) >= name_len)
        return K_ETOOBIG;
    memcpy(ns, key, ns_n);
    ns[ns_n] = '\0';
    memcpy(name, n, strlen(n) + 1);
    return K_OK;
}

int meta_key_parse(const char *key, struct meta_key *out)
{
    int rc = split_meta_namespace_key(key, out->ns, sizeof(out->ns), out->name, sizeof(out->name));
    if (rc != K_OK)
        memset(out, 0, sizeof(*out));
    return rc;
}

int meta_key_format(const struct meta_key *k, char *out, size_t len)
{
    return meta_namespace_key(out, len, k->ns, k->name);
}
