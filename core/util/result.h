/*
 * result.h - the one result type of the gputri core.
 *
 * Every core function that can fail returns an int holding a K_* value (K_OK is 0) and passes
 * results through out-parameters. The values separate what callers must handle differently:
 * a controller relists on K_EGONE, requeues on K_ECONFLICT, backs off on K_EIO/K_ETIMEDOUT/
 * K_ETHROTTLED, and reports K_EFORBIDDEN/K_EUNAUTHORIZED as configuration errors.
 */
#ifndef GPUTRI_RESULT_H
#define GPUTRI_RESULT_H

enum k_result {
    K_OK = 0,
    K_ENOMEM,        /* allocation failed */
    K_ETOOBIG,       /* input above a size limit */
    K_EINVAL,        /* bad argument or malformed input from a file or flag */
    K_EPARSE,        /* malformed data from the network (JSON, watch stream) */
    K_EIO,           /* transport failure: connection refused, reset, TLS error */
    K_ETIMEDOUT,     /* transport timeout */
    K_EGONE,         /* HTTP 410 or watch ERROR 410: resourceVersion too old, relist */
    K_ECONFLICT,     /* HTTP 409 */
    K_ENOTFOUND,     /* HTTP 404, or a file that does not exist */
    K_EFORBIDDEN,    /* HTTP 403 (RBAC) */
    K_EUNAUTHORIZED, /* HTTP 401 */
    K_ETHROTTLED,    /* HTTP 429 */
    K_ESERVER,       /* HTTP 5xx */
    K_EHTTP,         /* any other HTTP status >= 400 */
    K_ECANCELED,     /* stopped on request (shutdown) */
};

/*
 * k_strerror() - a short English description of a K_* value.
 * Returns a static string; never NULL. Thread-safe.
 */
const char *k_strerror(int result);

/*
 * k_result_retryable() - whether an operation that failed with `result` may succeed when retried
 * later without any change: transport errors, timeouts, 429 and 5xx. Thread-safe.
 */
int k_result_retryable(int result);

#endif
