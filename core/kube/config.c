/*
 * config.c - find the API server and credentials: kubeconfig files (read with libyaml's document
 * API), the in-cluster service account, or ~/.kube/config (see config.h for the order).
 */
#include "kube/config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <yaml.h>

#include "util/errbuf.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/result.h"

#define KUBECONFIG_MAX (16u << 20) /* a kubeconfig or token file larger than this is refused */
#define TOKEN_MAX (1u << 20)
#define KUBECONFIG_FILES_MAX 64 /* entries taken from $KUBECONFIG */

#define SERVICEACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* One parsed kubeconfig file. */
struct kc_file {
    char *path;
    char *dir; /* relative paths inside the file are resolved against this */
    yaml_document_t doc;
    int has_doc;
};

/* A set of kubeconfig files, searched in order: the first file defining an entry wins. */
struct kc_set {
    struct kc_file files[KUBECONFIG_FILES_MAX];
    size_t n;
    const char *label; /* the path or the $KUBECONFIG list, for messages */
};

/*
 * Read a whole file into b (initialised by the caller with its limit): file_read(), with other
 * I/O errors as K_EINVAL (errno kept for the message).
 */
static int read_file(const char *path, struct buf *b)
{
    int rc = file_read(path, b, 0);
    return rc == K_EIO ? K_EINVAL : rc;
}

static char *dirname_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* A path from a kubeconfig: absolute as is, relative against the file's directory. */
static char *resolve_path(const char *dir, const char *p)
{
    if (p[0] == '/')
        return strdup(p);
    size_t n = strlen(dir) + 1 + strlen(p) + 1;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%s/%s", dir, p);
    return out;
}

bool kube_header_value_ok(const char *v)
{
    for (const unsigned char *p = (const unsigned char *)v; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return false;
    return true;
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    size_t start = strspn(s, " \t\r\n");
    if (start)
        memmove(s, s + start, n - start + 1);
}

/*
 * Decode standard base64 (whitespace ignored, padding required) into a NUL-terminated buffer.
 * EVP_DecodeBlock counts padding as zero bytes and accepts '=' anywhere, so both are checked here.
 */
static int base64_decode(const char *in, char **out, size_t *outlen)
{
    int rc = K_EINVAL;
    size_t n = strlen(in);
    char *clean = malloc(n + 1);
    unsigned char *dst = NULL;
    if (!clean)
        return K_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!strchr(" \t\r\n", in[i]))
            clean[m++] = in[i];
    clean[m] = '\0';
    if (m == 0 || m % 4 != 0 || m > INT32_MAX)
        goto out;
    size_t pad = 0;
    while (pad < m && clean[m - 1 - pad] == '=')
        pad++;
    if (pad > 2 || memchr(clean, '=', m - pad))
        goto out;
    dst = malloc(m / 4 * 3 + 1);
    if (!dst) {
        rc = K_ENOMEM;
        goto out;
    }
    int r = EVP_DecodeBlock(dst, (const unsigned char *)clean, (int)m);
    if (r < 0 || (size_t)r < pad)
        goto out;
    *outlen = (size_t)r - pad;
    dst[*outlen] = '\0';
    *out = (char *)dst;
    dst = NULL;
    rc = K_OK;
out:
    free(clean);
    free(dst);
    return rc;
}

/* ---- YAML document helpers. Nodes are borrowed from the document. ---- */

/* The value of a scalar node, or NULL for a missing, non-scalar, null or empty node. */
static const char *scalar(yaml_node_t *node)
{
    if (!node || node->type != YAML_SCALAR_NODE)
        return NULL;
    const char *v = (const char *)node->data.scalar.value;
    /* An empty string means unset, as for Go's zero values. */
    if (v[0] == '\0')
        return NULL;
    if (node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
        (strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
         strcmp(v, "NULL") == 0))
        return NULL;
    /* A value with an embedded NUL ("\0" escape) cannot be a path, token or name. */
    if (strlen(v) != node->data.scalar.length)
        return NULL;
    return v;
}

/* map[key] for a mapping node, NULL when absent or node is not a mapping. */
static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top;
         pair++) {
        yaml_node_t *k = yaml_document_get_node(doc, pair->key);
        const char *ks = scalar(k);
        if (ks && strcmp(ks, key) == 0)
            return yaml_document_get_node(doc, pair->value);
    }
    return NULL;
}

static const char *map_str(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    return scalar(map_get(doc, map, key));
}

/*
 * In root[list] (a sequence of {name: N, <field>: {...}}), the <field> mapping of the entry named
 * `name`, or NULL.
 */
static yaml_node_t *find_named(yaml_document_t *doc, const char *list, const char *field,
                               const char *name)
{
    yaml_node_t *root = yaml_document_get_root_node(doc);
    yaml_node_t *seq = map_get(doc, root, list);
    if (!seq || seq->type != YAML_SEQUENCE_NODE)
        return NULL;
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++) {
        yaml_node_t *entry = yaml_document_get_node(doc, *it);
        const char *n = map_str(doc, entry, "name");
        if (n && strcmp(n, name) == 0) {
            yaml_node_t *v = map_get(doc, entry, field);
            /* "user: {}" or a bare "user:" both mean an entry with no settings. */
            return v ? v : entry;
        }
    }
    return NULL;
}

/* The first file in the set defining list[name]; *file gets that file. */
static yaml_node_t *set_find(struct kc_set *set, const char *list, const char *field,
                             const char *name, struct kc_file **file)
{
    for (size_t i = 0; i < set->n; i++) {
        struct kc_file *f = &set->files[i];
        if (!f->has_doc)
            continue;
        yaml_node_t *node = find_named(&f->doc, list, field, name);
        if (node) {
            *file = f;
            return node;
        }
    }
    return NULL;
}

static int parse_bool(const char *v, bool *out)
{
    static const char *const yes[] = {"true", "yes", "on", "y"};
    static const char *const no[] = {"false", "no", "off", "n"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0) {
            *out = true;
            return K_OK;
        }
        if (strcasecmp(v, no[i]) == 0) {
            *out = false;
            return K_OK;
        }
    }
    return K_EINVAL;
}

/*
 * Load one kubeconfig file into f. missing_ok: a file that does not exist is skipped (returns
 * K_OK with has_doc 0), as client-go does for the entries of $KUBECONFIG.
 */
