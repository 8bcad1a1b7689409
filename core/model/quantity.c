/*
 * quantity.c - Kubernetes resource quantities, parsed exactly.
 *
 * The scanner follows kubernetes/apimachinery: pkg/api/resource/quantity.go parseQuantityString
 * and ParseQuantity; the rounding follows Quantity.Value/MilliValue (int64Amount.AsScaledInt64:
 * any fraction rounds away from zero). The arithmetic is done on decimal digit strings, never in
 * floating point, so "0.1" is exactly a tenth and "1e-30" is a tiny positive number, not zero.
 *
 * Deliberate differences from upstream, all on inputs the API server never emits:
 *   - text without any digit ("+", "-", ".", "-.Mi") is rejected; upstream reads it as 0;
 *   - values beyond the int64 range saturate for every suffix (upstream caps only BinarySI and
 *     lets big decimal values wrap in Value());
 *   - exponents beyond +-2^40 saturate instead of being truncated to int32.
 */
#include "quantity.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/result.h"

#define EXP_LIMIT ((int64_t)1 << 40)

/* The pieces of a quantity: [sign] num [. den] suffix. */
struct qparts {
    bool negative;
    const char *num;
    size_t num_len;
    const char *den;
    size_t den_len;
    int64_t exp10; /* decimal exponent from the suffix */
    unsigned exp2; /* binary exponent from the suffix (Ki = 10 ... Ei = 60) */
};

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* strconv.ParseInt(s, 10, 64) on s[0..len): optional sign, at least one digit, no overflow. */
static bool parse_int64(const char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < len && (s[i] == '+' || s[i] == '-')) {
        neg = s[i] == '-';
        i++;
    }
    if (i == len)
        return false;
    uint64_t v = 0;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < len; i++) {
        if (!is_digit(s[i]))
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (limit - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (neg)
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    else
        *out = (int64_t)v;
    return true;
}

/* quantitySuffixer.interpret: decimal SI, binary SI, then a decimal exponent. */
static bool interpret_suffix(const char *s, size_t len, struct qparts *q)
{
    static const struct {
        const char *text;
        int exp10;
        unsigned exp2;
    } table[] = {
        {"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
        {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
        {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (strlen(table[i].text) == len && memcmp(table[i].text, s, len) == 0) {
            q->exp10 = table[i].exp10;
            q->exp2 = table[i].exp2;
            return true;
        }
    }
    if (len > 1 && (s[0] == 'e' || s[0] == 'E')) {
        int64_t e;
        if (!parse_int64(s + 1, len - 1, &e))
            return false;
        if (e > EXP_LIMIT)
            e = EXP_LIMIT;
        if (e < -EXP_LIMIT)
            e = -EXP_LIMIT;
        q->exp10 = e;
        q->exp2 = 0;
        return true;
    }
    return false;
}

/* parseQuantityString + suffix interpretation. */
static int split_quantity(const char *s, struct qparts *q)
{
    memset(q, 0, sizeof(*q));
    if (!s || !*s)
        return K_EINVAL;
    size_t pos = 0;
    if (s[pos] == '+' || s[pos] == '-') {
        q->negative = s[pos] == '-';
        pos++;
    }
    q->num = s + pos;
    while (is_digit(s[pos]))
        pos++;
    q->num_len = (size_t)(s + pos - q->num);
    if (s[pos] == '.') {
        pos++;
        q->den = s + pos;
        while (is_digit(s[pos]))
            pos++;
        q->den_len = (size_t)(s + pos - q->den);
    }
    if (q->num_len + q->den_len == 0)
        return K_EINVAL;
    size_t suffix_start = pos;
    while (s[pos] && strchr("eEinumkKMGTP", s[pos]))
        pos++;
    if (s[pos] == '+' || s[pos] == '-')
        pos++;
    while (is_digit(s[pos]))
        pos++;
    if (s[pos] != '\0')
        return K_EINVAL;
    if (!interpret_suffix(s + suffix_start, pos - suffix_start, q))
        return K_EINVAL;
    return K_OK;
}

static int64_t saturate(bool negative)
{
    return negative ? INT64_MIN : INT64_MAX;
}

/*
 * The quantity times 10^extra, rounded away from zero to an integer and saturated to int64.
 * Works on the significant digits: value = digits * 2^exp2 * 10^exp.
 */
static int scaled_value(const struct qparts *q, int extra, int64_t *out)
{
    size_t cap = q->num_len + q->den_len + 24; /* 2^60 adds at most 19 digits */
    unsigned char *d = malloc(cap);
    if (!d)
        return K_ENOMEM;
    /* digits stored most significant first, right-aligned in d[start..cap) */
    size_t n = 0;
    for (size_t i = 0; i < q->num_len; i++)
        d[n++] = (unsigned char)(q->num[i] - '0');
    for (size_t i = 0; i < q->den_len; i++)
        d[n++] = (unsigned char)(q->den[i] - '0');
    int64_t exp = q->exp10 - (int64_t)q->den_len + extra;

    /* move the digits to the right end so multiplication can grow to the left */
    size_t start = cap - n;
    memmove(d + start, d, n);

    /* skip leading zeros */
    while (start < cap && d[start] == 0)
        start++;
    if (start == cap) {
        free(d);
        *out = 0;
        return K_OK;
    }

    if (q->exp2) {
        unsigned __int128 mul = (unsigned __int128)1 << q->exp2;
        unsigned __int128 carry = 0;
        for (size_t i = cap; i-- > start;) {
            unsigned __int128 v = (unsigned __int128)d[i] * mul + carry;
            d[i] = (unsigned char)(v % 10);
            carry = v / 10;
        }
        while (carry) {
            d[--start] = (unsigned char)(carry % 10);
            carry /= 10;
        }
    }

    size_t len = cap - start;
    int64_t int_digits = (int64_t)len + exp; /* digits before the decimal point */
    unsigned __int128 mag = 0;
    bool fraction = false;
    bool overflow = false;
    if (int_digits > 20) {
        overflow = true;
    } else {
        for (int64_t i = 0; i < int_digits; i++) {
            unsigned digit = i < (int64_t)len ? d[start + (size_t)i] : 0;
            mag = mag * 10 + digit;
        }
        for (int64_t i = int_digits < 0 ? 0 : int_digits; i < (int64_t)len; i++) {
            if (d[start + (size_t)i]) {
                fraction = true;
                break;
            }
        }
        if (fraction)
            mag++;
    }
    free(d);

    if (overflow) {
        *out = saturate(q->negative);
    } else if (q->negative) {
        *out = mag > (unsigned __int128)INT64_MAX ? INT64_MIN : -(int64_t)mag;
    } else {
        *out = mag > INT64_MAX ? INT64_MAX : (int64_t)mag;
    }
    return K_OK;
}

int quantity_parse(const char *s, int64_t *value)
{
    struct qparts q;
    int rc = split_quantity(s, &q);
    if (rc != K_OK)
        return rc;
    return scaled_value(&q, 0, value);
}

int quantity_parse_milli(const char *s, int64_t *milli)
{
    struct qparts q;
    int rc = split_quantity(s, &q);
    if (rc != K_OK)
        return rc;
    return scaled_value(&q, 3, milli);
}

int64_t quantity_milli_to_value(int64_t milli)
{
    int64_t v = milli / 1000;
    if (milli % 1000 > 0)
        v++;
    else if (milli % 1000 < 0)
        v--;
    return v;
}
