/* server.c - the libmicrohttpd server of both daemons: routes, HTTP rules, deadlines, drain. */
#include "http/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "http/lanes.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/deadline.h"
#include "util/errbuf.h"
#include "util/log.h"
#include "util/result.h"
#include "util/strconv.h"

#define DEFAULT_TIMEOUT_MS 10000
#define DEFAULT_SWEEP_MS 100
#define NO_DEADLINE INT64_MAX

enum phase {
    PHASE_HEADERS,  /* waiting for (the rest of) a request's headers */
    PHASE_BODY,     /* headers in, body arriving */
    PHASE_RESPONSE, /* answered, the response is being sent */
};

#define PEER_BUCKETS 256
#define DEFAULT_STALL_MS 1000

/* One client address with open connections (at most one per connection). */
struct peer {
    struct peer *next;         /* in its bucket */
    unsigned char addr[16];    /* IPv6, IPv4 as ::ffff:a.b.c.d */
    unsigned conns;            /* tracks pointing here */
    unsigned unverified;       /* of them, not shut and not verified */
    unsigned bodies;           /* unverified requests with a body arriving */
    size_t buffered;           /* their bytes */
    struct conn_track *oldest; /* its connections in accept order */
    struct conn_track *newest;
};

/* One open connection, from MHD_CONNECTION_NOTIFY_STARTED to MHD_CONNECTION_NOTIFY_CLOSED. */
struct conn_track {
    struct conn_track *prev, *next;   /* the server's list */
    struct conn_track *pprev, *pnext; /* its peer's list */
    struct peer *peer;                /* NULL when none could be allocated */
    int fd;
    enum phase phase;
    int64_t deadline; /* on the server's clock; NO_DEADLINE for none */
    bool shut;        /* shut down: at a deadline, or to make room */
    bool verified;    /* the last request on it verified */
};

struct http_server {
    struct MHD_Daemon *d;
    struct http_server_options o;
    const char *name;
    int port;
    unsigned max_unverified; /* connections that are not verified */
    atomic_bool stopping;
    pthread_mutex_t mu; /* guards everything below */
    pthread_cond_t cv;  /* the sweeper's tick and quit, and in_flight reaching 0 */
    struct conn_track *conns;
    unsigned n_conns;
    unsigned n_unverified; /* connections counted in their peer's unverified */
    struct peer *peers[PEER_BUCKETS];
    unsigned body_peers;        /* peers with bodies > 0 */
    size_t buffered;            /* body bytes held over all requests */
    size_t buffered_unverified; /* of them, by requests that did not verify */
    unsigned in_flight;
    uint64_t header_timeouts, body_timeouts, refused, evicted, shed, over_budget;
    bool quit;
    pthread_t sweeper;
    bool sweeper_started;
    struct lanes *lanes; /* NULL: handlers run on the server threads */
};

struct req_state {
    const struct http_route *route;
    struct conn_track *track; /* NULL when untracked (allocation failed) */
    unsigned error;           /* a status the server answers itself, 0 = none */
    const char *reason;       /* for that status */
    int64_t deadline;         /* the body's: the upload rate's, never past hard_deadline */
    int64_t hard_deadline;    /* the body deadline */
    bool verified;            /* the client certificate verified */
    struct peer *body_peer;   /* counted in its bodies (unverified, body arriving); or NULL */
    size_t counted;           /* bytes of this body counted in server.buffered */
    bool taken_whole;         /* counted from Content-Length before the body */
    struct buf body;
    /* with lanes: the request handed to a lane's worker, the connection suspended meanwhile */
    struct lane_job job;
    struct http_server *server;
    struct MHD_Connection *conn;
    bool dispatched;  /* handed over (the server thread's own flag) */
    atomic_bool done; /* resp is filled; set by the worker before it resumes the connection */
    struct http_request req;
    struct http_response resp;
    char addr[INET6_ADDRSTRLEN];
};

static int64_t now_ms(const struct http_server *s)
{
    return clock_mono_ms(s->o.clock);
}

static int64_t add_ms(int64_t t, int64_t ms)
{
    return t > NO_DEADLINE - ms ? NO_DEADLINE : t + ms;
}

void http_json_error(struct http_response *resp, unsigned status, const char *msg)
{
    char clean[256];
    size_t j = 0;
    for (size_t i = 0; msg && msg[i] && j + 1 < sizeof(clean); i++) {
        unsigned char c = (unsigned char)msg[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
            clean[j++] = (char)c;
    }
    clean[j] = 0;
    free(resp->body);
    resp->status = status;
    resp->content_type = "application/json";
    resp->body = NULL;
    resp->body_len = 0;
    char *b = malloc(j + 16);
    if (b) {
        int n = snprintf(b, j + 16, "{\"error\":\"%s\"}\n", clean);
        resp->body = b;
        resp->body_len = (size_t)n;
    }
}

static enum MHD_Result queue_close(struct http_server *s, struct MHD_Connection *conn,
                                   struct http_response *r, const char *allow, bool close_conn)
{
    struct MHD_Response *mr;
    if (r->body)
        mr = MHD_create_response_from_buffer(r->body_len, r->body, MHD_RESPMEM_MUST_FREE);
    else
        mr = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!mr) {
        free(r->body);
        r->body = NULL;
        return MHD_NO;
    }
    r->body = NULL; /* owned by the response now */
    MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE,
                            r->content_type ? r->content_type : "text/plain; charset=utf-8");
    if (allow)
        MHD_add_response_header(mr, MHD_HTTP_HEADER_ALLOW, allow);
    /* after a stop the client should go elsewhere for the next request */
    if (close_conn || atomic_load(&s->stopping))
        MHD_add_response_header(mr, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ret = MHD_queue_response(conn, r->status, mr);
    MHD_destroy_response(mr);
    return ret;
}

