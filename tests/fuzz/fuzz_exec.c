/*
 * fuzz_exec.c - libFuzzer target for the exec credential plugin's response parser
 * (kube_exec_parse_response, core/kube/exec.c), i.e. what a plugin prints on stdout.
 *
 * The first byte picks the configured apiVersion (even: v1, odd: v1beta1); the rest is the
 * plugin's stdout. Besides the sanitizers, the target checks what exec.h promises: on K_OK there
 * is a token or a certificate with its key, lengths match the strings, a token has no control
 * character; on an error nothing is left allocated and the message is one line.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/config.h"
#include "kube/exec.h"
#include "util/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_exec: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *api = data[0] % 2 ? KUBE_EXEC_API_V1BETA1 : KUBE_EXEC_API_V1;
    struct kube_exec_cred c;
    char err[256];
    err[0] = '\0';
    int rc = kube_exec_parse_response((const char *)data + 1, size - 1, api, &c, err, sizeof(err));
    if (rc == K_OK) {
        if (!c.token && !c.cert_pem)
            fail("K_OK without a token or certificate");
        if (!c.cert_pem != !c.key_pem)
            fail("a certificate without its key, or a key without its certificate");
        if (c.cert_pem &&
            (strlen(c.cert_pem) != c.cert_pem_len || strlen(c.key_pem) != c.key_pem_len))
            fail("certificate or key length does not match");
        if (c.token && !kube_header_value_ok(c.token))
            fail("a token with a control character");
    } else {
        if (c.token || c.cert_pem || c.key_pem)
            fail("an error left a credential behind");
        if (rc != K_ENOMEM && (!err[0] || strchr(err, '\n')))
            fail("an error without a one-line message");
    }
    kube_exec_cred_cleanup(&c);
    return 0;
}
