/*
 * duration.h - a duration as kubectl prints an AGE: "45s", "3m20s", "47m", "5h12m", "3d4h",
 * "400d", "2y30d" (kubernetes/kubernetes: staging/src/k8s.io/apimachinery/pkg/util/duration/
 * duration.go HumanDuration).
 */
#ifndef GPUTRI_DURATION_H
#define GPUTRI_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Room for duration_human()'s text with the terminator. */
#define DURATION_HUMAN_MAX 24

/*
 * duration_human() - `seconds` as HumanDuration writes it, into out (len bytes, always
 * NUL-terminated; DURATION_HUMAN_MAX is enough): below -1 "<invalid>", -1 "0s" (clock skew
 * between hosts); then the unit changes at 2 minutes, 3 hours, 2 days and 2 years, with the
 * next smaller unit kept below 10 minutes, 8 hours, 8 days and 8 years. Pure, thread-safe.
 */
void duration_human(int64_t seconds, char *out, size_t len);

#endif