static enum MHD_Result queue(struct http_server *s, struct MHD_Connection *conn,
                             struct http_response *r, const char *allow)
{
    return queue_close(s, conn, r, allow, false);
}

static enum MHD_Result answer_error(struct http_server *s, struct MHD_Connection *conn,
                                    unsigned status, const char *reason, const char *allow)
{
    struct http_response r = {0};
    http_json_error(&r, status, reason);
    return queue(s, conn, &r, allow);
}

static bool method_matches(const char *route_method, const char *method)
{
    return strcmp(route_method, method) == 0 ||
           (strcmp(method, "HEAD") == 0 && strcmp(route_method, "GET") == 0);
}

/* The route for method and path, or NULL with the methods the path allows in allow ("" when the
 * path is unknown). */
static const struct http_route *find_route(const struct http_server *s, const char *method,
                                           const char *path, char *allow, size_t allow_len)
{
    allow[0] = 0;
    size_t used = 0;
    for (size_t i = 0; i < s->o.n_routes; i++) {
        const struct http_route *r = &s->o.routes[i];
        if (r->path && strcmp(r->path, path) != 0)
            continue;
        if (method_matches(r->method, method))
            return r;
        bool get = strcmp(r->method, "GET") == 0;
        int n = snprintf(allow + used, allow_len - used, "%s%s%s", used ? ", " : "", r->method,
                         get ? ", HEAD" : "");
        if (n > 0 && (size_t)n < allow_len - used)
            used += (size_t)n;
    }
    return NULL;
}

/* ---- framing: Content-Length and Transfer-Encoding ---- */

struct framing {
    unsigned n_cl, n_te;
    bool cl_differ;
    bool bad_name,
        bad_value; /* a header name outside RFC 9110's token / a value with NUL, CR, LF */
    const char *cl;
    const char *te; /* the first */
};

static bool is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* RFC 9110 section 5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
 * "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA. */
static bool is_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                   size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    struct framing *f = cls;
    if (key_size == 0)
        f->bad_name = true;
    for (size_t i = 0; i < key_size; i++)
        if (!is_tchar((unsigned char)key[i]))
            f->bad_name = true;
    if (!value) {
        value = "";
        value_size = 0;
    }
    for (size_t i = 0; i < value_size; i++)
        if (value[i] == '\0' || value[i] == '\r' || value[i] == '\n')
            f->bad_value = true;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        if (f->n_cl++ && strcmp(f->cl, value) != 0)
            f->cl_differ = true;
        else
            f->cl = value;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
        if (!f->n_te++)
            f->te = value;
    }
    return MHD_YES;
}

/* Returns 0 when the request's framing is one libmicrohttpd reads correctly, else the status to
 * answer with and *reason. The header list is bounded by the connection's memory. */
static unsigned check_framing(struct MHD_Connection *conn, const char **reason)
{
    struct framing f = {0};
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, scan_header, &f);
    /* libmicrohttpd 0.9.75 accepts names such as "Content-Length " (space before the colon) and
     * then does not read the body they announce: the body would be taken for the next request
     * (request smuggling). RFC 9112 section 5.1: such a request is answered 400. */
    if (f.bad_name) {
        *reason = "invalid header field name";
        return MHD_HTTP_BAD_REQUEST;
    }
    if (f.bad_value) {
        *reason = "invalid header field value";
        return MHD_HTTP_BAD_REQUEST;
    }
    if (f.cl_differ) {
        *reason = "multiple Content-Length headers with different values";
        return MHD_HTTP_BAD_REQUEST;
    }
    if (f.n_te == 0)
        return 0;
    /* libmicrohttpd decodes chunked only for one header whose whole value is "chunked"; Go's
     * net/http answers anything else with 501 too (transfer.go, parseTransferEncoding) */
    if (f.n_te != 1 || strcasecmp(f.te, "chunked") != 0) {
        *reason = "unsupported transfer encoding (only chunked is implemented)";
        return MHD_HTTP_NOT_IMPLEMENTED;
    }
    if (f.n_cl) {
        *reason = "both Content-Length and Transfer-Encoding";
        return MHD_HTTP_BAD_REQUEST;
    }
    return 0;
}

/* True when the request's media type (before any parameter) is `want`, case-insensitively. */
static bool media_type_is(struct MHD_Connection *conn, const char *want)
{
    const char *v =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!v)
        return false;
    while (is_ows(*v))
        v++;
    size_t n = strcspn(v, ";");
    while (n && is_ows(v[n - 1]))
        n--;
    return n == strlen(want) && strncasecmp(v, want, n) == 0;
}

/* ---- connection tracking and the deadline sweeper ---- */

