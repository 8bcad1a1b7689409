/* kubeflags.c - kubectl's global flags (see kubeflags.h). */
#include "kubeflags.h"

#include <stdarg.h>
#include <string.h>

#include "util/result.h"

const struct kubeflag kubeflags[] = {
    {"as", 0, true, KF_AS, "USER", "user or service account to impersonate"},
    {"as-group", 0, true, KF_AS_GROUP, "GROUP", "group to impersonate (repeat for more)"},
    {"as-uid", 0, true, KF_AS_UID, "UID", "UID to impersonate"},
    {"certificate-authority", 0, true, KF_CA, "PATH", "CA certificate file"},
    {"client-certificate", 0, true, KF_CERT, "PATH", "client certificate file for TLS"},
    {"client-key", 0, true, KF_KEY, "PATH", "client key file for TLS"},
    {"cluster", 0, true, KF_CLUSTER, "NAME", "kubeconfig cluster to use"},
    {"context", 0, true, KF_CONTEXT, "NAME", "kubeconfig context to use"},
    {"insecure-skip-tls-verify", 0, false, KF_INSECURE, NULL,
     "do not verify the server's certificate"},
    {"request-timeout", 0, true, KF_REQUEST_TIMEOUT, "DURATION",
     "per request: 30s, 2m, 1h; a number is\n"
     "seconds; 0 waits forever (default 60s)"},
    {"server", 's', true, KF_SERVER, "URL", "address and port of the API server"},
    {"tls-server-name", 0, true, KF_TLS_SERVER_NAME, "NAME",
     "name to verify the server's certificate\n"
     "against (and send as SNI)"},
    {"token", 0, true, KF_TOKEN, "TOKEN", "bearer token for the API server"},
    {"user", 0, true, KF_USER, "NAME", "kubeconfig user to use"},
};
const size_t kubeflags_count = sizeof(kubeflags) / sizeof(kubeflags[0]);

const struct kubeflag *kubeflag_find(const char *name, size_t len)
{
    for (size_t i = 0; i < kubeflags_count; i++)
        if (strlen(kubeflags[i].name) == len && strncmp(kubeflags[i].name, name, len) == 0)
            return &kubeflags[i];
    return NULL;
}

const struct kubeflag *kubeflag_find_short(char c)
{
    for (size_t i = 0; i < kubeflags_count; i++)
        if (kubeflags[i].shorthand && kubeflags[i].shorthand == c)
            return &kubeflags[i];
    return NULL;
}

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
                                                      ...)
{
    if (errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int kubeflag_set(struct kube_config_overrides *ov, enum kubeflag_id id, const char *value,
                 const char *shown, char *err, size_t errlen)
{
    if (id == KF_INSECURE) {
        if (!value || strcmp(value, "true") == 0)
            ov->insecure = true;
        else if (strcmp(value, "false") == 0)
            ov->insecure = false;
        else
            return fail(err, errlen, "invalid argument \"%s\" for %s: want true or false", value,
                        shown);
        return 0;
    }
    if (!value || !*value)
        return fail(err, errlen, "%s needs a value", shown);
    switch (id) {
    case KF_CONTEXT:
        ov->context = value;
        break;
    case KF_CLUSTER:
        ov->cluster = value;
        break;
    case KF_USER:
        ov->user = value;
        break;
    case KF_SERVER:
        ov->server = value;
        break;
    case KF_TOKEN:
        ov->token = value;
        break;
    case KF_CA:
        ov->certificate_authority = value;
        break;
    case KF_CERT:
        ov->client_certificate = value;
        break;
    case KF_KEY:
        ov->client_key = value;
        break;
    case KF_TLS_SERVER_NAME:
        ov->tls_server_name = value;
        break;
    case KF_REQUEST_TIMEOUT:
        /* Checked when the configuration is loaded, as kubectl does (exit 1, its message). */
        ov->request_timeout = value;
        break;
    case KF_AS:
        ov->as = value;
        break;
    case KF_AS_GROUP:
        if (ov->n_as_groups == KUBE_AS_GROUPS_MAX)
            return fail(err, errlen, "more than %d %s", KUBE_AS_GROUPS_MAX, shown);
        ov->as_groups[ov->n_as_groups++] = value;
        break;
    case KF_AS_UID:
        ov->as_uid = value;
        break;
    case KF_INSECURE:
        break;
    }
    return 0;
}

void kubeflags_usage(FILE *out, int col)
{
    for (size_t i = 0; i < kubeflags_count; i++) {
        const struct kubeflag *f = &kubeflags[i];
        char left[64];
        int n;
        if (f->shorthand)
            n = snprintf(left, sizeof(left), "  -%c, --%s%s%s", f->shorthand, f->name,
                         f->arg ? " " : "", f->arg ? f->arg : "");
        else
            n = snprintf(left, sizeof(left), "      --%s%s%s", f->name, f->arg ? " " : "",
                         f->arg ? f->arg : "");
        if (n >= col)
            fprintf(out, "%s\n%*s", left, col, "");
        else
            fprintf(out, "%-*s", col, left);
        /* A description may hold line breaks: continue at the same column. */
        for (const char *p = f->help; *p;) {
            size_t len = strcspn(p, "\n");
            fprintf(out, "%.*s\n", (int)len, p);
            p += len;
            if (*p == '\n') {
                p++;
                fprintf(out, "%*s", col, "");
            }
        }
    }
}
