/*
 * explain.h - the CLI's explain report (cli/triage.h triage_print_explain) as a string, for the
 * tests that read it (tests/unit/cli/test_triage.c).
 */
#ifndef GPUTRI_TEST_EXPLAIN_H
#define GPUTRI_TEST_EXPLAIN_H

#include "triage.h"

/*
 * test_explain_text() - what triage_print_explain(t) writes, NUL-terminated, owned by the caller
 * (free()). Fails the test (cmocka) when the report cannot be written.
 */
char *test_explain_text(const struct triage *t);

#endif