static void track_set(struct http_server *s, struct conn_track *t, enum phase ph, int64_t deadline)
{
    if (!t)
        return;
    pthread_mutex_lock(&s->mu);
    t->phase = ph;
    t->deadline = deadline;
    pthread_mutex_unlock(&s->mu);
}

/* ---- client addresses and fair shares (all under mu) ---- */

static void addr_key(const struct sockaddr *sa, unsigned char key[16])
{
    memset(key, 0, 16);
    if (sa && sa->sa_family == AF_INET) {
        key[10] = key[11] = 0xff;
        memcpy(key + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (sa && sa->sa_family == AF_INET6) {
        memcpy(key, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    }
}

static unsigned addr_bucket(const unsigned char key[16])
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (int i = 0; i < 16; i++)
        h = (h ^ key[i]) * 16777619u;
    return h % PEER_BUCKETS;
}

/* The peer of key, created when new; NULL when out of memory. */
static struct peer *peer_get_locked(struct http_server *s, const unsigned char key[16])
{
    unsigned b = addr_bucket(key);
    for (struct peer *p = s->peers[b]; p; p = p->next)
        if (memcmp(p->addr, key, 16) == 0)
            return p;
    struct peer *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    memcpy(p->addr, key, 16);
    p->next = s->peers[b];
    s->peers[b] = p;
    return p;
}

static void peer_put_locked(struct http_server *s, struct peer *p)
{
    if (--p->conns > 0)
        return;
    struct peer **pp = &s->peers[addr_bucket(p->addr)];
    while (*pp != p)
        pp = &(*pp)->next;
    *pp = p->next;
    free(p);
}

/* Whether t counts against the unverified connections. */
static bool counts(const struct conn_track *t)
{
    return t->peer && !t->shut && !t->verified;
}

static void uncount_locked(struct http_server *s, struct conn_track *t)
{
    if (counts(t)) {
        s->n_unverified--;
        t->peer->unverified--;
    }
}

static void count_locked(struct http_server *s, struct conn_track *t)
{
    if (counts(t)) {
        s->n_unverified++;
        t->peer->unverified++;
    }
}

/* Marks t shut and shuts its socket down; true the first time (the caller counts it). */
static bool expire_locked(struct http_server *s, struct conn_track *t)
{
    if (t->shut)
        return false;
    uncount_locked(s, t);
    t->shut = true;
    if (t->fd >= 0)
        shutdown(t->fd, SHUT_RDWR); /* libmicrohttpd sees the end of the stream and closes */
    return true;
}

/* t was verified or not by its latest request. */
static void set_verified_locked(struct http_server *s, struct conn_track *t, bool verified)
{
    uncount_locked(s, t);
    t->verified = verified;
    count_locked(s, t);
}

/*
 * The unverified connections are one over their limit with the newcomer t: close the oldest
 * unverified connection (one still waiting for headers first) of the address that holds the
 * most, when it holds at least as many as t's address (t counted); else close t. At most
 * PEER_BUCKETS + the open connections are looked at.
 */
static void make_room_locked(struct http_server *s, struct conn_track *t)
{
    struct peer *victim = NULL;
    for (unsigned b = 0; t->peer && b < PEER_BUCKETS; b++)
        for (struct peer *p = s->peers[b]; p; p = p->next)
            if (p != t->peer && (!victim || p->unverified > victim->unverified))
                victim = p;
    if (!t->peer || !victim || victim->unverified < t->peer->unverified) {
        expire_locked(s, t);
        s->shed++;
        return;
    }
    struct conn_track *pick = NULL;
    for (struct conn_track *c = victim->oldest; c; c = c->pnext) {
        if (!counts(c) || c->phase == PHASE_RESPONSE)
            continue; /* being answered (perhaps suspended for a lane): closing it frees nothing */
        if (c->phase == PHASE_HEADERS) {
            pick = c;
            break;
        }
        if (!pick)
            pick = c;
    }
    if (pick) {
        expire_locked(s, pick);
        s->evicted++;
    } else { /* all of the victim's are being answered: the newcomer goes */
        expire_locked(s, t);
        s->shed++;
    }
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct http_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        struct conn_track *t = calloc(1, sizeof(*t));
        *socket_context = t;
        if (!t)
            return; /* untracked: only the inactivity timeout bounds it */
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        t->fd = ci ? ci->connect_fd : -1;
        t->phase = PHASE_HEADERS;
        t->deadline = add_ms(now_ms(s), s->o.header_timeout_ms);
        unsigned char key[16];
        ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        addr_key(ci ? ci->client_addr : NULL, key);
        pthread_mutex_lock(&s->mu);
        t->next = s->conns;
        if (s->conns)
            s->conns->prev = t;
        s->conns = t;
        s->n_conns++;
        t->peer = peer_get_locked(s, key);
        if (t->peer) {
            t->peer->conns++;
            t->pprev = t->peer->newest;
            if (t->peer->newest)
                t->peer->newest->pnext = t;
            else
                t->peer->oldest = t;
            t->peer->newest = t;
        }
        count_locked(s, t);
        if (!t->peer || s->n_unverified > s->max_unverified)
            make_room_locked(s, t);
        pthread_mutex_unlock(&s->mu);
        return;
    }
    /* MHD_CONNECTION_NOTIFY_CLOSED: libmicrohttpd closes the socket after this returns. */
    struct conn_track *t = *socket_context;
    if (!t)
        return;
    pthread_mutex_lock(&s->mu);
    uncount_locked(s, t);
    if (t->prev)
        t->prev->next = t->next;
    else
        s->conns = t->next;
    if (t->next)
        t->next->prev = t->prev;
    s->n_conns--;
    if (t->peer) {
        if (t->pprev)
            t->pprev->pnext = t->pnext;
        else
            t->peer->oldest = t->pnext;
        if (t->pnext)
            t->pnext->pprev = t->pprev;
        else
            t->peer->newest = t->pprev;
        peer_put_locked(s, t->peer);
    }
    pthread_mutex_unlock(&s->mu);
    free(t);
    *socket_context = NULL;
}

static void *sweep(void *arg)
{
    struct http_server *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->quit) {
        /* One tick of real time: the deadlines themselves are on s->o.clock. */
        deadline_wait(&s->cv, &s->mu, CLOCK_MONOTONIC, NULL,
                      clock_mono_ms(NULL) + s->o.sweep_interval_ms, 0);
        if (s->quit)
            break;
        int64_t now = now_ms(s);
        unsigned headers = 0, bodies = 0;
        for (struct conn_track *t = s->conns; t; t = t->next) { /* at most max_connections */
            if (t->deadline >= now || !expire_locked(s, t))
                continue;
            if (t->phase == PHASE_HEADERS)
                headers++;
            else
                bodies++;
        }
        s->header_timeouts += headers;
        s->body_timeouts += bodies;
        if (headers || bodies) {
            pthread_mutex_unlock(&s->mu);
            log_info_kv(2, "closed connections past their deadline", LOG_STR("server", s->name),
                        LOG_INT("headerDeadline", headers), LOG_INT("bodyDeadline", bodies));
            pthread_mutex_lock(&s->mu);
        }
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* ---- requests ---- */

static struct conn_track *track_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* ---- the buffered-body budget and the upload rate (all under mu) ---- */

/* Counts st's address among those with an unverified body arriving (once). */
static void join_bodies_locked(struct http_server *s, struct req_state *st)
{
    if (st->verified || st->body_peer || !st->track || !st->track->peer)
        return;
    st->body_peer = st->track->peer;
    if (st->body_peer->bodies++ == 0)
        s->body_peers++;
}

/* Whether n more bytes of st's body fit in its share (server.h, "Fair shares"). buffered never
 * exceeds max_buffered, nor buffered_unverified the unverified pool: bytes are only taken here. */
static bool fits_locked(const struct http_server *s, const struct req_state *st, size_t n)
{
    if (n > s->o.max_buffered - s->buffered)
        return false;
    if (st->verified)
        return true;
    size_t pool = s->o.max_buffered - s->o.verified_buffered;
    if (n > pool - s->buffered_unverified)
        return false;
    if (!st->body_peer)
        return true;
    size_t share = pool / (s->body_peers ? s->body_peers : 1);
    if (share < s->o.max_body)
        share = s->o.max_body;
    return n <= share && st->body_peer->buffered <= share - n;
}

static void take_locked(struct http_server *s, struct req_state *st, size_t n)
{
    s->buffered += n;
    st->counted += n;
    if (!st->verified)
        s->buffered_unverified += n;
    if (st->body_peer)
        st->body_peer->buffered += n;
}

static void release_locked(struct http_server *s, struct req_state *st)
{
    s->buffered -= st->counted;
    if (!st->verified)
        s->buffered_unverified -= st->counted;
    if (st->body_peer) {
        st->body_peer->buffered -= st->counted;
        if (--st->body_peer->bodies == 0)
            s->body_peers--;
        st->body_peer = NULL;
    }
    st->counted = 0;
}

static bool rate_applies(const struct http_server *s, const struct req_state *st)
{
    return s->o.body_min_rate > 0 && !st->verified;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* The body deadline after n more bytes arrived at now (server.h, "upload rate"). */
static int64_t rate_deadline(const struct http_server *s, const struct req_state *st, size_t n,
                             int64_t now)
{
    if (!rate_applies(s, st))
        return st->deadline;
    int64_t credit = (int64_t)((uint64_t)n * 1000 / s->o.body_min_rate);
    return min64(min64(add_ms(st->deadline, credit), add_ms(now, s->o.body_stall_ms)),
                 st->hard_deadline);
}

/* The first call for a request: headers only. Returns the answer or MHD_YES to read the body. */
static enum MHD_Result begin(struct http_server *s, struct MHD_Connection *conn, const char *url,
                             const char *method, struct req_state *st)
{
    const char *reason = NULL;
    unsigned status = check_framing(conn, &reason);
    if (status) {
        log_info_kv(2, "request refused", LOG_STR("server", s->name), LOG_STR("verb", method),
                    LOG_STR("path", url), LOG_INT("status", status), LOG_STR("reason", reason));
        /* the framing is in doubt: what follows on the connection is not read as a request */
        struct http_response r = {0};
        http_json_error(&r, status, reason);
        return queue_close(s, conn, &r, NULL, true);
    }
    char allow[64];
    st->route = find_route(s, method, url, allow, sizeof(allow));
    if (!st->route) {
        log_info_kv(2, "request refused", LOG_STR("server", s->name), LOG_STR("verb", method),
                    LOG_STR("path", url), LOG_INT("status", allow[0] ? 405 : 404));
        return allow[0]
                   ? answer_error(s, conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed", allow)
                   : answer_error(s, conn, MHD_HTTP_NOT_FOUND, "not found", NULL);
    }
    const char *cl =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    unsigned long long n = 0;
    if (cl) {
        char *end;
        errno = 0;
        n = strtoull(cl, &end, 10);
        if (*end || errno || n > s->o.max_body) {
            log_warn_kv("request refused: Content-Length above the cap", LOG_STR("server", s->name),
                        LOG_STR("verb", method), LOG_STR("path", url), LOG_STR("contentLength", cl),
                        LOG_INT("maxBytes", s->o.max_body));
            return answer_error(s, conn, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large",
                                NULL);
        }
    }
    if (st->route->content_type && !media_type_is(conn, st->route->content_type)) {
        const char *ct =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        log_info_kv(2, "request refused: Content-Type", LOG_STR("server", s->name),
                    LOG_STR("verb", method), LOG_STR("path", url), LOG_INT("status", 400),
                    LOG_STR("contentType", ct ? ct : "(none)"));
        char msg[96];
        snprintf(msg, sizeof(msg), "Content-Type must be %s", st->route->content_type);
        return answer_error(s, conn, MHD_HTTP_BAD_REQUEST, msg, NULL);
    }
    if (n > 0) { /* answered before the body, which is then not read: the connection closes */
        pthread_mutex_lock(&s->mu);
        join_bodies_locked(s, st);
        bool fits = fits_locked(s, st, (size_t)n);
        if (fits) { /* taken at once: the share is then known to hold the whole body */
            take_locked(s, st, (size_t)n);
            st->taken_whole = true;
        } else
            s->over_budget++;
        pthread_mutex_unlock(&s->mu);
        if (!fits) {
            log_info_kv(2, "request refused: the body does not fit in its share",
                        LOG_STR("server", s->name), LOG_STR("verb", method), LOG_STR("path", url),
                        LOG_INT("status", 503), LOG_INT("bytes", n));
            return answer_error(s, conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                                "too many request bodies in flight", NULL);
        }
    }
    return MHD_YES;
}

/* Whether the TLS client presented a chain that o.client_verify accepts. */
static bool client_verified(struct http_server *s, struct MHD_Connection *conn)
{
    if (!s->o.client_verify || !s->o.tls_cert_callback)
        return false;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!ci || !ci->tls_session)
        return false;
    unsigned n = 0;
    const gnutls_datum_t *peers = gnutls_certificate_get_peers(ci->tls_session, &n);
    if (!peers || n == 0)
        return false;
    if (n > HTTP_MAX_PEER_CHAIN)
        n = HTTP_MAX_PEER_CHAIN;
    struct http_peer_cert chain[HTTP_MAX_PEER_CHAIN];
    for (unsigned i = 0; i < n; i++) {
        chain[i].der = peers[i].data;
        chain[i].len = peers[i].size;
    }
    return s->o.client_verify(s->o.client_verify_ctx, chain, n);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)version;
    struct http_server *s = cls;
    struct req_state *st = *con_cls;
    if (!st) {
        st = calloc(1, sizeof(*st));
        if (!st)
            return MHD_NO;
        *con_cls = st;
        buf_init(&st->body, s->o.max_body);
        st->track = track_of(conn);
        st->verified = client_verified(s, conn); /* the handshake is over, the body to come */
        int64_t now = now_ms(s);
        st->hard_deadline = add_ms(now, s->o.body_timeout_ms);
        st->deadline = rate_applies(s, st)
                           ? min64(add_ms(now, s->o.body_stall_ms), st->hard_deadline)
                           : st->hard_deadline;
        pthread_mutex_lock(&s->mu);
        s->in_flight++;
        if (st->track) {
            set_verified_locked(s, st->track, st->verified);
            st->track->phase = PHASE_BODY;
            st->track->deadline = st->deadline;
        }
        pthread_mutex_unlock(&s->mu);
        return begin(s, conn, url, method, st);
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        int64_t now = now_ms(s);
        pthread_mutex_lock(&s->mu);
        if (now > st->deadline) {
            bool first = st->track ? expire_locked(s, st->track) : true;
            if (first)
                s->body_timeouts++;
            pthread_mutex_unlock(&s->mu);
            log_info_kv(2, "body not complete in time, closing", LOG_STR("server", s->name),
                        LOG_STR("verb", method), LOG_STR("path", url),
                        LOG_INT("timeoutMs", s->o.body_timeout_ms),
                        LOG_INT("minBytesPerSecond", s->o.body_min_rate));
            return MHD_NO; /* no response can be queued mid-body in libmicrohttpd 0.9.75 */
        }
        st->deadline = rate_deadline(s, st, n, now);
        if (st->track && !st->track->shut)
            st->track->deadline = st->deadline;
        if (!st->error && !st->taken_whole) {
            join_bodies_locked(s, st);
            if (fits_locked(s, st, n)) {
                take_locked(s, st, n);
            } else {
                st->error = MHD_HTTP_SERVICE_UNAVAILABLE;
                st->reason = "too many request bodies in flight";
                s->over_budget++;
            }
        }
        pthread_mutex_unlock(&s->mu);
        if (st->error)
            buf_cleanup(&st->body);
        if (!st->error) {
            int rc = buf_append(&st->body, upload_data, *upload_data_size);
            if (rc != K_OK) {
                st->error =
                    rc == K_ETOOBIG ? MHD_HTTP_CONTENT_TOO_LARGE : MHD_HTTP_INTERNAL_SERVER_ERROR;
                st->reason = rc == K_ETOOBIG ? "request body too large" : "out of memory";
                buf_cleanup(&st->body);
            }
        }
        *upload_data_size = 0; /* consumed (or discarded) */
        return MHD_YES;
    }
    if (st->dispatched) { /* resumed: a lane's worker answered (done is set before the resume) */
        if (!atomic_load_explicit(&st->done, memory_order_acquire)) {
            MHD_suspend_connection(conn); /* not reached: wait for the real resume */
            return MHD_YES;
        }
        buf_cleanup(&st->body);
        struct http_response resp = st->resp;
        st->resp.body = NULL; /* queue() owns it now */
        return queue(s, conn, &resp, NULL);
    }
    track_set(s, st->track, PHASE_RESPONSE, NO_DEADLINE);
    if (st->error) {
        log_warn_kv("request refused", LOG_STR("server", s->name), LOG_STR("verb", method),
                    LOG_STR("path", url), LOG_INT("status", st->error),
                    LOG_STR("reason", st->reason));
        return answer_error(s, conn, st->error, st->reason, NULL);
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (sa && sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, st->addr, sizeof(st->addr));
    else if (sa && sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, st->addr,
                  sizeof(st->addr));
    /* method, url and the header values stay valid until the request completes */
    st->req = (struct http_request){
        .method = method,
        .path = url,
        .body = buf_cstr(&st->body),
        .body_len = st->body.len,
        .client_verified = st->verified,
        .authorization =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
        .client_addr = st->addr,
        .received_ms = clock_mono_ms(NULL),
    };
    const char *timeout = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "timeout");
    if (timeout && strconv_duration_ms(timeout, 3600 * 1000, &st->req.timeout_ms) != K_OK)
        st->req.timeout_ms = 0;
    st->resp = (struct http_response){.status = 200, .content_type = "text/plain; charset=utf-8"};
    /* Routes with a lane function run in the lanes; the others (probes, metrics: cheap) here,
     * so that a busy lane never makes a probe fail. */
    if (s->lanes && st->route->lane) {
        unsigned lane = st->route->lane(st->route->ctx, &st->req);
        st->server = s;
        st->conn = conn;
        st->dispatched = true;
        /* suspended before it is handed over: the worker may resume it at once */
        MHD_suspend_connection(conn);
        if (!lanes_submit(s->lanes, lane, &st->job)) {
            /* the lane is full or closed: a cheap answer here, never the handler */
            http_json_error(&st->resp, MHD_HTTP_SERVICE_UNAVAILABLE, "server busy");
            atomic_store_explicit(&st->done, true, memory_order_release);
            MHD_resume_connection(conn);
        }
        return MHD_YES;
    }
    st->route->fn(st->route->ctx, &st->req, &st->resp);
    buf_cleanup(&st->body);
    struct http_response resp = st->resp;
    st->resp.body = NULL; /* queue() owns it now */
    return queue(s, conn, &resp, NULL);
}

/* A lane's worker: answer the request (shed: cheaply, as the route says), then resume its
 * connection, whose server thread queues the answer. */
static void run_job(void *ctx, struct lane_job *job, bool shed)
{
    (void)ctx;
    struct req_state *st =
        (struct req_state *)(void *)((char *)job - offsetof(struct req_state, job));
    if (!shed)
        st->route->fn(st->route->ctx, &st->req, &st->resp);
    else if (st->route->shed)
        st->route->shed(st->route->ctx, &st->req, &st->resp);
    else
        http_json_error(&st->resp, MHD_HTTP_SERVICE_UNAVAILABLE, "server busy");
    atomic_store_explicit(&st->done, true, memory_order_release);
    MHD_resume_connection(st->conn);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)conn;
    struct http_server *s = cls;
    struct req_state *st = *con_cls;
    if (!st)
        return;
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
        log_info_kv(2, "request ended early", LOG_STR("server", s->name),
                    LOG_INT("code", (int)toe));
    /* a lane's answer never queued: the client went away while the connection was suspended
     * (libmicrohttpd then completes the request without calling the handler again) */
    free(st->resp.body);
    st->resp.body = NULL;
    buf_cleanup(&st->body);
    int64_t next = add_ms(now_ms(s), s->o.keepalive_timeout_ms);
    pthread_mutex_lock(&s->mu);
    release_locked(s, st);
    if (st->track) { /* kept alive: the next request's headers are due */
        st->track->phase = PHASE_HEADERS;
        st->track->deadline = next;
    }
    /* only http_server_stop() waits for in_flight to reach 0 (it sets `stopping` before it
     * takes mu): waking the sweeper after every request cost a context switch per request */
    if (--s->in_flight == 0 && atomic_load(&s->stopping))
        pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    free(st);
    *con_cls = NULL;
}

static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    (void)addr;
    (void)addrlen;
    struct http_server *s = cls;
    if (!atomic_load(&s->stopping))
        return MHD_YES;
    pthread_mutex_lock(&s->mu);
    s->refused++;
    pthread_mutex_unlock(&s->mu);
    return MHD_NO;
}

