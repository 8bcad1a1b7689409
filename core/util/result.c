/* result.c - descriptions of the K_* result values. */
#include "result.h"

const char *k_strerror(int result)
{
    switch (result) {
    case K_OK:
        return "success";
    case K_ENOMEM:
        return "out of memory";
    case K_ETOOBIG:
        return "input too large";
    case K_EINVAL:
        return "invalid input";
    case K_EPARSE:
        return "malformed response";
    case K_EIO:
        return "connection failed";
    case K_ETIMEDOUT:
        return "timed out";
    case K_EGONE:
        return "resource version too old (410 Gone)";
    case K_ECONFLICT:
        return "conflict (409)";
    case K_ENOTFOUND:
        return "not found";
    case K_EFORBIDDEN:
        return "forbidden (403)";
    case K_EUNAUTHORIZED:
        return "unauthorized (401)";
    case K_ETHROTTLED:
        return "too many requests (429)";
    case K_ESERVER:
        return "server error (5xx)";
    case K_EHTTP:
        return "HTTP error";
    case K_ECANCELED:
        return "canceled";
    }
    return "unknown error";
}

int k_result_retryable(int result)
{
    return result == K_EIO || result == K_ETIMEDOUT || result == K_ETHROTTLED ||
           result == K_ESERVER;
}
