/*
 * Tests for webhook/tls_source.c: loading PEM pairs with GnuTLS (OpenSSL 3 PKCS#8 EC and RSA
 * keys, SEC1 EC keys), refusing mismatched or broken pairs, and reloading on file change while
 * keeping the old pair when the new one fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <gnutls/x509.h>

#include "http/tls_source.h"
#include "util/result.h"

#define TLS_DIR FIXTURES_DIR "/admission/tls"

struct fx {
    char dir[64];
    char cert[128], key[128];
};

/* Atomically replaces dst with a copy of src (write to a temporary name, then rename). */
static void install(const char *src_name, const char *dst)
{
    char src[512], tmp[256];
    snprintf(src, sizeof(src), "%s/%s", TLS_DIR, src_name);
    snprintf(tmp, sizeof(tmp), "%s.tmp", dst);
    FILE *in = fopen(src, "rb"), *out = fopen(tmp, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
    assert_int_equal(rename(tmp, dst), 0);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/gputri-tls-test.XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->cert, sizeof(f->cert), "%s/tls.crt", f->dir);
    snprintf(f->key, sizeof(f->key), "%s/tls.key", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    unlink(f->cert);
    unlink(f->key);
    rmdir(f->dir);
    free(f);
    return 0;
}

static void test_load_pairs(void **state)
{
    (void)state;
    char err[512];
    struct tls_source *s;
    assert_int_equal(tls_source_new(TLS_DIR "/a.crt", TLS_DIR "/a.key", &s, err, sizeof(err)),
                     K_OK);
    assert_int_equal(tls_source_generation(s), 1);
    tls_source_free(s);
    assert_int_equal(tls_source_new(TLS_DIR "/b.crt", TLS_DIR "/b.key", &s, err, sizeof(err)),
                     K_OK);
    tls_source_free(s);
    assert_int_equal(tls_source_new(TLS_DIR "/a.crt", TLS_DIR "/a-sec1.key", &s, err, sizeof(err)),
                     K_OK);
    tls_source_free(s);
}

static void test_load_errors(void **state)
{
    (void)state;
    char err[512];
    struct tls_source *s = (void *)1;
    assert_int_equal(tls_source_new(TLS_DIR "/a.crt", TLS_DIR "/b.key", &s, err, sizeof(err)),
                     K_EINVAL);
    assert_null(s);
    assert_non_null(strstr(err, "does not belong"));
    assert_int_equal(tls_source_new(TLS_DIR "/garbage.pem", TLS_DIR "/a.key", &s, err, sizeof(err)),
                     K_EINVAL);
    assert_int_equal(tls_source_new(TLS_DIR "/a.crt", TLS_DIR "/garbage.pem", &s, err, sizeof(err)),
                     K_EINVAL);
    assert_int_equal(tls_source_new(TLS_DIR "/nope.crt", TLS_DIR "/a.key", &s, err, sizeof(err)),
                     K_ENOTFOUND);
    assert_non_null(strstr(err, "nope.crt"));
}

static void test_reload(void **state)
{
    struct fx *f = *state;
    char err[512];
    install("a.crt", f->cert);
    install("a.key", f->key);
    struct tls_source *s;
    assert_int_equal(tls_source_new(f->cert, f->key, &s, err, sizeof(err)), K_OK);
    struct clock_fake clk;
    clock_fake_init(&clk, 0);
    struct clock fake = clock_fake_clock(&clk);
    tls_source_set_clock(s, &fake);
    assert_int_equal(tls_source_check(s, false), 0); /* unchanged */

    /* a new pair, key first: the half-way state (b.key + a.crt) is refused, then b is taken */
    install("b.key", f->key);
    assert_int_equal(tls_source_check(s, true), 0);
    assert_int_equal(tls_source_generation(s), 1);
    install("b.crt", f->cert);
    assert_int_equal(tls_source_check(s, true), 1);
    assert_int_equal(tls_source_generation(s), 2);

    /* a broken certificate keeps b */
    install("garbage.pem", f->cert);
    assert_int_equal(tls_source_check(s, true), 0);
    assert_int_equal(tls_source_generation(s), 2);
    /* files gone: keep serving */
    unlink(f->cert);
    assert_int_equal(tls_source_check(s, true), 0);
    install("b.crt", f->cert); /* the same content under a new inode: reloads */
    assert_int_equal(tls_source_check(s, true), 1);
    assert_int_equal(tls_source_generation(s), 3);

    /* without force: at most one look per second */
    install("a.key", f->key);
    install("a.crt", f->cert);
    tls_source_check(s, true); /* takes a, resets the clock */
    assert_int_equal(tls_source_generation(s), 4);
    install("b.key", f->key);
    install("b.crt", f->cert);
    assert_int_equal(tls_source_check(s, false), 0);
    clock_fake_advance_ms(&clk, 999);
    assert_int_equal(tls_source_check(s, false), 0);
    clock_fake_advance_ms(&clk, 1);
    assert_int_equal(tls_source_check(s, false), 1);
    assert_int_equal(tls_source_generation(s), 5);
    tls_source_free(s);
}

static void test_retrieve(void **state)
{
    (void)state;
    char err[512];
    gnutls_pcert_st *pcert = NULL;
    unsigned n = 0;
    gnutls_privkey_t key = NULL;
    tls_source_install(NULL);
    assert_int_equal(tls_source_retrieve(NULL, NULL, 0, NULL, 0, &pcert, &n, &key), -1);
    struct tls_source *s;
    assert_int_equal(tls_source_new(TLS_DIR "/a.crt", TLS_DIR "/a.key", &s, err, sizeof(err)),
                     K_OK);
    tls_source_install(s);
    assert_int_equal(tls_source_retrieve(NULL, NULL, 0, NULL, 0, &pcert, &n, &key), 0);
    assert_int_equal(n, 1);
    assert_non_null(pcert);
    assert_non_null(key);
    tls_source_free(s); /* also uninstalls */
    assert_int_equal(tls_source_retrieve(NULL, NULL, 0, NULL, 0, &pcert, &n, &key), -1);
}

/* A self-signed pair: a usable key matching a certificate with the names asked for. */
static void test_self_signed(void **state)
{
    (void)state;
    char err[512];
    struct tls_source *s;
    static const char *const dns[] = {"localhost", "gputri-controller"};
    assert_int_equal(tls_source_new_self_signed("gputri-controller", dns, 2, &s, err, sizeof(err)),
                     K_OK);
    tls_source_install(s);
    gnutls_pcert_st *pcert = NULL;
    unsigned n = 0;
    gnutls_privkey_t key = NULL;
    assert_int_equal(tls_source_retrieve(NULL, NULL, 0, NULL, 0, &pcert, &n, &key), 0);
    assert_int_equal(n, 1);
    assert_non_null(key);
    gnutls_x509_crt_t crt;
    assert_true(gnutls_x509_crt_init(&crt) >= 0);
    assert_true(gnutls_x509_crt_import(crt, &pcert[0].cert, GNUTLS_X509_FMT_DER) >= 0);
    assert_true(gnutls_x509_crt_check_hostname(crt, "gputri-controller"));
    assert_true(gnutls_x509_crt_check_hostname(crt, "localhost"));
    assert_false(gnutls_x509_crt_check_hostname(crt, "example.com"));
    gnutls_x509_crt_deinit(crt);
    assert_int_equal(tls_source_check(s, true), 0); /* nothing to re-read */
    tls_source_install(NULL);
    tls_source_free(s);
}

static char *slurp(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", TLS_DIR, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = calloc(1, 65536);
    assert_non_null(buf);
    size_t n = fread(buf, 1, 65535, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* A pair given as PEM text replaces the served one (the webhook's in-cluster certificates). */
static void test_set_pem(void **state)
{
    (void)state;
    char err[512];
    struct tls_source *s, *files;
    static const char *const dns[] = {"gputri-webhook.gputri.svc"};
    char *a_crt = slurp("a.crt"), *a_key = slurp("a.key"), *b_key = slurp("b.key");
    assert_int_equal(tls_source_new_self_signed(dns[0], dns, 1, &s, err, sizeof(err)), K_OK);
    tls_source_install(s);
    assert_int_equal(tls_source_set_pem(s, a_crt, a_key, err, sizeof(err)), K_OK);
    assert_int_equal(tls_source_generation(s), 2);
    gnutls_pcert_st *pcert = NULL;
    unsigned n = 0;
    gnutls_privkey_t key = NULL;
    assert_int_equal(tls_source_retrieve(NULL, NULL, 0, NULL, 0, &pcert, &n, &key), 0);
    gnutls_x509_crt_t crt;
    gnutls_datum_t pem = {(unsigned char *)a_crt, (unsigned)strlen(a_crt)}, der = {0};
    assert_true(gnutls_x509_crt_init(&crt) >= 0);
    assert_true(gnutls_x509_crt_import(crt, &pem, GNUTLS_X509_FMT_PEM) >= 0);
    assert_true(gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_DER, &der) >= 0);
    assert_int_equal(pcert[0].cert.size, der.size);
    assert_memory_equal(pcert[0].cert.data, der.data, der.size);
    gnutls_free(der.data);
    gnutls_x509_crt_deinit(crt);
    /* a key of another certificate, or no PEM: refused, the pair stays */
    assert_int_equal(tls_source_set_pem(s, a_crt, b_key, err, sizeof(err)), K_EINVAL);
    assert_int_equal(tls_source_set_pem(s, "nothing", a_key, err, sizeof(err)), K_EINVAL);
    assert_int_equal(tls_source_generation(s), 2);
    tls_source_install(NULL);
    tls_source_free(s);
    /* a source reading files takes no PEM text */
    assert_int_equal(tls_source_new(TLS_DIR "/a.crt", TLS_DIR "/a.key", &files, err, sizeof(err)),
                     K_OK);
    assert_int_equal(tls_source_set_pem(files, a_crt, a_key, err, sizeof(err)), K_EINVAL);
    tls_source_free(files);
    free(a_crt);
    free(a_key);
    free(b_key);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_pairs),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test_setup_teardown(test_reload, setup, teardown),
        cmocka_unit_test(test_retrieve),
        cmocka_unit_test(test_self_signed),
        cmocka_unit_test(test_set_pem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
