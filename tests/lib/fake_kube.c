/* fake_kube.c - the recording fake of the Kubernetes API (see fake_kube.h). */
#include "fake_kube.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/result.h"

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    assert_non_null(d);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static int round_trip(void *ctx, const char *method, const char *path, const char *body,
                      size_t body_len, long *status, int *retry_after, const char **resp,
                      size_t *resp_len)
{
    struct fake_kube *f = ctx;
    pthread_mutex_lock(&f->mu);
    if (f->n_requests < FAKE_KUBE_MAX) {
        struct fake_request *r = &f->requests[f->n_requests];
        snprintf(r->method, sizeof(r->method), "%s", method);
        r->path = dup_n(path, strlen(path));
        r->body = body ? dup_n(body, body_len) : NULL;
    }
    f->n_requests++;
    int rc = K_OK;
    *retry_after = 0;
    const char *body_out = "{}"; /* no scripted answer left */
    size_t len_out = 2;
    if (f->next_answer < f->n_answers) {
        struct fake_answer *a = &f->answers[f->next_answer++];
        rc = a->rc;
        if (a->advance_ms > 0 && f->clock)
            clock_fake_advance_ms(f->clock, a->advance_ms);
        *status = a->status;
        *retry_after = a->retry_after;
        len_out = a->body_len;
        body_out = a->body; /* stays with the answer until cleanup: clients in other threads
                               may still be reading earlier bodies */
    } else {
        *status = 200;
    }
    *resp = body_out;
    *resp_len = body_out ? len_out : 0;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    return rc;
}

void fake_kube_init(struct fake_kube *f)
{
    memset(f, 0, sizeof(*f));
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    f->transport.ctx = f;
    f->transport.round_trip = round_trip;
}

void fake_kube_cleanup(struct fake_kube *f)
{
    size_t n = f->n_requests < FAKE_KUBE_MAX ? f->n_requests : FAKE_KUBE_MAX;
    for (size_t i = 0; i < n; i++) {
        free(f->requests[i].path);
        free(f->requests[i].body);
    }
    for (size_t i = 0; i < f->n_answers; i++)
        free(f->answers[i].body);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
}

struct kube_client *fake_kube_client(struct fake_kube *f)
{
    struct kube_client *c = kube_client_new_transport(&f->cfg, &f->transport, "gputri-test");
    assert_non_null(c);
    return c;
}

static void script_n(struct fake_kube *f, int rc, long status, int retry_after, const char *body,
                     size_t len)
{
    pthread_mutex_lock(&f->mu);
    assert_true(f->n_answers < FAKE_KUBE_MAX);
    struct fake_answer *a = &f->answers[f->n_answers++];
    a->rc = rc;
    a->status = status;
    a->retry_after = retry_after;
    a->body = body ? dup_n(body, len) : NULL;
    a->body_len = body ? len : 0;
    pthread_mutex_unlock(&f->mu);
}

static void script(struct fake_kube *f, int rc, long status, int retry_after, const char *body)
{
    script_n(f, rc, status, retry_after, body, body ? strlen(body) : 0);
}

void fake_kube_answer_bytes(struct fake_kube *f, long status, const void *body, size_t len)
{
    script_n(f, K_OK, status, 0, body, len);
}

void fake_kube_answer(struct fake_kube *f, long status, int retry_after, const char *body)
{
    script(f, K_OK, status, retry_after, body);
}

void fake_kube_answer_after(struct fake_kube *f, int64_t ms, long status, const char *body)
{
    assert_non_null(f->clock);
    script(f, K_OK, status, 0, body);
    pthread_mutex_lock(&f->mu);
    f->answers[f->n_answers - 1].advance_ms = ms;
    pthread_mutex_unlock(&f->mu);
}

void fake_kube_fail(struct fake_kube *f, int rc)
{
    script(f, rc, 0, 0, NULL);
}

const struct fake_request *fake_kube_request(struct fake_kube *f, size_t i)
{
    pthread_mutex_lock(&f->mu);
    size_t n = f->n_requests;
    pthread_mutex_unlock(&f->mu);
    assert_true(i < n && i < FAKE_KUBE_MAX);
    return &f->requests[i];
}

void fake_kube_wait(struct fake_kube *f, size_t n)
{
    pthread_mutex_lock(&f->mu);
    while (f->n_requests < n)
        pthread_cond_wait(&f->cv, &f->mu);
    pthread_mutex_unlock(&f->mu);
}

json_object *fake_kube_body_json(struct fake_kube *f, size_t i)
{
    const struct fake_request *r = fake_kube_request(f, i);
    assert_non_null(r->body);
    json_object *o = json_tokener_parse(r->body);
    assert_non_null(o);
    return o;
}

size_t fake_kube_count(struct fake_kube *f)
{
    pthread_mutex_lock(&f->mu);
    size_t n = f->n_requests;
    pthread_mutex_unlock(&f->mu);
    return n;
}