static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    const struct http_server *s = cls;
    char line[512];
    vsnprintf(line, sizeof(line), fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = 0;
    log_info_kv(2, "libmicrohttpd", LOG_STR("server", s->name), LOG_STR("message", line));
}

/* ---- start and stop ---- */

static struct MHD_Daemon *start_daemon(struct http_server *s, unsigned flags,
                                       const struct sockaddr *sa)
{
    const struct http_server_options *o = &s->o;
    bool tls = o->tls_cert_callback != NULL;
    if (tls)
        flags |= MHD_USE_TLS;
    /* Without TLS the option list ends before the TLS options (MHD_OPTION_END stops parsing). */
    return MHD_start_daemon(
        flags, 0, on_accept, s, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
        MHD_OPTION_SOCK_ADDR, sa,
        /* a pool of 1 is logged as a warning: pass the connection limit twice instead */
        o->threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_CONNECTION_LIMIT,
        o->threads > 1 ? o->threads : o->max_connections, MHD_OPTION_CONNECTION_LIMIT,
        o->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT, o->per_ip_connections,
        MHD_OPTION_CONNECTION_TIMEOUT, o->idle_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        o->connection_memory, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
        tls ? MHD_OPTION_HTTPS_CERT_CALLBACK : MHD_OPTION_END,
        (gnutls_certificate_retrieve_function2 *)o->tls_cert_callback, MHD_OPTION_HTTPS_PRIORITIES,
        o->tls_priorities,
        /* asks for a client certificate without requiring one (see server.h) */
        o->tls_client_trust_pem ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END,
        o->tls_client_trust_pem, MHD_OPTION_END);
}

