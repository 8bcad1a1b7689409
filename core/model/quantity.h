/*
 * quantity.h - parse Kubernetes resource quantities ("1", "500m", "2Gi", "1e3", "0.5").
 *
 * Grammar and rounding from kubernetes/apimachinery: pkg/api/resource/quantity.go:
 *   <quantity> ::= <signedNumber><suffix>; suffix is a binary SI suffix (Ki Mi Gi Ti Pi Ei), a
 *   decimal SI suffix (n u m "" k M G T P E) or a decimal exponent (e3, E-2).
 * Pure functions, thread-safe.
 */
#ifndef GPUTRI_QUANTITY_H
#define GPUTRI_QUANTITY_H

#include <stdint.h>

/*
 * quantity_parse() - the quantity's Value(): rounded up to a whole unit (away from zero for
 * negatives, as Quantity.Value does), clamped to INT64 range. Exact decimal arithmetic, no
 * floating point. Returns K_OK, K_EINVAL for text that is not a quantity (NULL, empty, bad
 * suffix, junk, more than one sign, no digits), or K_ENOMEM (a scratch buffer the size of the
 * input is allocated and freed). `*value` is written only on K_OK.
 */
int quantity_parse(const char *s, int64_t *value);

/* quantity_parse_milli() - MilliValue(): value * 1000, rounded up. Same errors. */
int quantity_parse_milli(const char *s, int64_t *milli);

/* quantity_milli_to_value() - Value() of a milli amount: rounded up, away from zero. */
int64_t quantity_milli_to_value(int64_t milli);

#endif
