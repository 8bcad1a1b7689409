/* flags.c - the flags every gputri program takes (see flags.h). */
#include "flags.h"

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
