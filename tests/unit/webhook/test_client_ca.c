/* Tests for webhook/client_ca.c: verification of client chains against --client-ca-file, and its
 * reload when the file changes (on a fake clock). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "client_ca.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/result.h"

#define TLS_DIR FIXTURES_DIR "/admission/tls"

static bool verify_file(struct client_ca *c, const char *der_name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", TLS_DIR, der_name);
    struct buf b;
    buf_init(&b, 1 << 16);
    assert_int_equal(file_read(path, &b, 0), K_OK);
    struct http_peer_cert chain[1] = {{(const unsigned char *)b.data, b.len}};
    bool ok = client_ca_verify(c, chain, 1);
    buf_cleanup(&b);
    return ok;
}

static void test_verify(void **state)
{
    (void)state;
    struct client_ca *c = NULL;
    char err[512];
    assert_int_equal(client_ca_new(TLS_DIR "/client-ca.crt", &c, err, sizeof(err)), K_OK);
    assert_non_null(strstr(client_ca_pem(c), "BEGIN CERTIFICATE"));
    assert_true(verify_file(c, "client.der"));
    assert_false(verify_file(c, "client-other.der")); /* not issued by the CA */
    assert_false(verify_file(c, "server-eku.der"));   /* issued by it, but not for clients */
    struct http_peer_cert junk[1] = {{(const unsigned char *)"junk", 4}};
    assert_false(client_ca_verify(c, junk, 1));
    assert_false(client_ca_verify(c, junk, 0));
    client_ca_free(c);
}

static void test_load_errors(void **state)
{
    (void)state;
    struct client_ca *c = NULL;
    char err[512];
    assert_int_equal(client_ca_new(TLS_DIR "/nope.crt", &c, err, sizeof(err)), K_ENOTFOUND);
    assert_null(c);
    assert_int_equal(client_ca_new(TLS_DIR "/garbage.pem", &c, err, sizeof(err)), K_EINVAL);
    assert_non_null(strstr(err, "no PEM CA certificate"));
    assert_null(c);
}

static void copy(const char *src_name, const char *dst)
{
    char cmd[1024], tmp[512];
    snprintf(tmp, sizeof(tmp), "%s.tmp", dst);
    snprintf(cmd, sizeof(cmd), "cp '%s/%s' '%s'", TLS_DIR, src_name, tmp);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(rename(tmp, dst), 0);
}

static void test_reload(void **state)
{
    (void)state;
    char dir[] = "/tmp/gputri-client-ca.XXXXXX", path[128];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/ca.crt", dir);
    copy("client-other.crt", path); /* trusts the self-signed one only */
    struct clock_fake f;
    clock_fake_init(&f, 0);
    struct clock clk = clock_fake_clock(&f);
    struct client_ca *c = NULL;
    char err[512];
    assert_int_equal(client_ca_new(path, &c, err, sizeof(err)), K_OK);
    client_ca_set_clock(c, &clk);
    assert_true(verify_file(c, "client-other.der"));
    assert_false(verify_file(c, "client.der"));
    copy("client-ca.crt", path);
    assert_false(verify_file(c, "client.der")); /* checked at most once a second */
    clock_fake_advance_ms(&f, 1000);
    assert_true(verify_file(c, "client.der"));
    assert_int_equal(client_ca_generation(c), 2);
    copy("client-other.crt", path);
    assert_true(verify_file(c, "client.der")); /* not looked at yet */
    clock_fake_advance_ms(&f, 1000);
    assert_false(verify_file(c, "client.der"));
    assert_int_equal(client_ca_generation(c), 3);
    /* a broken file keeps the old CAs */
    copy("garbage.pem", path);
    clock_fake_advance_ms(&f, 1000);
    assert_true(verify_file(c, "client-other.der"));
    assert_int_equal(client_ca_generation(c), 3);
    assert_int_equal(client_ca_check(c, true), 0);
    client_ca_free(c);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verify),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_reload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
