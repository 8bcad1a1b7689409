/* commands.c - gputri-certs' commands, generate and inspect (commands.h). */
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kube/client.h"
#include "kube/config.h"
#include "util/clock.h"
#include "util/escape.h"
#include "util/flags.h"
#include "util/log.h"
#include "util/result.h"
#include "util/strconv.h"
#include "util/version.h"

#include "pki/certgen.h"
#include "pki/publish.h"

#define PROG "gputri-certs"
#define MAX_NAMES 32 /* --dns or --ip values */

static void usage(FILE *out)
{
    fprintf(out,
            "Usage:\n"
            "  " PROG " [--v N] generate [flags]   create a CA and a serving certificate for the\n"
            "                                     webhook\n"
            "  " PROG " [--v N] inspect FILE...    print subject, SANs, validity and SHA-256\n"
            "                                     fingerprint\n"
            "\n"
            "Generate flags:\n"
            "  --out-dir DIR           write ca.crt, ca.key, tls.crt, tls.key into DIR (created\n"
            "                          if missing; keys mode 0600; each file replaced atomically)\n"
            "  --service NAME          webhook Service name (default gputri-webhook)\n"
            "  --namespace NS          its namespace, also the Secret's (default gputri)\n"
            "  --dns NAME              extra DNS SAN; repeat or comma-separate\n"
            "  --ip ADDR               extra IP SAN (IPv4 or IPv6); repeat or comma-separate\n"
            "  --key-type TYPE         ecdsa-p256 (default), rsa-2048, rsa-3072 or ed25519\n"
            "  --ca-days N             lifetime of a new CA (default %d)\n"
            "  --cert-days N           lifetime of the serving certificate (default %d)\n"
            "  --ca-cert FILE          renew: sign with this existing CA certificate...\n"
            "  --ca-key FILE           ...and its key; ca.crt/ca.key are passed through\n"
            "  --force                 replace an existing DIR/ca.key with a new CA\n"
            "  --client-cn NAME        also a client certificate with this CN (client.crt,\n"
            "                          client.key in DIR), signed by the same CA, for the API\n"
            "                          server to present to the webhook (its admission\n"
            "                          configuration; the webhook's --client-ca-file is ca.crt)\n"
            "  --secret NAME           also create or update this kubernetes.io/tls Secret\n"
            "                          (tls.crt, tls.key, ca.crt) in --namespace\n"
            "  --webhook-config NAME   set caBundle of every webhook in this\n"
            "                          ValidatingWebhookConfiguration to the CA\n"
            "  --kubeconfig PATH       for --secret/--webhook-config (default: $KUBECONFIG,\n"
            "                          in-cluster, ~/.kube/config); loaded, and the API server\n"
            "                          reached, before any file is written\n"
            "\n"
            "The service SANs are NAME, NAME.NS, NAME.NS.svc and NAME.NS.svc.cluster.local.\n"
            "\n"
            "Other flags (before or after the command):\n",
            CERTGEN_DEFAULT_CA_DAYS, CERTGEN_DEFAULT_CERT_DAYS);
    flags_usage(out, FLAGS_USAGE_BASIC, 2, 26, NULL);
    fprintf(out, "\n"
                 "Exit status: 0 done, 1 failed, 2 usage error.\n");
}

/*
 * One common flag from getopt_long (opt, optarg): store it in *c. Returns -1 when stored (go on),
 * else the exit status: 2 for a bad value or --gpu-resources (no GPU set here), 0 after
 * answering --help or --version.
 */
static int common_flag(const struct certs_io *io, struct flags_common *c, int opt, const char *arg)
{
    char ferr[256];
    enum flags_result fr = flags_common_apply(c, opt, arg, ferr, sizeof(ferr));
    if (fr == FLAGS_INVALID) {
        fprintf(io->err, PROG ": %s\n", ferr);
        fprintf(io->err, "Run '" PROG " --help' for usage.\n");
        return 2;
    }
    if (c->gpu_resources) {
        fprintf(io->err, PROG ": --gpu-resources does not apply to " PROG "\n");
        return 2;
    }
    if (flags_answer(c, PROG, usage))
        return 0;
    log_set_verbosity(c->verbosity);
    return -1;
}

