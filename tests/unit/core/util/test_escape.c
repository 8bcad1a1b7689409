/* test_escape.c - the one escaping of API text for terminals and JSON (core/util/escape.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/buf.h"
#include "util/escape.h"
#include "util/result.h"
#include "util/utf8.h"

/* s[0..len) escaped both ways (bounded and into a buffer), which must agree; returns the text. */
static const char *esc(const char *s, size_t len, enum text_escape how)
{
    static char out[1024];
    size_t n = text_escape(out, sizeof(out), s, len, how);
    assert_int_equal(n, strlen(out));
    struct buf b;
    buf_init(&b, 4096);
    assert_int_equal(text_escape_buf(&b, s, len, how), K_OK);
    assert_string_equal(buf_cstr(&b), out);
    buf_cleanup(&b);
    return out;
}

#define ESC(lit, how) esc(lit, sizeof(lit) - 1, how)

static void test_terminal(void **state)
{
    (void)state;
    /* C0: ESC (a CSI colour sequence), CR, LF, TAB, NUL; DEL */
    assert_string_equal(ESC("a\x1b[31mb\r\n\t\x00z\x7f", TEXT_ESCAPE_TERMINAL),
                        "a\\x1b[31mb\\x0d\\x0a\\x09\\x00z\\x7f");
    /* C1 in UTF-8: CSI U+009B, OSC U+009D with its string terminator ST U+009C, U+0080, U+009F */
    assert_string_equal(ESC("\xc2\x9b"
                            "2J\xc2\x9d"
                            "0;t\xc2\x9c\xc2\x80\xc2\x9f",
                            TEXT_ESCAPE_TERMINAL),
                        "\\u009b2J\\u009d0;t\\u009c\\u0080\\u009f");
    /* bytes that are not UTF-8: a raw C1 byte, 0xff, an overlong ESC (0xc0 0x9b), a surrogate,
     * a sequence cut short at the end */
    assert_string_equal(ESC("\x9b\xff\xc0\x9b\xed\xa0\x80\xe2\x98", TEXT_ESCAPE_TERMINAL),
                        "\\x9b\\xff\\xc0\\x9b\\xed\\xa0\\x80\\xe2\\x98");
    /* valid multi-byte characters pass: U+00A0 (just past C1), é, ✓, an emoji; '"' and '\' too */
    assert_string_equal(
        ESC("\xc2\xa0\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80\"\\", TEXT_ESCAPE_TERMINAL),
        "\xc2\xa0\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80\"\\");
    assert_string_equal(ESC("", TEXT_ESCAPE_TERMINAL), "");
}

/* Invisible characters that move text on the screen, in every form: U+202E (RLO) makes a bidi
 * terminal show the rest of a row reversed, so "\u202e" + "detsuahxe" reads as another cause;
 * U+2028 and U+2029 end a line for Unicode and JavaScript readers. */
static void test_bidi_and_separators(void **state)
{
    (void)state;
    const char in[] = "a\xe2\x80\xae"
                      "b\xe2\x80\xa8"
                      "c\xe2\x80\xa9"
                      "d\xd8\x9c\xe2\x80\x8e\xe2\x80\x8f\xe2\x80\xaa\xe2\x81\xa6\xe2\x81\xa9"
                      "e";
    const char *want = "a\\u202eb\\u2028c\\u2029d\\u061c\\u200e\\u200f\\u202a\\u2066\\u2069e";
    assert_string_equal(esc(in, sizeof(in) - 1, TEXT_ESCAPE_TERMINAL), want);
    assert_string_equal(esc(in, sizeof(in) - 1, TEXT_ESCAPE_QUOTED), want);
    assert_false(text_is_plain(in, sizeof(in) - 1));
    /* JSON too, where a reader's terminal shows the text as well; read back they are the same */
    assert_string_equal(ESC("a\xe2\x80\xa8"
                            "b\xe2\x80\xae",
                            TEXT_ESCAPE_JSON_STRING),
                        "a\\u2028b\\u202e");
    assert_string_equal(ESC("\"a\xe2\x80\xa9\xe2\x81\xa6\"", TEXT_ESCAPE_JSON_TEXT),
                        "\"a\\u2029\\u2066\"");
    assert_true(text_moves_display(in, sizeof(in) - 1));
    assert_true(text_moves_display("\xff\xe2\x80\xae", 4));
    assert_false(text_moves_display("caf\xc3\xa9\xff\x1b", 7));
    /* neighbours pass: U+2027, U+202F, U+2065, U+206A, U+200D (ZWJ of emoji sequences) */
    assert_true(text_is_plain("\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa\xe2\x80\x8d", 15));
}

static void test_json_string(void **state)
{
    (void)state;
    assert_string_equal(
        ESC("a\"b\\c\n\x1b\x7f\xc2\x9b\xc2\x9d\xff\xc3\xa9", TEXT_ESCAPE_JSON_STRING),
        "a\\\"b\\\\c\\u000a\\u001b\\u007f\\u009b\\u009d\\ufffd\xc3\xa9");
    /* each byte of a bad sequence is one U+FFFD, as Go's encoding/json writes it */
    assert_string_equal(ESC("\xe2\x98", TEXT_ESCAPE_JSON_STRING), "\\ufffd\\ufffd");
}