static int kc_file_load(struct kc_file *f, const char *path, int missing_ok, char *err,
                        size_t errlen)
{
    struct buf text;
    yaml_parser_t parser;
    int parser_ready = 0;
    int rc;

    buf_init(&text, KUBECONFIG_MAX);
    f->path = strdup(path);
    f->dir = dirname_of(path);
    if (!f->path || !f->dir) {
        rc = K_ENOMEM;
        goto out;
    }
    rc = read_file(path, &text);
    if (rc == K_ENOTFOUND && missing_ok) {
        rc = K_OK;
        goto out;
    }
    if (rc == K_ENOTFOUND || rc == K_EINVAL) {
        errbuf_printf(err, errlen, "kubeconfig %s: %s", path, strerror(errno));
        goto out;
    }
    if (rc == K_ETOOBIG) {
        errbuf_printf(err, errlen, "kubeconfig %s: larger than %u bytes", path, KUBECONFIG_MAX);
        rc = K_EINVAL;
        goto out;
    }
    if (rc)
        goto out;

    if (!yaml_parser_initialize(&parser)) {
        rc = K_ENOMEM;
        goto out;
    }
    parser_ready = 1;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text.data, text.len);
    if (!yaml_parser_load(&parser, &f->doc)) {
        if (parser.error == YAML_MEMORY_ERROR) {
            rc = K_ENOMEM;
        } else {
            errbuf_printf(err, errlen, "kubeconfig %s: invalid YAML at line %zu column %zu: %s",
                          path, parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                          parser.problem ? parser.problem : "parse error");
            rc = K_EINVAL;
        }
        goto out;
    }
    f->has_doc = 1;
    yaml_node_t *root = yaml_document_get_root_node(&f->doc);
    if (root && root->type != YAML_MAPPING_NODE) {
        errbuf_printf(err, errlen, "kubeconfig %s: top level is not a mapping", path);
        rc = K_EINVAL;
        goto out;
    }
out:
    if (parser_ready)
        yaml_parser_delete(&parser);
    buf_cleanup(&text);
    return rc;
}

static void kc_set_cleanup(struct kc_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        struct kc_file *f = &set->files[i];
        if (f->has_doc)
            yaml_document_delete(&f->doc);
        free(f->path);
        free(f->dir);
    }
    set->n = 0;
}

/*
 * A file path field (e.g. certificate-authority) of `node` resolved against f's directory into
 * *out, checking that the file can be read. Absent field: *out stays NULL.
 */
static int take_path(struct kc_file *f, yaml_node_t *node, const char *key, const char *what,
                     const char *name, char **out, char *err, size_t errlen)
{
    const char *v = map_str(&f->doc, node, key);
    if (!v)
        return K_OK;
    char *p = resolve_path(f->dir, v);
    if (!p)
        return K_ENOMEM;
    if (access(p, R_OK) != 0) {
        int e = errno;
        errbuf_printf(err, errlen, "kubeconfig %s: %s \"%s\": %s %s: %s", f->path, what, name, key,
                      p, strerror(e));
        free(p);
        return e == ENOENT ? K_ENOTFOUND : K_EINVAL;
    }
    *out = p;
    return K_OK;
}

/* A *-data field of `node`, base64-decoded into *out. Absent field: *out stays NULL. */
static int take_data(struct kc_file *f, yaml_node_t *node, const char *key, const char *what,
                     const char *name, char **out, size_t *outlen, char *err, size_t errlen)
{
    const char *v = map_str(&f->doc, node, key);
    if (!v)
        return K_OK;
    int rc = base64_decode(v, out, outlen);
    if (rc == K_EINVAL)
        errbuf_printf(err, errlen, "kubeconfig %s: %s \"%s\": %s is not valid base64", f->path,
                      what, name, key);
    return rc;
}

/*
 * The length of the URL scheme `s` starts with (RFC 3986 section 3.1, scheme = ALPHA *( ALPHA /
 * DIGIT / "+" / "-" / "." ), case-insensitive), when "://" follows it; else 0.
 */