static int usage_error(const struct certs_io *io, const char *msg, const char *arg)
{
    fprintf(io->err, PROG ": %s%s%s\n", msg, arg ? " " : "", arg ? arg : "");
    fprintf(io->err, "Run '" PROG " --help' for usage.\n");
    return 2;
}

static int parse_days(const char *s, int *out)
{
    long v;
    if (strconv_long(s, 1, CERTGEN_MAX_DAYS, &v) != K_OK)
        return K_EINVAL;
    *out = (int)v;
    return K_OK;
}

/* A repeated or comma-separated flag: pieces point into optarg (argv), which lives until exit. */
struct name_list {
    const char *v[MAX_NAMES];
    size_t n;
};

static int add_names(struct name_list *l, char *arg)
{
    char *save = NULL;
    for (char *p = strtok_r(arg, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (l->n == MAX_NAMES)
            return K_ETOOBIG;
        l->v[l->n++] = p;
    }
    return K_OK;
}

static void format_time(time_t t, char *out, size_t outlen)
{
    clock_format_rfc3339((int64_t)t * 1000, false, out, outlen);
}

/* mkdir -p with mode 0755 for new directories. */
static int make_dirs(const char *dir)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            return -1;
        *s = '/';
    }
    if (mkdir(p, 0755) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

static void print_kube_error(const struct certs_io *io, const char *what, int rc,
                             const struct kube_error *err)
{
    char msg[sizeof(err->message) * 4]; /* the API's text, escaped for the terminal */
    text_escape(msg, sizeof(msg), err->message, strlen(err->message), TEXT_ESCAPE_TERMINAL);
    fprintf(io->err, PROG ": %s: %s%s%s\n", what, k_strerror(rc), msg[0] ? ": " : "", msg);
}

struct generate_flags {
    struct certgen_options o;
    struct name_list dns, ips;
    const char *out_dir, *ca_cert_file, *ca_key_file, *secret, *webhook_config, *kubeconfig;
    int force;
};

static int write_outputs(const struct certs_io *io, const struct generate_flags *f,
                         const struct certgen_bundle *b)
{
    static const struct {
        const char *name;
        size_t offset;
        mode_t mode;
    } files[] = {
        /* CA first; then the key before the certificate, so a webhook that reloads when tls.crt
         * changes finds the matching key already in place. */
        {"ca.crt", offsetof(struct certgen_bundle, ca_cert_pem), 0644},
        {"ca.key", offsetof(struct certgen_bundle, ca_key_pem), 0600},
        {"tls.key", offsetof(struct certgen_bundle, tls_key_pem), 0600},
        {"tls.crt", offsetof(struct certgen_bundle, tls_cert_pem), 0644},
        {"client.key", offsetof(struct certgen_bundle, client_key_pem), 0600},
        {"client.crt", offsetof(struct certgen_bundle, client_cert_pem), 0644},
    };
    char err[512];
    if (make_dirs(f->out_dir) != 0) {
        fprintf(io->err, PROG ": cannot create %s: %s\n", f->out_dir, strerror(errno));
        return 1;
    }
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        const char *data = *(char *const *)((const char *)b + files[i].offset);
        if (!data)
            continue; /* no client certificate asked for */
        if (certgen_write_file_atomic(f->out_dir, files[i].name, data, strlen(data), files[i].mode,
                                      err, sizeof(err)) != K_OK) {
            fprintf(io->err, PROG ": %s\n", err);
            return 1;
        }
    }
    fprintf(io->out, "wrote %s/{ca.crt,ca.key,tls.crt,tls.key%s}\n", f->out_dir,
            b->client_cert_pem ? ",client.crt,client.key" : "");
    return 0;
}

