/* escape.c - the one escaping of API text for terminals, logs and JSON output. */
#include "escape.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "result.h"
#include "utf8.h"

/* The characters that move text on the screen without showing: the Unicode bidirectional
 * formatting characters (UAX #9 table 1: ALM, LRM, RLM, LRE..RLO, LRI..PDI; an invisible RLO
 * makes a bidi terminal show the rest of a row reversed, so a cell can show another cell's text
 * in its place), and the line and paragraph separators (a line end for Unicode and JavaScript
 * readers). Go's strconv.Quote escapes all of them, its encoding/json the separators. */
static bool moves_display(unsigned cp)
{
    return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

/*
 * The next piece of s[0..len) (len >= 1): sets *used to the bytes it takes and returns the
 * length of its escape, written NUL-terminated into esc[TEXT_ESCAPE_MAX + 1], or 0 when those
 * bytes are to be copied as they are.
 */
static size_t next_piece(const unsigned char *s, size_t len, enum text_escape how,
                         char esc[TEXT_ESCAPE_MAX + 1], size_t *used)
{
    bool json = how == TEXT_ESCAPE_JSON_STRING || how == TEXT_ESCAPE_JSON_TEXT;
    unsigned cp;
    size_t n = utf8_decode(s, len, &cp);
    *used = n ? n : 1;
    if (n == 0) /* invalid: this byte alone; the next may start a valid sequence */
        return (size_t)snprintf(esc, TEXT_ESCAPE_MAX + 1, json ? "\\ufffd" : "\\x%02x", s[0]);
    if (cp < 0x20) {
        if (how == TEXT_ESCAPE_JSON_TEXT && (cp == '\n' || cp == '\t'))
            return 0; /* a pretty-printer's layout; inside strings these are already escaped */
        return (size_t)snprintf(esc, TEXT_ESCAPE_MAX + 1, json ? "\\u%04x" : "\\x%02x", cp);
    }
    if (cp == 0x7f)
        return (size_t)snprintf(esc, TEXT_ESCAPE_MAX + 1, json ? "\\u%04x" : "\\x%02x", cp);
    if (cp >= 0x80 && cp <= 0x9f)
        return (size_t)snprintf(esc, TEXT_ESCAPE_MAX + 1, "\\u%04x", cp);
    if (moves_display(cp))
        return (size_t)snprintf(esc, TEXT_ESCAPE_MAX + 1, "\\u%04x", cp);
    if ((how == TEXT_ESCAPE_JSON_STRING || how == TEXT_ESCAPE_QUOTED) && (cp == '"' || cp == '\\'))
        return (size_t)snprintf(esc, TEXT_ESCAPE_MAX + 1, "\\%c", (char)cp);
    return 0;
}

size_t text_escape(char *out, size_t cap, const char *s, size_t len, enum text_escape how)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t w = 0;
    char esc[TEXT_ESCAPE_MAX + 1];
    while (len > 0) {
        size_t used, n = next_piece(p, len, how, esc, &used);
        const void *from = n ? (const void *)esc : (const void *)p;
        if (!n)
            n = used;
        if (w + n + 1 > cap)
            break;
        memcpy(out + w, from, n);
        w += n;
        p += used;
        len -= used;
    }
    if (cap)
        out[w] = '\0';
    return w;
}

int text_escape_buf(struct buf *out, const char *s, size_t len, enum text_escape how)
{
    const unsigned char *p = (const unsigned char *)s, *run = p; /* run: bytes kept, not yet out */
    char esc[TEXT_ESCAPE_MAX + 1];
    int rc = buf_append(out, "", 0);
    while (len > 0 && rc == K_OK) {
        size_t used, n = next_piece(p, len, how, esc, &used);
        if (n) {
            rc = buf_append(out, run, (size_t)(p - run));
            if (rc == K_OK)
                rc = buf_append(out, esc, n);
            run = p + used;
        }
        p += used;
        len -= used;
    }
    if (rc == K_OK)
        rc = buf_append(out, run, (size_t)(p - run));
    return rc;
}

int text_moves_display(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    while (len > 0) {
        unsigned cp;
        size_t n = utf8_decode(p, len, &cp);
        if (n && moves_display(cp))
            return 1;
        n = n ? n : 1;
        p += n;
        len -= n;
    }
    return 0;
}

int text_is_plain(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    char esc[TEXT_ESCAPE_MAX + 1];
    while (len > 0) {
        size_t used;
        if (next_piece(p, len, TEXT_ESCAPE_TERMINAL, esc, &used))
            return 0;
        p += used;
        len -= used;
    }
    return 1;
}
