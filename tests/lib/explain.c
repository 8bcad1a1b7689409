/* explain.c - the explain report as a string for unit tests. */
#include "explain.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "util/result.h"

char *test_explain_text(const struct triage *t)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(triage_print_explain(t, f), K_OK);
    assert_int_equal(fclose(f), 0);
    return text;
}