/*
 * Load the kubeconfig and reach the API server (GET /version, readable by every client) with it,
 * so a broken kubeconfig, a wrong CA or an unusable client key fails before any file is written.
 * io->client, when set, is used instead of one made from the kubeconfig. Returns 0 with *client
 * set (cfg must outlive it; *owned tells whether the caller frees it), else 1 after printing why.
 */
static int connect_api(const struct certs_io *io, const struct generate_flags *f,
                       struct kube_config *cfg, struct kube_client **client, bool *owned)
{
    char err[512];
    struct kube_error kerr = {0};
    json_object *version = NULL;
    *owned = !io->client;
    if (io->client) {
        *client = io->client;
    } else {
        if (kube_config_load(f->kubeconfig, cfg, err, sizeof(err)) != K_OK) {
            fprintf(io->err, PROG ": %s\n", err);
            return 1;
        }
        *client = kube_client_new(cfg, PROG "/" GPUTRI_VERSION);
        if (!*client) {
            fprintf(io->err, PROG ": out of memory\n");
            return 1;
        }
    }
    int rc = kube_get(*client, "/version", &version, &kerr);
    json_object_put(version);
    if (rc) {
        snprintf(err, sizeof(err), "API server %s", cfg->server ? cfg->server : "");
        print_kube_error(io, err, rc, &kerr);
        return 1;
    }
    return 0;
}

static int publish(const struct certs_io *io, const struct generate_flags *f,
                   struct kube_client *client, const struct certgen_bundle *b)
{
    struct kube_error kerr = {0};
    char err[512];
    int rc;

    if (f->secret) {
        bool created = false;
        rc = publish_tls_secret(client, f->o.namespace_name, f->secret, b, &created, &kerr);
        if (rc) {
            snprintf(err, sizeof(err), "secret %s/%s", f->o.namespace_name, f->secret);
            print_kube_error(io, err, rc, &kerr);
            return 1;
        }
        fprintf(io->out, "secret/%s %s in namespace %s\n", f->secret,
                created ? "created" : "updated", f->o.namespace_name);
    }
    if (f->webhook_config) {
        int n = 0;
        rc = publish_ca_bundle(client, f->webhook_config, b->ca_cert_pem, &n, &kerr);
        if (rc) {
            snprintf(err, sizeof(err), "validatingwebhookconfiguration %s", f->webhook_config);
            print_kube_error(io, err, rc, &kerr);
            return 1;
        }
        fprintf(io->out, "validatingwebhookconfiguration/%s caBundle set on %d webhook%s\n",
                f->webhook_config, n, n == 1 ? "" : "s");
    }
    return 0;
}

