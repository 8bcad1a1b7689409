/* kubens.c - the context's namespace from kubeconfig files, read with libyaml's document API. */
#include "kubens.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "util/result.h"

#define KUBENS_FILES_MAX 64
#define KUBENS_FILE_MAX (16u << 20)

struct doc {
    yaml_document_t doc;
    bool loaded;
};

static bool load_doc(const char *path, struct doc *d)
{
    memset(d, 0, sizeof(*d));
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        return false;
    }
    yaml_parser_set_input_file(&parser, f);
    if (yaml_parser_load(&parser, &d->doc)) {
        if (yaml_document_get_root_node(&d->doc))
            d->loaded = true;
        else
            yaml_document_delete(&d->doc);
    }
    yaml_parser_delete(&parser);
    fclose(f);
    return d->loaded;
}

static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE &&
            strcmp((const char *)k->data.scalar.value, key) == 0)
            return yaml_document_get_node(doc, p->value);
    }
    return NULL;
}

/* The scalar at map[key], or NULL when absent or empty. */
static const char *map_str(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    yaml_node_t *v = map_get(doc, map, key);
    if (!v || v->type != YAML_SCALAR_NODE || v->data.scalar.length == 0)
        return NULL;
    return (const char *)v->data.scalar.value;
}

/* contexts[name == name].context, or NULL. */
static yaml_node_t *find_context(yaml_document_t *doc, const char *name)
{
    yaml_node_t *seq = map_get(doc, yaml_document_get_root_node(doc), "contexts");
    if (!seq || seq->type != YAML_SEQUENCE_NODE)
        return NULL;
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++) {
        yaml_node_t *entry = yaml_document_get_node(doc, *it);
        const char *n = map_str(doc, entry, "name");
        if (n && strcmp(n, name) == 0) {
            yaml_node_t *ctx = map_get(doc, entry, "context");
            return ctx ? ctx : entry;
        }
    }
    return NULL;
}

static int put(char *out, size_t outlen, const char *ns)
{
    int n = snprintf(out, outlen, "%s", ns);
    if (n < 0 || (size_t)n >= outlen) {
        snprintf(out, outlen, "default");
        return K_ETOOBIG;
    }
    return K_OK;
}

/* The namespace from a list of kubeconfig paths (NULL entries skipped). */
static int from_files(char **paths, size_t n, char *out, size_t outlen)
{
    struct doc *docs = calloc(n ? n : 1, sizeof(*docs));
    if (!docs)
        return put(out, outlen, "default");
    for (size_t i = 0; i < n; i++)
        load_doc(paths[i], &docs[i]);
    const char *current = NULL;
    for (size_t i = 0; i < n && !current; i++)
        if (docs[i].loaded)
            current =
                map_str(&docs[i].doc, yaml_document_get_root_node(&docs[i].doc), "current-context");
    const char *ns = NULL;
    for (size_t i = 0; i < n && current; i++) {
        if (!docs[i].loaded)
            continue;
        yaml_node_t *ctx = find_context(&docs[i].doc, current);
        if (ctx) {
            ns = map_str(&docs[i].doc, ctx, "namespace");
            break; /* the first file defining the context wins, namespace or not */
        }
    }
    int rc = put(out, outlen, ns ? ns : "default");
    for (size_t i = 0; i < n; i++)
        if (docs[i].loaded)
            yaml_document_delete(&docs[i].doc);
    free(docs);
    return rc;
}

static int from_service_account(char *out, size_t outlen)
{
    const char *env = getenv("POD_NAMESPACE");
    if (env && *env)
        return put(out, outlen, env);
    const char *dir = getenv("GPUTRI_SERVICEACCOUNT_DIR");
    char path[4096], ns[256] = "";
    snprintf(path, sizeof(path), "%s/namespace",
             dir && *dir ? dir : "/var/run/secrets/kubernetes.io/serviceaccount");
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(ns, sizeof(ns), f))
            ns[0] = '\0';
        fclose(f);
    }
    ns[strcspn(ns, " \t\r\n")] = '\0';
    return put(out, outlen, ns[0] ? ns : "default");
}

int kubeconfig_namespace(const char *explicit_path, char *out, size_t outlen)
{
    const char *env = getenv("KUBECONFIG");
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    const char *home = getenv("HOME");
    if (explicit_path && *explicit_path) {
        char *p = (char *)explicit_path;
        return from_files(&p, 1, out, outlen);
    }
    if (env && *env) {
        char *copy = strdup(env);
        char *paths[KUBENS_FILES_MAX];
        size_t n = 0;
        if (!copy)
            return put(out, outlen, "default");
        char *save = NULL;
        for (char *p = strtok_r(copy, ":", &save); p && n < KUBENS_FILES_MAX;
             p = strtok_r(NULL, ":", &save))
            paths[n++] = p;
        int rc = from_files(paths, n, out, outlen);
        free(copy);
        return rc;
    }
    if (host && *host && port && *port)
        return from_service_account(out, outlen);
    if (home && *home) {
        char path[4096];
        int n = snprintf(path, sizeof(path), "%s/.kube/config", home);
        if (n > 0 && (size_t)n < sizeof(path)) {
            char *p = path;
            return from_files(&p, 1, out, outlen);
        }
    }
    return put(out, outlen, "default");
}
