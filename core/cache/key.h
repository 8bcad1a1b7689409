/*
 * key.h - the "namespace/name" keys of the store, the workqueue and the programs' caches, as
 * client-go makes them (kubernetes/client-go: tools/cache/store.go MetaNamespaceKeyFunc and
 * SplitMetaNamespaceKey): "<namespace>/<name>", or "<name>" for a cluster-scoped object.
 */
#ifndef GPUTRI_KEY_H
#define GPUTRI_KEY_H

#include <stddef.h>

/* Room for a key: a namespace (63) + '/' + a name (253), with the terminator. */
#define META_KEY_MAX 320

/*
 * meta_namespace_key() - "ns/name" into out (len bytes, NUL-terminated); just "name" when ns is
 * NULL or "". Returns K_OK, or K_ETOOBIG when it does not fit (out is then ""). Thread-safe.
 */
int meta_namespace_key(char *out, size_t len, const char *ns, const char *name);

/*
 * split_meta_namespace_key() - the namespace and name of `key` into ns (ns_len bytes; "" for a
 * key without '/') and name (name_len bytes). Returns K_OK, K_EINVAL for more than one '/' or an
 * empty name, or K_ETOOBIG when a part does not fit. Thread-safe.
 */
int split_meta_namespace_key(const char *key, char *ns, size_t ns_len, char *name, size_t name_len);

/* Room for a namespace (a DNS label, 63) and a name (a DNS subdomain, 253), with terminators. */
#define META_NAMESPACE_MAX 64
#define META_NAME_MAX 254

/*
 * A parsed key: what callers hold instead of two scratch buffers split from "ns/name" and joined
 * again. ns is "" for a cluster-scoped object.
 */
struct meta_key {
    char ns[META_NAMESPACE_MAX];
    char name[META_NAME_MAX];
};

/*
 * meta_key_parse() - `key` ("ns/name" or "name") into *out, as split_meta_namespace_key().
 * Returns K_OK, K_EINVAL for more than one '/' or an empty name, or K_ETOOBIG for a namespace
 * longer than 63 or a name longer than 253 bytes (*out is then zeroed). Thread-safe.
 */
int meta_key_parse(const char *key, struct meta_key *out);

/*
 * meta_key_format() - `k` as "ns/name" (or "name") into out (len bytes; META_KEY_MAX is always
 * enough). Returns K_OK, or K_ETOOBIG (out is then ""). Thread-safe.
 */
int meta_key_format(const struct meta_key *k, char *out, size_t len);

#endif