static int run_generate(const struct certs_io *io, struct generate_flags *f)
{
    struct certgen_bundle b = {0};
    char *ca_cert = NULL, *ca_key = NULL;
    char err[512], when[32], path[PATH_MAX];
    int status = 1;
    struct kube_config cfg = {0};
    struct kube_client *client = NULL;
    bool owned = false;

    f->o.dns = f->dns.v;
    f->o.n_dns = f->dns.n;
    f->o.ips = f->ips.v;
    f->o.n_ips = f->ips.n;
    if (certgen_options_check(&f->o, err, sizeof(err)) != K_OK)
        return usage_error(io, err, NULL);

    if (f->out_dir && !f->ca_cert_file && !f->force) {
        snprintf(path, sizeof(path), "%s/ca.key", f->out_dir);
        if (access(path, F_OK) == 0) {
            fprintf(io->err,
                    PROG ": %s exists; renew with --ca-cert %s/ca.crt --ca-key %s/ca.key, or "
                         "pass --force to replace the CA\n",
                    path, f->out_dir, f->out_dir);
            return 1;
        }
    }
    if ((f->secret || f->webhook_config) && connect_api(io, f, &cfg, &client, &owned) != 0)
        goto out;
    if (f->ca_cert_file) {
        if (certgen_read_file(f->ca_cert_file, &ca_cert, err, sizeof(err)) != K_OK ||
            certgen_read_file(f->ca_key_file, &ca_key, err, sizeof(err)) != K_OK) {
            fprintf(io->err, PROG ": %s\n", err);
            goto out;
        }
        f->o.ca_cert_pem = ca_cert;
        f->o.ca_key_pem = ca_key;
    }
    f->o.now = io->now ? io->now : time(NULL);
    if (certgen_generate(&f->o, &b, err, sizeof(err)) != K_OK) {
        fprintf(io->err, PROG ": %s\n", err);
        goto out;
    }
    /* Check the result the way the API server will before anything is replaced. */
    char host[300];
    if (f->o.service)
        snprintf(host, sizeof(host), "%s.%s.svc", f->o.service, f->o.namespace_name);
    else
        snprintf(host, sizeof(host), "%s", f->dns.n ? f->dns.v[0] : f->ips.v[0]);
    if (certgen_verify(b.ca_cert_pem, b.tls_cert_pem, host, f->o.now, err, sizeof(err)) != K_OK) {
        fprintf(io->err, PROG ": generated certificate for %s: %s\n", host, err);
        goto out;
    }
    if (f->out_dir && write_outputs(io, f, &b) != 0)
        goto out;
    format_time(b.tls_not_after, when, sizeof(when));
    fprintf(io->out, "serving certificate for %s (%s CA), valid until %s\n", host,
            b.ca_reused ? "existing" : "new", when);
    if (b.client_cert_pem)
        fprintf(io->out, "client certificate for CN %s, valid until %s\n", f->o.client_cn, when);
    if (b.not_after_clamped)
        fprintf(io->err, PROG ": warning: serving certificate shortened to end with the CA at %s\n",
                when);
    if (client && publish(io, f, client, &b) != 0) {
        if (f->out_dir && !b.ca_reused)
            fprintf(io->err,
                    PROG ": the new CA is in %s; publish it with --ca-cert %s/ca.crt --ca-key "
                         "%s/ca.key\n",
                    f->out_dir, f->out_dir, f->out_dir);
        goto out;
    }
    status = 0;
out:
    if (owned)
        kube_client_free(client);
    kube_config_cleanup(&cfg);
    certgen_bundle_cleanup(&b);
    free(ca_cert);
    if (ca_key) {
        memset(ca_key, 0, strlen(ca_key));
        free(ca_key);
    }
    return status;
}

