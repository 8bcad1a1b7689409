/*
 * json.h - typed reads of fields of API objects (json-c), the one set of getters every part of
 * gputri uses. A getter never fails loudly: a missing field, a field of another type, or a
 * `o` that is NULL or not a JSON object all read as absent (NULL, or the default). Every pointer
 * returned is borrowed from `o` and lives as long as it does. Thread-safe for objects no thread
 * modifies.
 */
#ifndef GPUTRI_KUBE_JSON_H
#define GPUTRI_KUBE_JSON_H

#include <json-c/json.h>
#include <stdint.h>

/* kube_json_field() - member `key` of object `o` whatever its type; NULL when absent or null. */
json_object *kube_json_field(json_object *o, const char *key);

/* kube_json_get() - member `key` of object `o` when it has `type`, else NULL. */
json_object *kube_json_get(json_object *o, const char *key, json_type type);

/* kube_json_str() - member `key` as a string, NULL when absent or not a string. */
const char *kube_json_str(json_object *o, const char *key);

/*
 * kube_json_int() - member `key` as an integer (a JSON number without fraction, as json-c
 * parses it: values past int64 are clamped), `def` when absent or not an integer.
 */
int64_t kube_json_int(json_object *o, const char *key, int64_t def);

/* kube_json_meta_str() - metadata.<field> of an API object as a string, or NULL. */
const char *kube_json_meta_str(json_object *o, const char *field);

/* kube_json_annotation() - metadata.annotations[name] of an API object as a string, or NULL. */
const char *kube_json_annotation(json_object *o, const char *name);

/*
 * kube_json_dup_opt() - copy a string read from an object (one of the getters above) into *out,
 * owned by the caller (free()); *out is NULL when `s` is NULL. Returns K_OK, or K_ENOMEM when a
 * copy was needed and failed (util/result.h). Thread-safe.
 */
int kube_json_dup_opt(const char *s, char **out);

#endif
