/*
 * toleration_advice.h - the toleration gputri advises for a taint that keeps a pod off the nodes
 * with its GPUs: one wording for the controller's detail (classify.c) and the webhook's warning
 * (webhook/warnings.c).
 *
 * Pure: no I/O, no allocation, no globals; arguments are borrowed and only read, so it is safe to
 * call from several threads.
 */
#ifndef GPUTRI_CLASSIFY_TOLERATION_ADVICE_H
#define GPUTRI_CLASSIFY_TOLERATION_ADVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"

/* Room for any advice: a taint key of at most 317 bytes (prefix/name), a value of 63, an effect and
 * the words. */
#define TOLERATION_ADVICE_MAX 512

/*
 * toleration_advice() - write into `out` (`len` bytes, always NUL-terminated when len > 0,
 * truncated to fit) the narrowest pod toleration that tolerates `taint`, and also every taint
 * with the same key and effect when `any_value` is set (the taints of several nodes whose values
 * differ), as a YAML flow mapping that can be pasted into spec.tolerations:
 *   "{key: K, value: V, effect: E}"          a taint with a value, any_value false: the operator
 *                                            left out is Equal (the API's default, and
 *                                            ToleratesTaint reads "" as Equal), which tolerates
 *                                            that value only;
 *   "{key: K, operator: Exists, effect: E}"  a taint without a value, or any_value: Exists
 *                                            tolerates every value of the key (and an Exists
 *                                            toleration must have no value).
 * The advice is as short as that because the webhook's warnings are bounded (WARN_ITEM_MAX).
 * V is double-quoted when YAML would not read it as a string (a number, a YAML 1.1 boolean or
 * null word). No tolerationSeconds: a NoExecute toleration without it tolerates the taint for
 * ever. kubernetes/api: core/v1/toleration.go Toleration.ToleratesTaint (match.h
 * toleration_tolerates_taint); kubernetes/kubernetes: pkg/apis/core/validation/validation.go
 * ValidateTolerations ("value must be empty when `operator` is 'Exists'"). NULL strings in
 * `taint` are read as "". Returns the length the whole text has (as snprintf).
 */
size_t toleration_advice(char *out, size_t len, const struct taint *taint, bool any_value);

#endif
