/*
 * fuzz_quantity.c - libFuzzer target for the quantity parser (core/model/quantity.c).
 *
 * The input (up to its first NUL) is a quantity string. Besides the sanitizers, the target checks
 * what quantity.h promises: quantity_parse() and quantity_parse_milli() accept the same strings;
 * Value() is MilliValue() / 1000 rounded away from zero unless MilliValue() saturated; a
 * saturated Value() has a saturated MilliValue() of the same sign; and a plain integer of up to
 * 18 digits parses to itself.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/quantity.h"
#include "util/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *s, const char *what, int64_t value, int64_t milli)
{
    fprintf(stderr, "quantity \"%s\": %s (value %lld, milli %lld)\n", s, what, (long long)value,
            (long long)milli);
    abort();
}

/* A plain decimal integer: optional sign, 1 to 18 digits, nothing else. */
static int plain_integer(const char *s)
{
    size_t i = s[0] == '+' || s[0] == '-';
    size_t digits = strspn(s + i, "0123456789");
    return digits > 0 && digits <= 18 && s[i + digits] == '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';

    int64_t value = 0x5a5a, milli = 0x5a5a;
    int rv = quantity_parse(s, &value);
    int rm = quantity_parse_milli(s, &milli);
    if (rv == K_ENOMEM || rm == K_ENOMEM)
        goto out;
    if (rv != rm)
        fail(s, "quantity_parse and quantity_parse_milli disagree on validity", value, milli);
    if (rv != K_OK) {
        if (rv != K_EINVAL)
            fail(s, "unexpected error code", rv, rm);
        if (value != 0x5a5a || milli != 0x5a5a)
            fail(s, "output written on error", value, milli);
        goto out;
    }
    if (milli != INT64_MAX && milli != INT64_MIN) {
        int64_t q = milli / 1000, r = milli % 1000;
        if (r > 0)
            q++;
        if (r < 0)
            q--;
        if (value != q)
            fail(s, "Value() is not MilliValue() / 1000 rounded away from zero", value, milli);
    }
    if (value == INT64_MAX && milli != INT64_MAX)
        fail(s, "Value() saturated but MilliValue() did not", value, milli);
    if (value == INT64_MIN && milli != INT64_MIN)
        fail(s, "Value() saturated but MilliValue() did not", value, milli);
    if (plain_integer(s)) {
        long long want = strtoll(s, NULL, 10);
        if (value != want)
            fail(s, "a plain integer does not parse to itself", value, milli);
        int64_t want_milli;
        if (__builtin_mul_overflow(want, 1000, &want_milli))
            want_milli = want < 0 ? INT64_MIN : INT64_MAX;
        if (milli != want_milli)
            fail(s, "a plain integer's MilliValue() is not 1000 times it", value, milli);
    }
out:
    free(s);
    return 0;
}