/* Binds as o->host says; returns K_OK with s->d, or K_EINVAL/K_EIO with err. */
static int listen_on(struct http_server *s, char *err, size_t errlen)
{
    const struct http_server_options *o = &s->o;
    unsigned flags =
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_USE_ITC;
    if (o->n_lanes > 0)
        flags |= MHD_ALLOW_SUSPEND_RESUME; /* the lanes resume what the server threads suspend */
    if (!o->host || !o->host[0]) {
        struct sockaddr_in6 in6 = {.sin6_family = AF_INET6,
                                   .sin6_port = htons((uint16_t)o->port),
                                   .sin6_addr = in6addr_any};
        s->d = start_daemon(s, flags | MHD_USE_DUAL_STACK, (struct sockaddr *)&in6);
        if (!s->d) {
            struct sockaddr_in in4 = {.sin_family = AF_INET,
                                      .sin_port = htons((uint16_t)o->port),
                                      .sin_addr.s_addr = htonl(INADDR_ANY)};
            s->d = start_daemon(s, flags, (struct sockaddr *)&in4);
            if (s->d)
                log_info_kv(0, "IPv6 is not available: listening on IPv4 only",
                            LOG_STR("server", s->name), LOG_STR("address", "0.0.0.0"),
                            LOG_INT("port", o->port));
        }
    } else {
        struct addrinfo hints = {.ai_family = AF_UNSPEC,
                                 .ai_socktype = SOCK_STREAM,
                                 .ai_flags =
                                     AI_NUMERICSERV | (o->numeric_host ? AI_NUMERICHOST : 0)};
        struct addrinfo *ai = NULL;
        char service[16];
        snprintf(service, sizeof(service), "%d", o->port);
        int gai = getaddrinfo(o->host, service, &hints, &ai);
        if (gai != 0) {
            if (o->numeric_host)
                errbuf_printf(err, errlen, "%s is not a numeric IPv4 or IPv6 address", o->host);
            else
                errbuf_printf(err, errlen, "cannot resolve %s: %s", o->host, gai_strerror(gai));
            return K_EINVAL;
        }
        for (struct addrinfo *a = ai; a && !s->d; a = a->ai_next)
            s->d = start_daemon(s, a->ai_family == AF_INET6 ? flags | MHD_USE_IPv6 : flags,
                                a->ai_addr);
        freeaddrinfo(ai);
    }
    if (!s->d) {
        errbuf_printf(err, errlen, "cannot listen on %s port %d (address in use or not permitted)",
                      o->host && o->host[0] ? o->host : "every interface", o->port);
        return K_EIO;
    }
    return K_OK;
}

