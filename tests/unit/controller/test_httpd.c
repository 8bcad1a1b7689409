/* Tests for controller/httpd.c: bind addresses, serving on loopback, and the filter. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "httpd.h"
#include "text.h"
#include "util/result.h"

static void test_bind_addresses(void **state)
{
    (void)state;
    char host[64];
    int port;
    assert_int_equal(httpd_parse_address("0", host, sizeof(host), &port), K_OK);
    assert_int_equal(port, -1);
    assert_int_equal(httpd_parse_address("", host, sizeof(host), &port), K_OK);
    assert_int_equal(port, -1);
    assert_int_equal(httpd_parse_address(":8080", host, sizeof(host), &port), K_OK);
    assert_string_equal(host, "");
    assert_int_equal(port, 8080);
    assert_int_equal(httpd_parse_address("127.0.0.1:8081", host, sizeof(host), &port), K_OK);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 8081);
    assert_int_equal(httpd_parse_address("[::1]:0", host, sizeof(host), &port), K_OK);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 0);
    assert_int_equal(httpd_parse_address("8080", host, sizeof(host), &port), K_EINVAL);
    assert_int_equal(httpd_parse_address("::1:8080", host, sizeof(host), &port), K_EINVAL);
    assert_int_equal(httpd_parse_address("host:", host, sizeof(host), &port), K_EINVAL);
    assert_int_equal(httpd_parse_address("host:65536", host, sizeof(host), &port), K_EINVAL);
    assert_int_equal(httpd_parse_address("host:80x", host, sizeof(host), &port), K_EINVAL);
}

/* httpd end to end on loopback: a handler's status, body and content type. */
static unsigned handler(void *ctx, const char *path, struct buf *body, const char **type)
{
    (void)ctx;
    if (strcmp(path, "/readyz") == 0) {
        buf_append_str(body, "not yet\n");
        return 503;
    }
    *type = "text/plain; version=0.0.4";
    buf_append_str(body, "x 1\n");
    return 200;
}

static void test_httpd_serves(void **state)
{
    (void)state;
    struct httpd *h = NULL;
    char err[256];
    assert_int_equal(httpd_start("127.0.0.1:0", handler, NULL, &h, err, sizeof(err)), K_OK);
    int port = httpd_port(h);
    assert_true(port > 0);
    char cmd[256], line[256] = "";
    snprintf(cmd, sizeof(cmd),
             "curl -s -o /dev/null -w '%%{http_code}' http://127.0.0.1:%d/readyz; echo;"
             "curl -s http://127.0.0.1:%d/metrics; curl -s -o /dev/null -w '%%{http_code}' "
             "-X POST http://127.0.0.1:%d/metrics",
             port, port, port);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    size_t n = fread(line, 1, sizeof(line) - 1, f);
    line[n] = '\0';
    pclose(f);
    assert_string_equal(line, "503\nx 1\n405");
    httpd_stop(h);
    assert_int_equal(httpd_start("nonsense", handler, NULL, &h, err, sizeof(err)), K_EINVAL);
    assert_null(h);
}

/* What the filter saw, for the test to check; the filter runs on the server's thread, so both
 * sides take `mu` (curl's exit orders them, but not in a way ThreadSanitizer can see). */
struct seen {
    pthread_mutex_t mu;
    int calls;
    char client[64];
    char method[16];
    char path[32];
    char authorization[64];
};

/* Lets "Bearer good" through on the filtered path; anything else gets 401 and a message. */
static unsigned filter(void *ctx, const char *client, const char *method, const char *path,
                       const char *authorization, char *msg, size_t msglen)
{
    struct seen *s = ctx;
    pthread_mutex_lock(&s->mu);
    s->calls++;
    snprintf(s->client, sizeof(s->client), "%s", client ? client : "(null)");
    snprintf(s->method, sizeof(s->method), "%s", method);
    snprintf(s->path, sizeof(s->path), "%s", path);
    snprintf(s->authorization, sizeof(s->authorization), "%s",
             authorization ? authorization : "(null)");
    pthread_mutex_unlock(&s->mu);
    if (authorization && strcmp(authorization, "Bearer good") == 0)
        return 0;
    snprintf(msg, msglen, "Unauthorized");
    return 401;
}

/* The filter covers its one path only, sees the peer's address and the Authorization header,
 * and its status and message replace the handler's answer. */
static void test_filter(void **state)
{
    (void)state;
    struct seen s = {.mu = PTHREAD_MUTEX_INITIALIZER};
    struct httpd_options o = {
        .addr = "127.0.0.1:0",
        .handler = handler,
        .filter = filter,
        .filter_ctx = &s,
        .filter_path = "/metrics",
    };
    struct httpd *h = NULL;
    char err[256], cmd[512], out[256];
    assert_int_equal(httpd_start_opts(&o, &h, err, sizeof(err)), K_OK);
    int port = httpd_port(h);

    snprintf(cmd, sizeof(cmd), "curl -s -w ' %%{http_code}' http://127.0.0.1:%d/metrics", port);
    test_command_output(cmd, out, sizeof(out));
    assert_string_equal(out, "Unauthorized\n 401");
    pthread_mutex_lock(&s.mu);
    assert_int_equal(s.calls, 1);
    assert_string_equal(s.client, "127.0.0.1");
    assert_string_equal(s.method, "GET");
    assert_string_equal(s.path, "/metrics");
    assert_string_equal(s.authorization, "(null)");
    pthread_mutex_unlock(&s.mu);

    snprintf(cmd, sizeof(cmd),
             "curl -s -w ' %%{http_code}' -H 'Authorization: Bearer good' "
             "http://127.0.0.1:%d/metrics",
             port);
    test_command_output(cmd, out, sizeof(out));
    assert_string_equal(out, "x 1\n 200");
    pthread_mutex_lock(&s.mu);
    assert_int_equal(s.calls, 2);
    assert_string_equal(s.authorization, "Bearer good");
    pthread_mutex_unlock(&s.mu);

    /* another path is not filtered */
    snprintf(cmd, sizeof(cmd), "curl -s -w ' %%{http_code}' http://127.0.0.1:%d/readyz", port);
    test_command_output(cmd, out, sizeof(out));
    assert_string_equal(out, "not yet\n 503");
    pthread_mutex_lock(&s.mu);
    assert_int_equal(s.calls, 2);
    pthread_mutex_unlock(&s.mu);
    httpd_stop(h);
    httpd_stop(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bind_addresses),
        cmocka_unit_test(test_httpd_serves),
        cmocka_unit_test(test_filter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
