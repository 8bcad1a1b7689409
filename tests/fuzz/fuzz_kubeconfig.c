/*
 * fuzz_kubeconfig.c - libFuzzer target for the kubeconfig loader (core/kube/config.c).
 *
 * The loader reads a file, so the input is written to "config" in a private temporary directory
 * that also links "certs" to tests/fixtures/kubeconfig/certs (relative certificate and token
 * paths of the fixtures then resolve), and loaded as --kubeconfig. Besides the sanitizers, the
 * target checks what config.h promises: on success a server URL with a scheme prefix
 * ("[a-zA-Z][a-zA-Z0-9+.-]*://": a server without one gets https, so a bearer token never goes
 * out in clear) and no trailing slash, inline data winning over the file field, a client
 * certificate only with its key; on failure a one-line reason; cleanup twice is harmless.
 *
 * Paths in the input are opened as they are, so run the target with stdin from /dev/null (a
 * tokenFile of /dev/stdin would otherwise wait for the terminal).
 */
#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/config.h"
#include "util/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/gputri-fuzz-kubeconfig-XXXXXX";
static char path[sizeof(dir) + 16];
static char certs[sizeof(dir) + 16];

static void remove_dir(void)
{
    unlink(path);
    unlink(certs);
    rmdir(dir);
}

static void setup(void)
{
    if (!mkdtemp(dir))
        abort();
    snprintf(path, sizeof(path), "%s/config", dir);
    snprintf(certs, sizeof(certs), "%s/certs", dir);
    if (symlink(FIXTURES_DIR "/kubeconfig/certs", certs) != 0)
        abort();
    atexit(remove_dir);
}

static void fail(const char *what, const struct kube_config *c, const char *err)
{
    fprintf(stderr, "kubeconfig: %s (server \"%s\", error \"%s\")\n", what,
            c->server ? c->server : "(null)", err);
    abort();
}

/* "[a-zA-Z][a-zA-Z0-9+.-]*://" at the start of s (RFC 3986 scheme). */
static bool has_scheme(const char *s)
{
    if (!isalpha((unsigned char)*s))
        return false;
    while (isalnum((unsigned char)*s) || *s == '+' || *s == '.' || *s == '-')
        s++;
    return strncmp(s, "://", 3) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready) {
        setup();
        ready = true;
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    if (fclose(f) != 0)
        abort();

    struct kube_config c = {0};
    char err[512] = "";
    int rc = kube_config_load(path, &c, err, sizeof(err));
    if (strnlen(err, sizeof(err)) == sizeof(err))
        fail("the reason is not terminated", &c, "");
    if (rc == K_OK) {
        if (!c.server || !has_scheme(c.server))
            fail("a server without a scheme prefix", &c, err);
        size_t n = strlen(c.server);
        if (n && c.server[n - 1] == '/')
            fail("a server with a trailing slash", &c, err);
        if ((c.ca_pem && c.ca_file) || (c.cert_pem && c.cert_file) || (c.key_pem && c.key_file))
            fail("both inline data and a file", &c, err);
        if (!(c.cert_pem || c.cert_file) != !(c.key_pem || c.key_file))
            fail("a client certificate without its key, or a key without one", &c, err);
        if (!c.source)
            fail("no source", &c, err);
    } else if (rc == K_EINVAL || rc == K_ENOTFOUND) {
        if (!err[0] || strchr(err, '\n'))
            fail("an error without a one-line reason", &c, err);
    } else if (rc != K_ENOMEM) {
        fprintf(stderr, "kube_config_load returned %d: %s\n", rc, err);
        abort();
    }
    kube_config_cleanup(&c);
    kube_config_cleanup(&c);
    return 0;
}