int http_server_start(const struct http_server_options *o, struct http_server **out, char *err,
                      size_t errlen)
{
    *out = NULL;
    errbuf_printf(err, errlen, "%s", "");
    if (!o->routes || o->n_routes == 0 || o->port < 0 || o->port > 65535) {
        errbuf_printf(err, errlen, "no routes or a port outside 0-65535");
        return K_EINVAL;
    }
    if (o->tls_cert_callback &&
        (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES ||
         MHD_is_feature_supported(MHD_FEATURE_HTTPS_CERT_CALLBACK) != MHD_YES)) {
        errbuf_printf(err, errlen, "libmicrohttpd lacks TLS or the HTTPS certificate callback");
        return K_EINVAL;
    }
    struct http_server *s = calloc(1, sizeof(*s));
    if (!s) {
        errbuf_printf(err, errlen, "out of memory");
        return K_ENOMEM;
    }
    s->o = *o;
    s->name = o->name ? o->name : "http";
    if (s->o.threads < 1)
        s->o.threads = 1;
    if (s->o.max_connections == 0)
        s->o.max_connections = 64;
    if (s->o.connection_memory == 0)
        s->o.connection_memory = 32768;
    if (s->o.max_buffered == 0)
        s->o.max_buffered = 16 * s->o.max_body;
    /* the unverified requests keep room for one body, the unverified connections for one */
    size_t keep = s->o.max_buffered < s->o.max_body ? s->o.max_buffered : s->o.max_body;
    if (s->o.verified_buffered > s->o.max_buffered - keep)
        s->o.verified_buffered = s->o.max_buffered - keep;
    unsigned headroom = s->o.max_connections / 8;
    unsigned room = s->o.max_connections - headroom;
    if (s->o.verified_connections > room - 1)
        s->o.verified_connections = room - 1;
    s->max_unverified = room - s->o.verified_connections;
    if (s->o.body_stall_ms <= 0)
        s->o.body_stall_ms = DEFAULT_STALL_MS;
    if (s->o.header_timeout_ms <= 0)
        s->o.header_timeout_ms = DEFAULT_TIMEOUT_MS;
    if (s->o.body_timeout_ms <= 0)
        s->o.body_timeout_ms = DEFAULT_TIMEOUT_MS;
    if (s->o.keepalive_timeout_ms <= 0)
        s->o.keepalive_timeout_ms = s->o.header_timeout_ms;
    if (s->o.sweep_interval_ms <= 0)
        s->o.sweep_interval_ms = DEFAULT_SWEEP_MS;
    if (!s->o.tls_priorities)
        s->o.tls_priorities = "NORMAL";
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&s->mu, NULL);
    s->o.lanes = NULL; /* borrowed for this call only */
    int rc = o->n_lanes > 0
                 ? lanes_start(o->lanes, o->n_lanes, run_job, s, s->name, &s->lanes, err, errlen)
                 : K_OK;
    if (rc == K_OK)
        rc = listen_on(s, err, errlen);
    if (rc == K_OK && pthread_create(&s->sweeper, NULL, sweep, s) != 0) {
        errbuf_printf(err, errlen, "cannot start the deadline thread");
        MHD_stop_daemon(s->d);
        rc = K_ENOMEM;
    }
    if (rc != K_OK) {
        lanes_close(s->lanes);
        lanes_free(s->lanes);
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        free(s);
        return rc;
    }
    s->sweeper_started = true;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : o->port;
    *out = s;
    return K_OK;
}

