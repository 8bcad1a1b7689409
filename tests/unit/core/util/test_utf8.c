/* test_utf8.c - strict UTF-8 decoding and the piecewise stream check (core/util/utf8.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/utf8.h"

static size_t dec(const char *s, size_t avail, unsigned *cp)
{
    return utf8_decode((const unsigned char *)s, avail, cp);
}

static void test_decode_valid(void **state)
{
    (void)state;
    unsigned cp = 0;
    assert_int_equal(dec("A", 1, &cp), 1);
    assert_int_equal(cp, 'A');
    assert_int_equal(dec("\x7f", 1, &cp), 1);
    assert_int_equal(dec("\xc2\x80", 2, &cp), 2); /* the smallest two-byte form */
    assert_int_equal(cp, 0x80);
    assert_int_equal(dec("\xc3\xa9x", 3, &cp), 2); /* é, then stops */
    assert_int_equal(cp, 0xe9);
    assert_int_equal(dec("\xe0\xa0\x80", 3, &cp), 3);
    assert_int_equal(cp, 0x800);
    assert_int_equal(dec("\xe2\x98\x83", 3, &cp), 3); /* snowman */
    assert_int_equal(cp, 0x2603);
    assert_int_equal(dec("\xed\x9f\xbf", 3, &cp), 3); /* just below the surrogates */
    assert_int_equal(cp, 0xd7ff);
    assert_int_equal(dec("\xef\xbf\xbf", 3, &cp), 3);
    assert_int_equal(cp, 0xffff);
    assert_int_equal(dec("\xf0\x90\x80\x80", 4, &cp), 4);
    assert_int_equal(cp, 0x10000);
    assert_int_equal(dec("\xf4\x8f\xbf\xbf", 4, &cp), 4);
    assert_int_equal(cp, 0x10ffff);
}

/* Each refusal leaves *cp_out as it was. */
static void test_decode_invalid(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        size_t n;
    } bad[] = {
        {"\x80", 1},             /* stray continuation */
        {"\xbf", 1},             /* stray continuation */
        {"\xc0\x80", 2},         /* overlong NUL */
        {"\xc1\xbf", 2},         /* overlong */
        {"\xe0\x9f\xbf", 3},     /* overlong below U+0800 */
        {"\xed\xa0\x80", 3},     /* U+D800 */
        {"\xed\xbf\xbf", 3},     /* U+DFFF */
        {"\xf0\x8f\xbf\xbf", 4}, /* overlong below U+10000 */
        {"\xf4\x90\x80\x80", 4}, /* U+110000 */
        {"\xf5\x80\x80\x80", 4}, /* lead byte above F4 */
        {"\xff", 1},
        {"\xc3\x28", 2},         /* second byte not a continuation */
        {"\xe2\x98\x28", 3},     /* third byte not a continuation */
        {"\xc3\xa9", 1},         /* truncated by avail */
        {"\xe2\x98\x83", 2},     /* truncated by avail */
        {"\xf0\x90\x80\x80", 3}, /* truncated by avail */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        unsigned cp = 12345;
        assert_int_equal(dec(bad[i].s, bad[i].n, &cp), 0);
        assert_int_equal(cp, 12345);
    }
}

static size_t stream_once(const char *s, size_t n, int *complete)
{
    struct utf8_stream st;
    utf8_stream_init(&st);
    size_t ok = utf8_stream_valid_prefix(&st, s, n);
    *complete = utf8_stream_complete(&st);
    return ok;
}

static void test_stream(void **state)
{
    (void)state;
    int complete;
    const char *text = "caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80";
    assert_int_equal(stream_once(text, strlen(text), &complete), strlen(text));
    assert_true(complete);
    /* ends inside a sequence: every byte counted, but not complete */
    assert_int_equal(stream_once("ab\xe2\x98", 4, &complete), 4);
    assert_false(complete);
    /* the first bad byte is named */
    assert_int_equal(stream_once("ab\xc0\x80", 4, &complete), 2);
    assert_int_equal(stream_once("ab\xed\xa0\x80", 5, &complete), 3); /* surrogate: at A0 */
    assert_int_equal(stream_once("\xe0\x9f\xbf", 3, &complete), 1);   /* overlong */
    assert_int_equal(stream_once("\xf4\x90\x80\x80", 4, &complete), 1);
    assert_int_equal(stream_once("\xf0\x8f\xbf\xbf", 4, &complete), 1);
    assert_int_equal(stream_once("a\x80", 2, &complete), 1);
    /* NUL ends JSON text for json-c: refused */
    assert_int_equal(stream_once("ab\0cd", 5, &complete), 2);
    /* a zero-initialised state is the initial state */
    struct utf8_stream z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(utf8_stream_valid_prefix(&z, "\xc3\xa9", 2), 2);
    assert_true(utf8_stream_complete(&z));
}