static size_t scheme_len(const char *s)
{
    size_t n = 0;
    for (;; n++) {
        char c = s[n];
        int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        if (!alpha && (n == 0 || !((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.')))
            break;
    }
    if (n == 0)
        return 0;
    return strncmp(s + n, "://", 3) == 0 ? n : 0;
}

/* Set cfg->server from `server`: scheme checks and defaulting as described in config.h. */
static int set_server(const char *server, const char *where, const char *name,
                      struct kube_config *cfg, char *err, size_t errlen)
{
    /* A server without a scheme means https, as in client-go (rest.DefaultServerURL): never send
     * credentials in clear text because a scheme was left out. Only a prefix is a scheme: a
     * "://" later in the text ("127.0.0.1:28080/x?a=://") is not one. */
    size_t slen = scheme_len(server);
    if (slen && !((slen == 5 && strncasecmp(server, "https", 5) == 0) ||
                  (slen == 4 && strncasecmp(server, "http", 4) == 0))) {
        errbuf_printf(err, errlen, "%s: cluster \"%s\": server %.*s:// is not http or https", where,
                      name, (int)slen, server);
        return K_EINVAL;
    }
    free(cfg->server);
    if (slen)
        cfg->server = strdup(server);
    else if (asprintf(&cfg->server, "https://%s", server) < 0)
        cfg->server = NULL;
    if (!cfg->server)
        return K_ENOMEM;
    size_t n = strlen(cfg->server);
    while (n > 0 && cfg->server[n - 1] == '/')
        cfg->server[--n] = '\0';
    /* "/" or "https://" leave no host: say so now, not at the first request. */
    const char *sep = strstr(cfg->server, "://");
    if (!sep || sep[3] == '\0') {
        errbuf_printf(err, errlen, "%s: cluster \"%s\": server \"%s\" names no host", where, name,
                      server);
        return K_EINVAL;
    }
    return K_OK;
}

/* proxy-url: http, https or socks5 (client-go: rest/transport.go, ProxyURL's schemes). */
static int set_proxy(const char *proxy, const char *where, const char *name,
                     struct kube_config *cfg, char *err, size_t errlen)
{
    size_t slen = scheme_len(proxy);
    const char *rest = proxy + slen + 3;
    if (slen == 6 && strncasecmp(proxy, "socks5", 6) == 0) {
        /* Go's SOCKS5 dialer sends the host name to the proxy: curl's socks5h. */
        if (asprintf(&cfg->proxy_url, "socks5h://%s", rest) < 0)
            cfg->proxy_url = NULL;
    } else if ((slen == 4 && strncasecmp(proxy, "http", 4) == 0) ||
               (slen == 5 && strncasecmp(proxy, "https", 5) == 0)) {
        cfg->proxy_url = strdup(proxy);
    } else {
        errbuf_printf(err, errlen,
                      "%s: cluster \"%s\": proxy-url \"%s\": the scheme must be http, https or "
                      "socks5",
                      where, name, proxy);
        return K_EINVAL;
    }
    if (!cfg->proxy_url)
        return K_ENOMEM;
    if (!*rest) {
        errbuf_printf(err, errlen, "%s: cluster \"%s\": proxy-url \"%s\" names no host", where,
                      name, proxy);
        return K_EINVAL;
    }
    return K_OK;
}

static int replace_str(char **dst, const char *v)
{
    free(*dst);
    *dst = v ? strdup(v) : NULL;
    return v && !*dst ? K_ENOMEM : K_OK;
}

/* A file named by a flag: relative to the working directory; it must be readable. */
static int flag_path(const char *flag, const char *p, char **out, char *err, size_t errlen)
{
    if (access(p, R_OK) != 0) {
        int e = errno;
        errbuf_printf(err, errlen, "--%s %s: %s", flag, p, strerror(e));
        return e == ENOENT ? K_ENOTFOUND : K_EINVAL;
    }
    return replace_str(out, p);
}

/*
 * The cluster `name` from the set (NULL name: none, only flags), then the flags in `ov` on top,
 * as client_config.go getCluster does.
 */
static int load_cluster(struct kc_set *set, const char *name,
                        const struct kube_config_overrides *ov, struct kube_config *cfg, char *err,
                        size_t errlen)
{
    struct kc_file *f = NULL;
    yaml_node_t *c = name ? set_find(set, "clusters", "cluster", name, &f) : NULL;
    int rc;

    if (name && !c) {
        errbuf_printf(err, errlen, "kubeconfig %s: cluster \"%s\" not found", set->label, name);
        return K_EINVAL;
    }
    const char *server = ov->server && *ov->server ? ov->server
                         : c                       ? map_str(&f->doc, c, "server")
                                                   : NULL;
    if (!server) {
        if (c)
            errbuf_printf(err, errlen, "kubeconfig %s: cluster \"%s\" has no server", f->path,
                          name);
        else
            errbuf_printf(err, errlen, "kubeconfig %s: no cluster: give --server or --cluster",
                          set->label);
        return K_EINVAL;
    }
    char label[4200];
    snprintf(label, sizeof(label), "kubeconfig %s", f ? f->path : set->label);
    const char *where = ov->server && *ov->server ? "--server" : label;
    rc = set_server(server, where, name ? name : "", cfg, err, errlen);
    if (rc)
        return rc;

    if (c) {
        /* Inline data wins over a file, as in client-go. */
        rc = take_data(f, c, "certificate-authority-data", "cluster", name, &cfg->ca_pem,
                       &cfg->ca_pem_len, err, errlen);
        if (rc)
            return rc;
        if (!cfg->ca_pem) {
            rc = take_path(f, c, "certificate-authority", "cluster", name, &cfg->ca_file, err,
                           errlen);
            if (rc)
                return rc;
        }
        const char *insecure = map_str(&f->doc, c, "insecure-skip-tls-verify");
        if (insecure && parse_bool(insecure, &cfg->insecure) != K_OK) {
            errbuf_printf(err, errlen,
                          "kubeconfig %s: cluster \"%s\": insecure-skip-tls-verify \"%s\" is not "
                          "a boolean",
                          f->path, name, insecure);
            return K_EINVAL;
        }
        const char *sni = map_str(&f->doc, c, "tls-server-name");
        if (sni && (rc = replace_str(&cfg->tls_server_name, sni)))
            return rc;
        const char *proxy = map_str(&f->doc, c, "proxy-url");
        if (proxy && (rc = set_proxy(proxy, label, name, cfg, err, errlen)))
            return rc;
    }

    /* --certificate-authority or --insecure-skip-tls-verify replace the CA and the insecure
     * setting together; --server clears a tls-server-name unless one is given with it. */
    bool has_ca = ov->certificate_authority && *ov->certificate_authority;
    if (ov->insecure || has_ca) {
        cfg->insecure = ov->insecure;
        if (cfg->ca_pem) {
            free(cfg->ca_pem);
            cfg->ca_pem = NULL;
            cfg->ca_pem_len = 0;
        }
        free(cfg->ca_file);
        cfg->ca_file = NULL;
        if (has_ca && (rc = flag_path("certificate-authority", ov->certificate_authority,
                                      &cfg->ca_file, err, errlen)))
            return rc;
    }
    bool has_sni = ov->tls_server_name && *ov->tls_server_name;
    if ((has_sni || (ov->server && *ov->server)) &&
        (rc = replace_str(&cfg->tls_server_name, has_sni ? ov->tls_server_name : NULL)))
        return rc;
    return K_OK;
}

static void exec_config_free(struct kube_exec_config *e)
{
    if (!e)
        return;
    free(e->command);
    for (size_t i = 0; i < e->nargs; i++)
        free(e->args[i]);
    free(e->args);
    for (size_t i = 0; i < e->nenv; i++)
        free(e->env[i]);
    free(e->env);
    free(e->api_version);
    free(e->install_hint);
    free(e->user);
    free(e);
}

/* users[].user.exec into cfg->exec, validated as clientcmd's validateAuthInfo does. */

/* An exec args / env sequence: its length in *n (at most KUBE_EXEC_MAX_ARGS) and a zeroed array
 * of that many pointers in *out (NULL when empty). */
static int exec_list(const struct kc_file *f, const char *name, yaml_node_t *seq, const char *what,
                     char ***out, size_t *n, char *err, size_t errlen)
{
    *n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    if (*n > KUBE_EXEC_MAX_ARGS) {
        errbuf_printf(err, errlen, "kubeconfig %s: user \"%s\": more than %d exec %s", f->path,
                      name, KUBE_EXEC_MAX_ARGS, what);
        return K_EINVAL;
    }
    if (*n && !(*out = calloc(*n, sizeof(char *))))
        return K_ENOMEM;
    return K_OK;
}

static int load_exec(struct kc_file *f, yaml_node_t *ex, const char *name, struct kube_config *cfg,
                     char *err, size_t errlen)
{
    yaml_document_t *doc = &f->doc;
    struct kube_exec_config *e = calloc(1, sizeof(*e));
    if (!e)
        return K_ENOMEM;
    cfg->exec = e;
    if (!(e->user = strdup(name)))
        return K_ENOMEM;
    if (ex->type != YAML_MAPPING_NODE) {
        errbuf_printf(err, errlen, "kubeconfig %s: user \"%s\": exec is not a mapping", f->path,
                      name);
        return K_EINVAL;
    }
    const char *command = map_str(doc, ex, "command");
    const char *api = map_str(doc, ex, "apiVersion");
    const char *mode = map_str(doc, ex, "interactiveMode");
    const char *hint = map_str(doc, ex, "installHint");
    const char *pci = map_str(doc, ex, "provideClusterInfo");
    if (!command) {
        errbuf_printf(err, errlen,
                      "kubeconfig %s: command must be specified for %s to use exec "
                      "authentication plugin",
                      f->path, name);
        return K_EINVAL;
    }
    if (!api) {
        errbuf_printf(err, errlen,
                      "kubeconfig %s: apiVersion must be specified for %s to use exec "
                      "authentication plugin",
                      f->path, name);
        return K_EINVAL;
    }
    if (strcmp(api, KUBE_EXEC_API_V1) != 0 && strcmp(api, KUBE_EXEC_API_V1BETA1) != 0) {
        errbuf_printf(err, errlen,
                      "kubeconfig %s: user \"%s\": exec apiVersion \"%s\" is not supported: use "
                      "%s or %s",
                      f->path, name, api, KUBE_EXEC_API_V1, KUBE_EXEC_API_V1BETA1);
        return K_EINVAL;
    }
    if (!mode && strcmp(api, KUBE_EXEC_API_V1) == 0) {
        /* v1beta1 defaults to IfAvailable (clientcmd/api/v1 defaults.go); v1 has no default. */
        errbuf_printf(err, errlen,
                      "kubeconfig %s: interactiveMode must be specified for %s to use exec "
                      "authentication plugin",
                      f->path, name);
        return K_EINVAL;
    }
    if (!mode || strcmp(mode, "IfAvailable") == 0) {
        e->interactive = KUBE_EXEC_IF_AVAILABLE;
    } else if (strcmp(mode, "Never") == 0) {
        e->interactive = KUBE_EXEC_NEVER;
    } else if (strcmp(mode, "Always") == 0) {
        e->interactive = KUBE_EXEC_ALWAYS;
    } else {
        errbuf_printf(err, errlen, "kubeconfig %s: invalid interactiveMode for %s: \"%s\"", f->path,
                      name, mode);
        return K_EINVAL;
    }
    if (pci && parse_bool(pci, &e->provide_cluster_info) != K_OK) {
        errbuf_printf(err, errlen,
                      "kubeconfig %s: user \"%s\": provideClusterInfo \"%s\" is not a boolean",
                      f->path, name, pci);
        return K_EINVAL;
    }
    /* A command with a '/' is a path relative to the kubeconfig; a bare name is looked up on
     * $PATH when it runs. */
    e->command = strchr(command, '/') ? resolve_path(f->dir, command) : strdup(command);
    e->api_version = strdup(api);
    if (!e->command || !e->api_version || (hint && !(e->install_hint = strdup(hint))))
        return K_ENOMEM;

    yaml_node_t *args = map_get(doc, ex, "args");
    if (args && args->type == YAML_SEQUENCE_NODE) {
        size_t n;
        int rc = exec_list(f, name, args, "args", &e->args, &n, err, errlen);
        if (rc != K_OK)
            return rc;
        for (size_t i = 0; i < n; i++) {
            yaml_node_t *it = yaml_document_get_node(doc, args->data.sequence.items.start[i]);
            const char *v =
                it && it->type == YAML_SCALAR_NODE ? (const char *)it->data.scalar.value : NULL;
            if (!v || strlen(v) != it->data.scalar.length) {
                errbuf_printf(err, errlen,
                              "kubeconfig %s: user \"%s\": exec args[%zu] is not "
                              "a string",
                              f->path, name, i);
                return K_EINVAL;
            }
            if (!(e->args[e->nargs++] = strdup(v)))
                return K_ENOMEM;
        }
    }
    yaml_node_t *env = map_get(doc, ex, "env");
    if (env && env->type == YAML_SEQUENCE_NODE) {
        size_t n;
        int rc = exec_list(f, name, env, "env entries", &e->env, &n, err, errlen);
        if (rc != K_OK)
            return rc;
        for (size_t i = 0; i < n; i++) {
            yaml_node_t *it = yaml_document_get_node(doc, env->data.sequence.items.start[i]);
            const char *vn = map_str(doc, it, "name");
            const char *vv = map_str(doc, it, "value");
            if (!vn || strchr(vn, '=')) {
                errbuf_printf(err, errlen,
                              "kubeconfig %s: env variable name must be specified for %s to use "
                              "exec authentication plugin",
                              f->path, name);
                return K_EINVAL;
            }
            if (asprintf(&e->env[e->nenv], "%s=%s", vn, vv ? vv : "") < 0) {
                e->env[e->nenv] = NULL;
                return K_ENOMEM;
            }
            e->nenv++;
        }
    }
    return K_OK;
}

/* users[].user.{as, as-groups, as-uid} (kubectl config's impersonation fields). */
static int load_impersonation(struct kc_file *f, yaml_node_t *u, const char *name,
                              struct kube_config *cfg, char *err, size_t errlen)
{
    int rc;
    const char *as = map_str(&f->doc, u, "as");
    const char *uid = map_str(&f->doc, u, "as-uid");
    if ((rc = replace_str(&cfg->impersonate_user, as)) ||
        (rc = replace_str(&cfg->impersonate_uid, uid)))
        return rc;
    yaml_node_t *groups = map_get(&f->doc, u, "as-groups");
    if (groups && groups->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = groups->data.sequence.items.start;
             it < groups->data.sequence.items.top; it++) {
            const char *g = scalar(yaml_document_get_node(&f->doc, *it));
            if (!g)
                continue;
            if (cfg->n_impersonate_groups == KUBE_AS_GROUPS_MAX) {
                errbuf_printf(err, errlen, "kubeconfig %s: user \"%s\": more than %d as-groups",
                              f->path, name, KUBE_AS_GROUPS_MAX);
                return K_EINVAL;
            }
            if (!(cfg->impersonate_groups[cfg->n_impersonate_groups++] = strdup(g)))
                return K_ENOMEM;
        }
    }
    return K_OK;
}

/* Read a token file into *out (trimmed). */
static int read_token_file(const char *path, char **out)
{
    struct buf b;
    buf_init(&b, TOKEN_MAX);
    int rc = read_file(path, &b);
    if (rc) {
        buf_cleanup(&b);
        return rc;
    }
    *out = buf_take(&b);
    if (!*out)
        return K_ENOMEM;
    trim(*out);
    return K_OK;
}

/* The impersonation flags, replacing the user's settings (mergo.WithOverride). */
static int impersonation_flags(const struct kube_config_overrides *ov, struct kube_config *cfg)
{
    int rc = K_OK;
    if (ov->as && *ov->as)
        rc = replace_str(&cfg->impersonate_user, ov->as);
    if (!rc && ov->as_uid && *ov->as_uid)
        rc = replace_str(&cfg->impersonate_uid, ov->as_uid);
    if (!rc && ov->n_as_groups) {
        for (size_t i = 0; i < cfg->n_impersonate_groups; i++)
            free(cfg->impersonate_groups[i]);
        cfg->n_impersonate_groups = 0;
    }
    for (size_t i = 0; !rc && i < ov->n_as_groups && i < KUBE_AS_GROUPS_MAX; i++) {
        if (!(cfg->impersonate_groups[i] = strdup(ov->as_groups[i])))
            rc = K_ENOMEM;
        else
            cfg->n_impersonate_groups++;
    }
    return rc;
}

/*
 * The user `name` from the set (NULL: none), then the flags in `ov` on top, as client_config.go
 * getAuthInfo and getUserIdentificationPartialConfig do.
 */
static int load_user(struct kc_set *set, const char *name, const struct kube_config_overrides *ov,
                     struct kube_config *cfg, char *err, size_t errlen)
{
    struct kc_file *f = NULL;
    yaml_node_t *u = name ? set_find(set, "users", "user", name, &f) : NULL;
    int rc;
    const char *token = NULL;
    const char *label = f ? f->path : set->label;

    if (name && !u) {
        errbuf_printf(err, errlen, "kubeconfig %s: user \"%s\" not found", set->label, name);
        return K_EINVAL;
    }
    if (u) {
        rc = take_data(f, u, "client-certificate-data", "user", name, &cfg->cert_pem,
                       &cfg->cert_pem_len, err, errlen);
        if (rc)
            return rc;
        if (!cfg->cert_pem) {
            rc = take_path(f, u, "client-certificate", "user", name, &cfg->cert_file, err, errlen);
            if (rc)
                return rc;
        }
        rc = take_data(f, u, "client-key-data", "user", name, &cfg->key_pem, &cfg->key_pem_len, err,
                       errlen);
        if (rc)
            return rc;
        if (!cfg->key_pem) {
            rc = take_path(f, u, "client-key", "user", name, &cfg->key_file, err, errlen);
            if (rc)
                return rc;
        }
        /* client-go: a literal token wins and tokenFile is kept for refreshes. */
        token = map_str(&f->doc, u, "token");
        rc = take_path(f, u, "tokenFile", "user", name, &cfg->token_file, err, errlen);
        if (rc)
            return rc;
        yaml_node_t *ap = map_get(&f->doc, u, "auth-provider");
        if (ap) {
            const char *apn = map_str(&f->doc, ap, "name");
            errbuf_printf(err, errlen,
                          "kubeconfig %s: user \"%s\": auth-provider%s%s%s is not supported (the "
                          "in-tree providers were removed from client-go in Kubernetes 1.26); use "
                          "an exec credential plugin instead, e.g. gke-gcloud-auth-plugin (GKE) "
                          "or kubelogin (AKS, OIDC)",
                          f->path, name, apn ? " \"" : "", apn ? apn : "", apn ? "\"" : "");
            return K_EINVAL;
        }
        yaml_node_t *ex = map_get(&f->doc, u, "exec");
        if (ex && (rc = load_exec(f, ex, name, cfg, err, errlen)))
            return rc;
        if ((rc = load_impersonation(f, u, name, cfg, err, errlen)))
            return rc;
    }

    /* Flags: --client-certificate / --client-key replace file and data. */
    if (ov->client_certificate && *ov->client_certificate) {
        free(cfg->cert_pem);
        cfg->cert_pem = NULL;
        cfg->cert_pem_len = 0;
        if ((rc = flag_path("client-certificate", ov->client_certificate, &cfg->cert_file, err,
                            errlen)))
            return rc;
    }
    if (ov->client_key && *ov->client_key) {
        if (cfg->key_pem) {
            OPENSSL_cleanse(cfg->key_pem, cfg->key_pem_len);
            free(cfg->key_pem);
            cfg->key_pem = NULL;
            cfg->key_pem_len = 0;
        }
        if ((rc = flag_path("client-key", ov->client_key, &cfg->key_file, err, errlen)))
            return rc;
    }
    bool has_cert = cfg->cert_pem || cfg->cert_file;
    bool has_key = cfg->key_pem || cfg->key_file;
    if (has_cert != has_key) {
        errbuf_printf(err, errlen, "kubeconfig %s: user \"%s\" has a client %s but no client %s",
                      label, name ? name : "", has_cert ? "certificate" : "key",
                      has_cert ? "key" : "certificate");
        return K_EINVAL;
    }
    bool token_flag = ov->token && *ov->token;
    if (token_flag) {
        /* --token replaces the user's token and its file. */
        token = ov->token;
        free(cfg->token_file);
        cfg->token_file = NULL;
    }
    if (token) {
        cfg->token = strdup(token);
        if (!cfg->token)
            return K_ENOMEM;
    } else if (cfg->token_file) {
        /* A tokenFile alone is read now, so a missing file is reported at start-up. */
        rc = read_token_file(cfg->token_file, &cfg->token);
        if (rc) {
            errbuf_printf(err, errlen, "kubeconfig %s: user \"%s\": tokenFile %s: %s", label,
                          name ? name : "", cfg->token_file,
                          rc == K_ETOOBIG ? "too large" : strerror(errno));
            return rc == K_ENOMEM || rc == K_ENOTFOUND ? rc : K_EINVAL;
        }
    }
    if (cfg->token && !kube_header_value_ok(cfg->token)) {
        errbuf_printf(err, errlen, "%s%s: user \"%s\": %s%s contains a control character",
                      token_flag ? "--token" : "kubeconfig ", token_flag ? "" : label,
                      name ? name : "", token ? "token" : "tokenFile ",
                      token ? "" : cfg->token_file);
        return K_EINVAL;
    }
    /* A request that carries a bearer token does not run the exec plugin (client-go's exec
     * round tripper), so with a token the stanza is dropped. */
    if (cfg->token && cfg->exec) {
        exec_config_free(cfg->exec);
        cfg->exec = NULL;
    }
    if (u && !has_cert && !cfg->token && !cfg->exec &&
        (map_get(&f->doc, u, "username") || map_get(&f->doc, u, "password"))) {
        errbuf_printf(err, errlen,
                      "kubeconfig %s: user \"%s\" uses username/password (basic "
                      "authentication), which kube-apiserver no longer supports (removed in "
                      "Kubernetes 1.19); use a token, a client certificate or an exec plugin",
                      f->path, name);
        return K_EINVAL;
    }

    /* Impersonation flags replace the user's settings (mergo.WithOverride). */
    rc = impersonation_flags(ov, cfg);
    if (rc)
        return rc;
    /* Groups or a uid without a user: client_config.go ClientConfig refuses it. */
    if (!cfg->impersonate_user && (cfg->n_impersonate_groups || cfg->impersonate_uid)) {
        errbuf_printf(err, errlen,
                      "requesting uid, groups or user-extra for %s without impersonating a user",
                      name ? name : "");
        return K_EINVAL;
    }
    return K_OK;
}

/* Resolve the context (--context, else current-context) through the set into cfg. */
static int load_from_set(struct kc_set *set, const struct kube_config_overrides *ov,
                         struct kube_config *cfg, char *err, size_t errlen)
{
    const char *current = ov->context && *ov->context ? ov->context : NULL;
    struct kc_file *cf = NULL;
    yaml_node_t *ctx = NULL;
    int rc;

    for (size_t i = 0; i < set->n && !current; i++) {
        struct kc_file *f = &set->files[i];
        if (f->has_doc)
            current = map_str(&f->doc, yaml_document_get_root_node(&f->doc), "current-context");
    }
    bool flags_name_cluster = (ov->cluster && *ov->cluster) || (ov->server && *ov->server);
    if (!current && !flags_name_cluster) {
        errbuf_printf(err, errlen, "kubeconfig %s: no current-context set", set->label);
        return K_EINVAL;
    }
    if (current) {
        ctx = set_find(set, "contexts", "context", current, &cf);
        if (!ctx && ov->context && *ov->context) {
            errbuf_printf(err, errlen, "kubeconfig %s: context \"%s\" does not exist", set->label,
                          current);
            return K_EINVAL;
        }
        if (!ctx && !flags_name_cluster) {
            errbuf_printf(err, errlen, "kubeconfig %s: context \"%s\" not found", set->label,
                          current);
            return K_EINVAL;
        }
    }
    const char *cluster = ov->cluster && *ov->cluster ? ov->cluster
                          : ctx                       ? map_str(&cf->doc, ctx, "cluster")
                                                      : NULL;
    const char *user = ov->user && *ov->user ? ov->user
                       : ctx                 ? map_str(&cf->doc, ctx, "user")
                                             : NULL;
    if (!cluster && !(ov->server && *ov->server)) {
        errbuf_printf(err, errlen, "kubeconfig %s: context \"%s\" names no cluster",
                      cf ? cf->path : set->label, current ? current : "");
        return K_EINVAL;
    }
    cfg->source = strdup(cf ? cf->path : set->label);
    if (!cfg->source)
        return K_ENOMEM;
    const char *ns = ov->ns && *ov->ns ? ov->ns : ctx ? map_str(&cf->doc, ctx, "namespace") : NULL;
    if (ns && *ns && !(cfg->ns = strdup(ns)))
        return K_ENOMEM;
    rc = load_cluster(set, cluster, ov, cfg, err, errlen);
    if (rc)
        return rc;
    return load_user(set, user, ov, cfg, err, errlen);
}

static int load_kubeconfig_file(const char *path, const struct kube_config_overrides *ov,
                                struct kube_config *cfg, char *err, size_t errlen)
{
    struct kc_set *set = calloc(1, sizeof(*set));
    if (!set)
        return K_ENOMEM;
    set->label = path;
    set->n = 1;
    int rc = kc_file_load(&set->files[0], path, 0, err, errlen);
    if (!rc)
        rc = load_from_set(set, ov, cfg, err, errlen);
    kc_set_cleanup(set);
    free(set);
    return rc;
}

/* No kubeconfig at all: the flags alone (--server and credentials). */
static int load_flags_only(const struct kube_config_overrides *ov, struct kube_config *cfg,
                           char *err, size_t errlen)
{
    struct kc_set *set = calloc(1, sizeof(*set));
    if (!set)
        return K_ENOMEM;
    set->label = "(flags)";
    int rc = load_from_set(set, ov, cfg, err, errlen);
    free(set);
    return rc;
}

static int load_kubeconfig_list(const char *list, const struct kube_config_overrides *ov,
                                struct kube_config *cfg, char *err, size_t errlen)
{
    int rc = K_OK;
    int found = 0;
    char *copy = strdup(list);
    struct kc_set *set = calloc(1, sizeof(*set));
    if (!copy || !set) {
        rc = K_ENOMEM;
        goto out;
    }
    set->label = list;
    char *save = NULL;
    for (char *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
        if (set->n == KUBECONFIG_FILES_MAX) {
            errbuf_printf(err, errlen, "$KUBECONFIG %s: more than %d files", list,
                          KUBECONFIG_FILES_MAX);
            rc = K_EINVAL;
            goto out;
        }
        rc = kc_file_load(&set->files[set->n++], p, 1, err, errlen);
        if (rc)
            goto out;
        found += set->files[set->n - 1].has_doc;
    }
    if (!found) {
        errbuf_printf(err, errlen, "$KUBECONFIG %s: none of the files exist", list);
        rc = K_ENOTFOUND;
        goto out;
    }
    rc = load_from_set(set, ov, cfg, err, errlen);
out:
    if (set)
        kc_set_cleanup(set);
    free(set);
    free(copy);
    return rc;
}

static int load_in_cluster(const char *host, const char *port, struct kube_config *cfg, char *err,
                           size_t errlen)
{
    const char *dir = getenv("GPUTRI_SERVICEACCOUNT_DIR");
    struct buf b;
    int rc;

    if (!dir || !*dir)
        dir = SERVICEACCOUNT_DIR;
    buf_init(&b, 4096);
    /* An IPv6 service address needs brackets, as net.JoinHostPort adds in client-go. */
    if (strchr(host, ':') && host[0] != '[')
        rc = buf_printf(&b, "https://[%s]:%s", host, port);
    else
        rc = buf_printf(&b, "https://%s:%s", host, port);
    if (rc) {
        buf_cleanup(&b);
        errbuf_printf(err, errlen, "in-cluster: KUBERNETES_SERVICE_HOST/PORT too long");
        return rc == K_ENOMEM ? rc : K_EINVAL;
    }
    cfg->server = buf_take(&b);
    cfg->source = strdup("in-cluster");
    cfg->token_file = resolve_path(dir, "token");
    char *ca = resolve_path(dir, "ca.crt");
    if (!cfg->server || !cfg->source || !cfg->token_file || !ca) {
        free(ca);
        return K_ENOMEM;
    }
    /* As client-go's InClusterConfig: without a readable CA the system roots are used. */
    if (access(ca, R_OK) == 0)
        cfg->ca_file = ca;
    else
        free(ca);

    buf_init(&b, TOKEN_MAX);
    rc = read_file(cfg->token_file, &b);
    if (rc) {
        errbuf_printf(err, errlen, "in-cluster: token %s: %s", cfg->token_file,
                      rc == K_ETOOBIG ? "too large" : strerror(errno));
        buf_cleanup(&b);
        return rc == K_ENOMEM || rc == K_ENOTFOUND ? rc : K_EINVAL;
    }
    cfg->token = buf_take(&b);
    trim(cfg->token);
    if (!cfg->token[0]) {
        errbuf_printf(err, errlen, "in-cluster: token %s is empty", cfg->token_file);
        return K_EINVAL;
    }
    if (!kube_header_value_ok(cfg->token)) {
        errbuf_printf(err, errlen, "in-cluster: token %s contains a control character",
                      cfg->token_file);
        return K_EINVAL;
    }
    /* The namespace: $POD_NAMESPACE, else the service account's file (optional). */
    const char *pod_ns = getenv("POD_NAMESPACE");
    if (pod_ns && *pod_ns) {
        cfg->ns = strdup(pod_ns);
    } else {
        char *path = resolve_path(dir, "namespace");
        buf_init(&b, 256);
        if (path && read_file(path, &b) == K_OK) {
            cfg->ns = buf_take(&b);
            trim(cfg->ns);
            if (!cfg->ns[0]) {
                free(cfg->ns);
                cfg->ns = NULL;
            }
        }
        buf_cleanup(&b);
        free(path);
    }
    return K_OK;
}

/* The cluster the exec plugin sees, and the credential cache. */
static int exec_setup(struct kube_config *cfg, char *err, size_t errlen)
{
    struct kube_exec_cluster *cl = &cfg->exec_cluster;
    cl->server = cfg->server;
    cl->tls_server_name = cfg->tls_server_name;
    cl->proxy_url = cfg->proxy_url;
    cl->insecure = cfg->insecure;
    if (cfg->ca_pem) {
        cl->ca_pem = cfg->ca_pem;
        cl->ca_pem_len = cfg->ca_pem_len;
    } else if (cfg->ca_file && cfg->exec->provide_cluster_info) {
        struct buf b;
        buf_init(&b, KUBECONFIG_MAX);
        int rc = read_file(cfg->ca_file, &b);
        if (rc) {
            buf_cleanup(&b);
            errbuf_printf(err, errlen, "certificate-authority %s: %s", cfg->ca_file,
                          rc == K_ETOOBIG ? "too large" : strerror(errno));
            return rc == K_ENOMEM ? rc : K_EINVAL;
        }
        cl->ca_pem_len = b.len;
        cfg->exec_ca_pem = buf_take(&b);
        if (!cfg->exec_ca_pem)
            return K_ENOMEM;
        cl->ca_pem = cfg->exec_ca_pem;
    }
    cfg->exec_cache = kube_exec_cache_new(cfg->exec, cl, NULL, NULL, NULL);
    return cfg->exec_cache ? K_OK : K_ENOMEM;
}

int kube_parse_timeout(const char *s, int64_t *out_ms)
{
    static const struct {
        const char *unit;
        double ms;
    } units[] = {{"ns", 1e-6}, {"us", 1e-3}, {"\xc2\xb5s", 1e-3}, {"ms", 1},
                 {"s", 1000},  {"m", 60000}, {"h", 3600000}};
    const double max_ms = 366.0 * 24 * 3600 * 1000;
    char *end;
    if (!s || !*s || strlen(s) > 64)
        return K_EINVAL;
    /* A plain integer is seconds (ParseTimeout's fallback); "0" is no timeout. */
    if (strspn(s, "0123456789") == strlen(s)) {
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || (double)v * 1000 > max_ms)
            return K_EINVAL;
        *out_ms = (int64_t)v * 1000;
        return K_OK;
    }
    /* A Go duration: an optional sign, then one or more <decimal><unit>, e.g. "1h2m3.5s". A
     * negative one is accepted and means no limit, as for Go's http.Client. */
    double total = 0;
    bool negative = *s == '-';
    const char *p = s + (*s == '-' || *s == '+');
    if (!*p)
        return K_EINVAL;
    for (int parts = 0; *p; parts++) {
        if (parts >= 16 || !((*p >= '0' && *p <= '9') || *p == '.'))
            return K_EINVAL;
        size_t nd = strspn(p, "0123456789.");
        char num[32];
        if (nd >= sizeof(num))
            return K_EINVAL;
        memcpy(num, p, nd);
        num[nd] = '\0';
        if (strchr(num, '.') != strrchr(num, '.') || strcmp(num, ".") == 0)
            return K_EINVAL;
        double v = strtod(num, &end);
        if (*end)
            return K_EINVAL;
        p += nd;
        size_t best = 0;
        double scale = 0;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
            size_t ul = strlen(units[i].unit);
            if (strncmp(p, units[i].unit, ul) == 0 && ul > best) {
                best = ul;
                scale = units[i].ms;
            }
        }
        if (!best)
            return K_EINVAL;
        p += best;
        total += v * scale;
        if (total > max_ms)
            return K_EINVAL;
    }
    /* A positive duration below a millisecond is 1 ms: 0 would mean no timeout at all. */
    if (!negative && total > 0 && total < 1)
        total = 1;
    *out_ms = negative ? 0 : (int64_t)total;
    return K_OK;
}

int kube_config_load_overrides(const char *explicit_path, const struct kube_config_overrides *ov,
                               struct kube_config *cfg, char *err, size_t errlen)
{
    static const struct kube_config_overrides none;
    int rc;

    if (!ov)
        ov = &none;

    memset(cfg, 0, sizeof(*cfg));
    errbuf_printf(err, errlen, "%s", "");

    const char *env = getenv("KUBECONFIG");
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    const char *home = getenv("HOME");

    if (explicit_path && *explicit_path) {
        rc = load_kubeconfig_file(explicit_path, ov, cfg, err, errlen);
    } else if (env && *env) {
        rc = load_kubeconfig_list(env, ov, cfg, err, errlen);
    } else if (host && *host && port && *port && !(ov->server && *ov->server)) {
        /* In a pod, as client-go's DeferredLoadingClientConfig: --server makes a configuration
         * of the flags alone (below); --token and --certificate-authority replace the service
         * account's (inClusterClientConfig's overrides). */
        rc = load_in_cluster(host, port, cfg, err, errlen);
        if (!rc && ov->token && *ov->token) {
            free(cfg->token_file);
            cfg->token_file = NULL;
            rc = replace_str(&cfg->token, ov->token);
        }
        if (!rc && ov->certificate_authority && *ov->certificate_authority)
            rc = replace_str(&cfg->ca_file, ov->certificate_authority);
        if (!rc && ov->ns && *ov->ns)
            rc = replace_str(&cfg->ns, ov->ns);
        if (!rc)
            rc = impersonation_flags(ov, cfg);
        if (!rc && !cfg->impersonate_user && (cfg->n_impersonate_groups || cfg->impersonate_uid)) {
            errbuf_printf(err, errlen,
                          "requesting uid, groups or user-extra for in-cluster without "
                          "impersonating a user");
            rc = K_EINVAL;
        }
    } else if (home && *home) {
        char path[4096];
        int n = snprintf(path, sizeof(path), "%s/.kube/config", home);
        if (n < 0 || (size_t)n >= sizeof(path)) {
            errbuf_printf(err, errlen, "$HOME is too long");
            rc = K_EINVAL;
        } else if (access(path, F_OK) != 0 && ov->server && *ov->server) {
            rc = load_flags_only(ov, cfg, err, errlen);
        } else if (access(path, F_OK) != 0) {
            errbuf_printf(
                err, errlen,
                "no Kubernetes configuration: no --kubeconfig, $KUBECONFIG unset, not in a "
                "cluster ($KUBERNETES_SERVICE_HOST unset) and %s does not exist",
                path);
            rc = K_ENOTFOUND;
        } else {
            rc = load_kubeconfig_file(path, ov, cfg, err, errlen);
        }
    } else if (ov->server && *ov->server) {
        rc = load_flags_only(ov, cfg, err, errlen);
    } else {
        errbuf_printf(err, errlen,
                      "no Kubernetes configuration: no --kubeconfig, $KUBECONFIG unset, "
                      "not in a cluster and $HOME unset");
        rc = K_ENOTFOUND;
    }
    if (!rc && ov->request_timeout && *ov->request_timeout) {
        if (kube_parse_timeout(ov->request_timeout, &cfg->request_timeout_ms) != K_OK) {
            /* kubectl's words (client_config.go ParseTimeout). */
            errbuf_printf(err, errlen,
                          "Invalid timeout value. Timeout must be a single integer in seconds, or "
                          "an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)");
            rc = K_EINVAL;
        }
        cfg->request_timeout_set = true;
    }
    if (!rc && cfg->exec)
        rc = exec_setup(cfg, err, errlen);
    if (rc == K_ENOMEM)
        errbuf_printf(err, errlen, "out of memory reading the Kubernetes configuration");
    if (rc)
        kube_config_cleanup(cfg);
    return rc;
}

int kube_config_load(const char *explicit_path, struct kube_config *cfg, char *err, size_t errlen)
{
    return kube_config_load_overrides(explicit_path, NULL, cfg, err, errlen);
}

static void names_of(struct kc_file *f, const char *list, void (*fn)(void *, const char *),
                     void *ctx, unsigned *calls)
{
    yaml_node_t *seq = map_get(&f->doc, yaml_document_get_root_node(&f->doc), list);
    if (!seq || seq->type != YAML_SEQUENCE_NODE)
        return;
    for (yaml_node_item_t *it = seq->data.sequence.items.start;
         it < seq->data.sequence.items.top && *calls < 4096; it++) {
        const char *n = map_str(&f->doc, yaml_document_get_node(&f->doc, *it), "name");
        if (n) {
            fn(ctx, n);
            (*calls)++;
        }
    }
}

int kube_config_names(const char *explicit_path, const char *list,
                      void (*fn)(void *ctx, const char *name), void *ctx)
{
    char home_path[4096];
    const char *env = getenv("KUBECONFIG");
    const char *home = getenv("HOME");
    const char *paths = explicit_path && *explicit_path ? explicit_path : env && *env ? env : NULL;
    if (!paths) {
        if (!home || !*home)
            return K_ENOTFOUND;
        snprintf(home_path, sizeof(home_path), "%s/.kube/config", home);
        paths = home_path;
    }
    char *copy = strdup(paths);
    struct kc_set *set = calloc(1, sizeof(*set));
    int rc = K_OK;
    unsigned calls = 0;
    if (!copy || !set) {
        rc = K_ENOMEM;
        goto out;
    }
    char *save = NULL;
    bool one = explicit_path && *explicit_path;
    for (char *p = one ? copy : strtok_r(copy, ":", &save); p && set->n < KUBECONFIG_FILES_MAX;
         p = one ? NULL : strtok_r(NULL, ":", &save)) {
        struct kc_file *f = &set->files[set->n++];
        rc = kc_file_load(f, p, 1, NULL, 0);
        if (rc)
            goto out;
        if (f->has_doc)
            names_of(f, list, fn, ctx, &calls);
    }
out:
    if (set)
        kc_set_cleanup(set);
    free(set);
    free(copy);
    return rc;
}

void kube_config_cleanup(struct kube_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->server);
    free(cfg->ca_file);
    free(cfg->ca_pem);
    free(cfg->cert_file);
    free(cfg->cert_pem);
    free(cfg->key_file);
    if (cfg->key_pem) {
        /* Private key material: do not leave it in freed memory. */
        OPENSSL_cleanse(cfg->key_pem, cfg->key_pem_len);
        free(cfg->key_pem);
    }
    if (cfg->token) {
        OPENSSL_cleanse(cfg->token, strlen(cfg->token));
        free(cfg->token);
    }
    free(cfg->token_file);
    free(cfg->source);
    free(cfg->ns);
    free(cfg->tls_server_name);
    free(cfg->proxy_url);
    free(cfg->impersonate_user);
    free(cfg->impersonate_uid);
    for (size_t i = 0; i < cfg->n_impersonate_groups; i++)
        free(cfg->impersonate_groups[i]);
    kube_exec_cache_free(cfg->exec_cache);
    exec_config_free(cfg->exec);
    free(cfg->exec_ca_pem);
    memset(cfg, 0, sizeof(*cfg));
}