int http_server_port(const struct http_server *s)
{
    return s->port;
}

unsigned http_server_in_flight(struct http_server *s)
{
    pthread_mutex_lock(&s->mu);
    unsigned n = s->in_flight;
    pthread_mutex_unlock(&s->mu);
    return n;
}

void http_server_stats(struct http_server *s, struct http_server_stats *out)
{
    pthread_mutex_lock(&s->mu);
    out->connections = s->n_conns;
    out->header_timeouts = s->header_timeouts;
    out->body_timeouts = s->body_timeouts;
    out->refused = s->refused;
    out->evicted = s->evicted;
    out->shed = s->shed;
    out->over_budget = s->over_budget;
    pthread_mutex_unlock(&s->mu);
    for (unsigned i = 0; i < HTTP_MAX_LANES; i++)
        lanes_stats(s->lanes, i, &out->lane[i]);
}

void http_server_stop(struct http_server *s, int64_t drain_ms)
{
    if (!s)
        return;
    atomic_store(&s->stopping, true);
    pthread_mutex_lock(&s->mu);
    int64_t until = clock_mono_ms(NULL) + (drain_ms > 0 ? drain_ms : 0); /* real time */
    while (s->in_flight > 0 && !deadline_wait(&s->cv, &s->mu, CLOCK_MONOTONIC, NULL, until, 0))
        ;
    if (s->lanes) {
        /* What is queued is answered shed and the running handlers finish, so no connection
         * stays suspended (libmicrohttpd must not be stopped with one); then their answers go
         * out, for as long as the drain allows. */
        pthread_mutex_unlock(&s->mu);
        /* closed, not freed: the server threads may still submit (and be refused) until the
         * daemon has stopped */
        lanes_close(s->lanes);
        pthread_mutex_lock(&s->mu);
        int64_t grace = clock_mono_ms(NULL) + 1000;
        if (grace < until)
            grace = until;
        while (s->in_flight > 0 && !deadline_wait(&s->cv, &s->mu, CLOCK_MONOTONIC, NULL, grace, 0))
            ;
    }
    if (s->in_flight > 0)
        log_warn_kv("stopping with requests still in flight", LOG_STR("server", s->name),
                    LOG_INT("inFlight", s->in_flight));
    s->quit = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    if (s->sweeper_started)
        pthread_join(s->sweeper, NULL);
    /* Signals every worker through its ITC and joins it; the listen socket never leaves an epoll
     * set from this thread (no MHD_quiesce_daemon), so there is nothing to race with. */
    MHD_stop_daemon(s->d);
    lanes_free(s->lanes);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
