/* flags.c - the flags every gputri program takes (see flags.h). */
#include "flags.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "result.h"
#include "strconv.h"
#include "util/version.h"

int flags_verbosity(const char *s, int *out)
{
    long v;
    if (strconv_long(s, 0, FLAGS_V_MAX, &v) != K_OK)
        return K_EINVAL;
    *out = (int)v;
    return K_OK;
}

int flags_no_scheduler_grace(const char *s, int64_t *seconds, const char **why)
{
    int64_t ms = 0;
    int rc = strconv_duration_ms(s, 24LL * 3600 * 1000, &ms);
    if (rc == K_OK && ms < 1000)
        rc = K_EINVAL;
    if (rc != K_OK) {
        *why = rc == K_ETOOBIG ? "at most 24h" : "a duration of at least 1s, e.g. 30s";
        return rc;
    }
    *seconds = ms / 1000;
    return K_OK;
}

int flags_kube_api_qps(const char *s, double *out, const char **why)
{
    char *end = NULL;
    errno = 0;
    double v = s && (*s == '-' || *s == '.' || (*s >= '0' && *s <= '9')) ? strtod(s, &end) : NAN;
    if (!end || *end || errno || !isfinite(v) || v == 0 || v > FLAGS_KUBE_API_MAX) {
        *why = "a number of requests a second above 0, or negative for no limit";
        return K_EINVAL;
    }
    *out = v;
    return K_OK;
}

int flags_kube_api_burst(const char *s, int *out, const char **why)
{
    long v;
    if (strconv_long(s, 1, FLAGS_KUBE_API_MAX, &v) != K_OK) {
        *why = "a whole number of requests from 1 to 1000000";
        return K_EINVAL;
    }
    *out = (int)v;
    return K_OK;
}

enum flags_result flags_common_apply(struct flags_common *c, int opt, const char *arg, char *err,
                                     size_t errlen)
{
    switch (opt) {
    case FLAG_KUBECONFIG:
        c->kubeconfig = arg;
        return FLAGS_STORED;
    case FLAG_GPU_RESOURCES:
        c->gpu_resources = arg;
        return FLAGS_STORED;
    case 'v':
        if (flags_verbosity(arg, &c->verbosity) != K_OK) {
            errbuf_printf(err, errlen, "invalid value \"%s\" for --v (0..%d)", arg ? arg : "",
                          FLAGS_V_MAX);
            return FLAGS_INVALID;
        }
        return FLAGS_STORED;
    case 'h':
        c->help = true;
        return FLAGS_STORED;
    case FLAG_VERSION:
        c->version = true;
        return FLAGS_STORED;
    default:
        return FLAGS_OTHER;
    }
}

int flags_common_take(struct flags_common *c, int opt, const char *arg, char *const *argv,
                      int optind, char *err, size_t errlen)
{
    if (opt == ':') {
        errbuf_printf(err, errlen, "flag %s needs a value", argv[optind - 1]);
        return K_EINVAL;
    }
    enum flags_result fr = flags_common_apply(c, opt, arg, err, errlen);
    if (fr == FLAGS_OTHER)
        errbuf_printf(err, errlen, "unknown flag %s", argv[optind - 1]);
    return fr == FLAGS_STORED ? K_OK : K_EINVAL;
}

bool flags_answer(const struct flags_common *c, const char *program, void (*usage)(FILE *out))
{
    if (c->help) {
        usage(stdout);
        return true;
    }
    if (c->version) {
        printf("%s %s\n", program, GPUTRI_VERSION);
        return true;
    }
    return false;
}

/* One help line: `flag` after `indent` spaces, `text` from column `col` (or one space on). */
static void usage_line(FILE *out, int indent, const char *flag, int col, const char *text)
{
    int used = indent + (int)strlen(flag);
    fprintf(out, "%*s%s%*s%s\n", indent, "", flag, used < col ? col - used : 1, "", text);
}

void flags_usage(FILE *out, unsigned parts, int indent, int col, const char *gpu_default)
{
    if (parts & FLAGS_USAGE_CONFIG) {
        usage_line(out, indent, "--kubeconfig PATH", col,
                   "kubeconfig (default: $KUBECONFIG, in-cluster,");
        usage_line(out, 0, "", col, "~/.kube/config); its current-context is used");
        usage_line(out, indent, "--gpu-resources LIST", col,
                   "comma-separated GPU resource names; a trailing *");
        fprintf(out, "%*sis a prefix (default: %s)\n", col, "", gpu_default ? gpu_default : "");
    }
    if (parts & FLAGS_USAGE_KUBE_API) {
        usage_line(out, indent, "--kube-api-qps QPS", col,
                   "API requests a second, all clients together;");
        usage_line(out, 0, "", col, "watches are not limited (default 50; negative:");
        usage_line(out, 0, "", col, "no limit)");
        usage_line(out, indent, "--kube-api-burst N", col,
                   "API requests sent at once before --kube-api-qps");
        usage_line(out, 0, "", col, "holds them (default 100)");
    }
    if (parts & FLAGS_USAGE_BASIC) {
        usage_line(out, 2, "-v, --v N", col, "log verbosity (default 0)");
        usage_line(out, 2, "-h, --help", col, "show this help");
        usage_line(out, 6, "--version", col, "print the version");
    }
}