static void test_json_text(void **state)
{
    (void)state;
    /* what json-c writes for {"d": "<ESC>x<DEL><CSI>\xffé\""}, pretty-printed, with a raw CR it
     * never writes: its own escapes and the layout (LF, TAB) are kept, the rest escaped */
    assert_string_equal(
        ESC("{\n\t\"d\":\"\\u001bx\r\x7f\xc2\x9b\xff\xc3\xa9\\\"\"\n}", TEXT_ESCAPE_JSON_TEXT),
        "{\n\t\"d\":\"\\u001bx\\u000d\\u007f\\u009b\\ufffd\xc3\xa9\\\"\"\n}");
}

/* The bounded form stops before an escape or a character that does not fit whole. */
static void test_bounded(void **state)
{
    (void)state;
    char out[8];
    /* "ab" + "\x1b" (4) would need 7 bytes with the NUL: fits in 8 */
    assert_int_equal(text_escape(out, sizeof(out),
                                 "ab\x1b"
                                 "cd",
                                 5, TEXT_ESCAPE_TERMINAL),
                     7);
    assert_string_equal(out, "ab\\x1bc");
    assert_int_equal(text_escape(out, 6,
                                 "ab\x1b"
                                 "cd",
                                 5, TEXT_ESCAPE_TERMINAL),
                     2);
    assert_string_equal(out, "ab");
    /* a multi-byte character is not cut */
    assert_int_equal(text_escape(out, 4, "ab\xe2\x9c\x93", 5, TEXT_ESCAPE_TERMINAL), 2);
    assert_string_equal(out, "ab");
    assert_int_equal(text_escape(out, 1, "abc", 3, TEXT_ESCAPE_TERMINAL), 0);
    assert_string_equal(out, "");
}

static void test_is_plain(void **state)
{
    (void)state;
    assert_true(text_is_plain("", 0));
    assert_true(text_is_plain("caf\xc3\xa9 \"\\", 8));
    assert_false(text_is_plain("a\tb", 3));
    assert_false(text_is_plain("a\x7f", 2));
    assert_false(text_is_plain("a\xc2\x9b", 3));
    assert_false(text_is_plain("a\xff", 2));
    assert_false(text_is_plain("a\xc3", 2)); /* cut short */
}

/* A buffer at its limit keeps a prefix and says so. */
static void test_buf_limit(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 4);
    assert_int_equal(text_escape_buf(&b, "ab\x1b", 3, TEXT_ESCAPE_TERMINAL), K_ETOOBIG);
    assert_string_equal(buf_cstr(&b), "ab");
    buf_cleanup(&b);
}

/*
 * Every byte string of up to 3 bytes over an alphabet of the interesting bytes: the result holds
 * no C0 but the LF and TAB JSON_TEXT keeps, no DEL, no C1, is valid UTF-8, fits the stated
 * bound and is the same cut or not.
 */
static void test_exhaustive_short(void **state)
{
    (void)state;
    static const unsigned char alphabet[] = {0x00, 0x09, 0x0a, 0x1b, 0x20, 'a',  '"',
                                             '\\', 0x7f, 0x80, 0x9b, 0xa9, 0xbf, 0xc0,
                                             0xc2, 0xc3, 0xe2, 0xed, 0xf0, 0xf4, 0xff};
    const size_t na = sizeof(alphabet);
    for (int how = TEXT_ESCAPE_TERMINAL; how <= TEXT_ESCAPE_JSON_TEXT; how++)
        for (size_t len = 0; len <= 3; len++) {
            size_t total = 1;
            for (size_t i = 0; i < len; i++)
                total *= na;
            for (size_t k = 0; k < total; k++) {
                char in[3];
                size_t v = k;
                for (size_t i = 0; i < len; i++, v /= na)
                    in[i] = (char)alphabet[v % na];
                char out[3 * TEXT_ESCAPE_MAX + 1];
                size_t n = text_escape(out, sizeof(out), in, len, (enum text_escape)how);
                struct utf8_stream st;
                utf8_stream_init(&st);
                assert_int_equal(utf8_stream_valid_prefix(&st, out, n), n);
                assert_true(utf8_stream_complete(&st));
                for (size_t i = 0; i < n; i++) {
                    unsigned char c = (unsigned char)out[i];
                    assert_true(c != 0x7f);
                    assert_true(c >= 0x20 ||
                                (how == TEXT_ESCAPE_JSON_TEXT && (c == '\n' || c == '\t')));
                    if (c == 0xc2)
                        assert_true((unsigned char)out[i + 1] >= 0xa0);
                }
                /* nothing was cut: the whole input was taken */
                struct buf b;
                buf_init(&b, 1024);
                assert_int_equal(text_escape_buf(&b, in, len, (enum text_escape)how), K_OK);
                assert_int_equal(b.len, n);
                buf_cleanup(&b);
            }
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_terminal),    cmocka_unit_test(test_bidi_and_separators),
        cmocka_unit_test(test_json_string), cmocka_unit_test(test_json_text),
        cmocka_unit_test(test_bounded),     cmocka_unit_test(test_buf_limit),
        cmocka_unit_test(test_is_plain),    cmocka_unit_test(test_exhaustive_short),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