/*
 * Every sequence of up to three bytes drawn from the interesting ones: the stream accepts it
 * whole exactly when repeated utf8_decode() does (and it has no NUL), and it gives the same
 * answer for every cut of it into two pieces.
 */
static void test_stream_agrees_with_decode(void **state)
{
    (void)state;
    static const unsigned char bytes[] = {0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f,
                                          0xa0, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xe1,
                                          0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff};
    const size_t nb = sizeof(bytes);
    char s[4];
    for (size_t len = 1; len <= 3; len++) {
        size_t total = 1;
        for (size_t k = 0; k < len; k++)
            total *= nb;
        for (size_t idx = 0; idx < total; idx++) {
            size_t x = idx;
            for (size_t k = 0; k < len; k++, x /= nb)
                s[k] = (char)bytes[x % nb];
            /* decode's verdict: whole sequences, no NUL */
            size_t pos = 0;
            int valid = 1;
            while (pos < len) {
                unsigned cp;
                size_t n = dec(s + pos, len - pos, &cp);
                if (n == 0 || cp == 0) {
                    valid = 0;
                    break;
                }
                pos += n;
            }
            /* the stream's verdict, whole and in two pieces */
            for (size_t cut = 0; cut <= len; cut++) {
                struct utf8_stream st;
                utf8_stream_init(&st);
                size_t a = utf8_stream_valid_prefix(&st, s, cut);
                int ok = a == cut;
                if (ok)
                    ok = utf8_stream_valid_prefix(&st, s + cut, len - cut) == len - cut;
                int stream_valid = ok && utf8_stream_complete(&st);
                if (stream_valid != valid)
                    fail_msg("bytes %02x %02x %02x (len %zu, cut %zu): stream %d, decode %d",
                             (unsigned char)s[0], len > 1 ? (unsigned char)s[1] : 0,
                             len > 2 ? (unsigned char)s[2] : 0, len, cut, stream_valid, valid);
            }
        }
    }
}

/* utf8_copy: whole characters, '?' for invalid bytes, cut before what does not fit. */
static void test_copy(void **state)
{
    (void)state;
    char out[8];
    assert_true(utf8_copy(out, sizeof(out), "abc", 3));
    assert_string_equal(out, "abc");
    assert_true(utf8_copy(out, sizeof(out), "abcdef", 2)); /* len bounds the read */
    assert_string_equal(out, "ab");
    assert_true(utf8_copy(out, sizeof(out), "a\0bc", 4)); /* and a NUL */
    assert_string_equal(out, "a");
    assert_true(utf8_copy(out, sizeof(out), "\xff\xc3(\xe2\x82", 5));
    assert_string_equal(out, "\?\?(\?\?");
    assert_true(utf8_copy(out, sizeof(out), "1234567", 7));
    assert_false(utf8_copy(out, sizeof(out), "12345678", 8));
    assert_string_equal(out, "1234567");
    /* "\xe2\x82\xac" (3 bytes) does not fit after 5 bytes: cut before it */
    assert_false(utf8_copy(out, sizeof(out), "12345\xe2\x82\xac", 8));
    assert_string_equal(out, "12345");
    assert_false(utf8_copy(out, 1, "x", 1));
    assert_string_equal(out, "");
    assert_true(utf8_copy(out, 1, "", 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_valid), cmocka_unit_test(test_decode_invalid),
        cmocka_unit_test(test_stream),       cmocka_unit_test(test_stream_agrees_with_decode),
        cmocka_unit_test(test_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