static int cmd_generate(const struct certs_io *io, int argc, char **argv,
                        struct flags_common *common)
{
    enum {
        OPT_OUT = FLAG_FIRST_OWN,
        OPT_SERVICE,
        OPT_NAMESPACE,
        OPT_DNS,
        OPT_IP,
        OPT_KEY_TYPE,
        OPT_CA_DAYS,
        OPT_CERT_DAYS,
        OPT_CA_CERT,
        OPT_CA_KEY,
        OPT_FORCE,
        OPT_SECRET,
        OPT_WEBHOOK,
        OPT_CLIENT_CN,
    };
    static const struct option longopts[] = {
        {"out-dir", required_argument, NULL, OPT_OUT},
        {"service", required_argument, NULL, OPT_SERVICE},
        {"namespace", required_argument, NULL, OPT_NAMESPACE},
        {"dns", required_argument, NULL, OPT_DNS},
        {"ip", required_argument, NULL, OPT_IP},
        {"key-type", required_argument, NULL, OPT_KEY_TYPE},
        {"ca-days", required_argument, NULL, OPT_CA_DAYS},
        {"cert-days", required_argument, NULL, OPT_CERT_DAYS},
        {"ca-cert", required_argument, NULL, OPT_CA_CERT},
        {"ca-key", required_argument, NULL, OPT_CA_KEY},
        {"force", no_argument, NULL, OPT_FORCE},
        {"secret", required_argument, NULL, OPT_SECRET},
        {"webhook-config", required_argument, NULL, OPT_WEBHOOK},
        {"client-cn", required_argument, NULL, OPT_CLIENT_CN},
        FLAGS_COMMON_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    struct generate_flags f = {0};
    int opt;

    certgen_options_init(&f.o);
    f.o.service = "gputri-webhook";
    f.o.namespace_name = "gputri";
    opterr = 0;
    optind = 0; /* a fresh scan of the command's arguments */
    while ((opt = getopt_long(argc, argv, ":" FLAGS_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
        switch (opt) {
        case OPT_OUT:
            f.out_dir = optarg;
            break;
        case OPT_SERVICE:
            f.o.service = optarg;
            break;
        case OPT_NAMESPACE:
            f.o.namespace_name = optarg;
            break;
        case OPT_DNS:
            if (add_names(&f.dns, optarg))
                return usage_error(io, "too many --dns names", NULL);
            break;
        case OPT_IP:
            if (add_names(&f.ips, optarg))
                return usage_error(io, "too many --ip addresses", NULL);
            break;
        case OPT_KEY_TYPE:
            if (certgen_key_type_parse(optarg, &f.o.key_type))
                return usage_error(io,
                                   "invalid --key-type (want ecdsa-p256, rsa-2048, rsa-3072 or "
                                   "ed25519):",
                                   optarg);
            break;
        case OPT_CA_DAYS:
            if (parse_days(optarg, &f.o.ca_days))
                return usage_error(io, "invalid --ca-days (want 1..36500):", optarg);
            break;
        case OPT_CERT_DAYS:
            if (parse_days(optarg, &f.o.cert_days))
                return usage_error(io, "invalid --cert-days (want 1..36500):", optarg);
            break;
        case OPT_CA_CERT:
            f.ca_cert_file = optarg;
            break;
        case OPT_CA_KEY:
            f.ca_key_file = optarg;
            break;
        case OPT_CLIENT_CN:
            f.o.client_cn = optarg;
            break;
        case OPT_FORCE:
            f.force = 1;
            break;
        case OPT_SECRET:
            f.secret = optarg;
            break;
        case OPT_WEBHOOK:
            f.webhook_config = optarg;
            break;
        case ':':
            return usage_error(io, "missing value for", argv[optind - 1]);
        case '?':
            return usage_error(io, "unknown flag", argv[optind - 1]);
        default: {
            int st = common_flag(io, common, opt, optarg);
            if (st >= 0)
                return st;
            break;
        }
        }
    }
    f.kubeconfig = common->kubeconfig;
    if (optind < argc)
        return usage_error(io, "unexpected argument", argv[optind]);
    if (!f.out_dir && !f.secret)
        return usage_error(io, "generate needs --out-dir and/or --secret", NULL);
    if (!f.ca_cert_file != !f.ca_key_file)
        return usage_error(io, "--ca-cert and --ca-key must be given together", NULL);
    if (f.o.service && !f.o.service[0])
        f.o.service = NULL; /* --service "" drops the service SANs */
    if (!f.o.namespace_name[0])
        return usage_error(io, "--namespace must not be empty", NULL);
    if (!f.o.service && !f.secret)
        f.o.namespace_name = NULL;
    if (!f.o.service && f.dns.n == 0 && f.ips.n == 0)
        return usage_error(io, "no names: give --service, --dns or --ip", NULL);
    return run_generate(io, &f);
}

/* The common flags before the first non-flag argument: main's and inspect's own. Returns -1 to
 * go on (optind at the first operand), else the exit status. */
static int leading_common_flags(const struct certs_io *io, int argc, char **argv,
                                struct flags_common *common)
{
    static const struct option longopts[] = {
        FLAGS_COMMON_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    int opt;
    opterr = 0;
    optind = 0;
    while ((opt = getopt_long(argc, argv, "+:" FLAGS_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
        if (opt == ':')
            return usage_error(io, "missing value for", argv[optind - 1]);
        if (opt == '?')
            return usage_error(io, "unknown flag", argv[optind - 1]);
        int st = common_flag(io, common, opt, optarg);
        if (st >= 0)
            return st;
    }
    return -1;
}

static int cmd_inspect(const struct certs_io *io, int argc, char **argv,
                       struct flags_common *common)
{
    int status = leading_common_flags(io, argc, argv, common);
    if (status >= 0)
        return status;
    status = 0;
    int first = optind;
    if (first >= argc)
        return usage_error(io, "inspect needs at least one FILE", NULL);
    time_t now = io->now ? io->now : time(NULL);
    for (int a = first; a < argc; a++) {
        char err[512], nb[32], na[32];
        char *pem = NULL;
        struct certgen_cert_info *infos = NULL;
        size_t n = 0;
        if (certgen_read_file(argv[a], &pem, err, sizeof(err)) != K_OK ||
            certgen_inspect(pem, &infos, &n, err, sizeof(err)) != K_OK) {
            if (!strstr(err, argv[a]))
                fprintf(io->err, PROG ": %s: %s\n", argv[a], err);
            else
                fprintf(io->err, PROG ": %s\n", err);
            free(pem);
            status = 1;
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            const struct certgen_cert_info *c = &infos[i];
            format_time(c->not_before, nb, sizeof(nb));
            format_time(c->not_after, na, sizeof(na));
            long long left = ((long long)c->not_after - (long long)now) / 86400;
            if (a > first || i > 0)
                fprintf(io->out, "\n");
            fprintf(io->out, "%s", argv[a]);
            if (n > 1)
                fprintf(io->out, " [%zu]", i);
            fprintf(io->out, ":\n");
            fprintf(io->out, "  subject:     %s\n", c->subject);
            fprintf(io->out, "  issuer:      %s\n", c->issuer);
            fprintf(io->out, "  sans:        %s\n", c->sans[0] ? c->sans : "(none)");
            fprintf(io->out, "  key:         %s\n", c->key);
            fprintf(io->out, "  ca:          %s\n", c->is_ca ? "true" : "false");
            fprintf(io->out, "  serial:      %s\n", c->serial);
            fprintf(io->out, "  not-before:  %s\n", nb);
            if (c->not_after <= now)
                fprintf(io->out, "  not-after:   %s (expired)\n", na);
            else
                fprintf(io->out, "  not-after:   %s (%lld days left)\n", na, left);
            fprintf(io->out, "  sha256:      %s\n", c->fingerprint);
        }
        certgen_inspect_free(infos, n);
        free(pem);
    }
    if (fflush(io->out) != 0)
        status = 1;
    return status;
}

int certs_main(int argc, char **argv, const struct certs_io *io)
{
    struct flags_common common = {0};
    int status = leading_common_flags(io, argc, argv, &common);
    if (status >= 0)
        return status;
    if (optind >= argc)
        return usage_error(io, "missing command (generate or inspect)", NULL);
    const char *cmd = argv[optind];
    int cargc = argc - optind;
    char **cargv = argv + optind;
    if (strcmp(cmd, "help") == 0) {
        usage(io->out);
        return 0;
    }
    if (strcmp(cmd, "version") == 0) {
        fprintf(io->out, PROG " " GPUTRI_VERSION "\n");
        return 0;
    }
    if (strcmp(cmd, "generate") == 0)
        status = cmd_generate(io, cargc, cargv, &common);
    else if (strcmp(cmd, "inspect") == 0)
        status = cmd_inspect(io, cargc, cargv, &common);
    else
        return usage_error(io, "unknown command", cmd);
    if (status == 0 && fflush(io->out) != 0)
        status = 1;
    return status;
}
