/*
 * escape.h - text from the API made safe for a terminal: the one escaping every printer uses
 * (the log, the CLI's and the plugin's tables, explain, -o json, gputri-certs).
 *
 * An annotation, a condition message, a CEL expression or a Status message can carry bytes a
 * terminal acts on: C0 controls (U+0000..U+001F: ESC starts a sequence, CR and LF forge lines),
 * DEL (U+007F) and the C1 controls (U+0080..U+009F; U+009B is a one-character CSI, U+009D an
 * OSC, which many terminals honour in their UTF-8 form 0xC2 0x9B). Bytes that are not valid
 * UTF-8 (utf8_decode(): overlong forms, surrogates, stray continuation bytes, truncated
 * sequences) are escaped too, so that no terminal decodes them into a control of its own.
 * So are, in every form as "\uNNNN", the characters that move text on the screen without
 * showing: the bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A..U+202E,
 * U+2066..U+2069: an invisible U+202E makes a bidi terminal show the rest of a row reversed) and
 * the line and paragraph separators U+2028 and U+2029 (Go's strconv.Quote escapes them all, its
 * encoding/json the separators; kubectl's -o json leaves the bidi characters as they are).
 * Everything else, multi-byte characters included, passes through as it is.
 *
 * The forms are Go's (strconv.Quote for text, encoding/json for JSON), which is how kubectl and
 * klog write such text, with one difference: in text, C0 and DEL are always "\xNN" (no "\n" or
 * "\t" short forms), so every escape of a control byte looks alike. kubectl's own table printer
 * escapes only ESC and CR (k8s.io/cli-runtime: pkg/printers/terminal.go EscapeTerminal); this is
 * stricter. The text form is for reading, not reversible: a backslash is not escaped.
 */
#ifndef GPUTRI_ESCAPE_H
#define GPUTRI_ESCAPE_H

#include <stddef.h>

#include "buf.h"

enum text_escape {
    /*
     * Text for a terminal: C0 and DEL as "\xNN" (ESC is "\x1b"), a C1 control as its code point
     * "\u0080".."\u009f" (CSI is "\u009b"), each byte of an invalid sequence as "\xNN", the
     * characters that move text (above) as "\uNNNN".
     */
    TEXT_ESCAPE_TERMINAL,
    /*
     * The inside of a quoted string as Go's strconv.Quote writes it, which klog uses for a
     * structured line's message and string values (util/log.h): as TEXT_ESCAPE_TERMINAL, and '"'
     * and '\' as "\"" and "\\", so the text cannot end its quotes.
     */
    TEXT_ESCAPE_QUOTED,
    /*
     * The inside of a JSON string (RFC 8259 section 7): '"' and '\' as "\"" and "\\", C0, DEL
     * and C1 as "\u00NN", the characters that move text (above) as "\uNNNN", each byte of an
     * invalid sequence as "\ufffd" (what Go's encoding/json writes for it; a JSON text must be
     * UTF-8).
     */
    TEXT_ESCAPE_JSON_STRING,
    /*
     * A whole JSON text a serializer wrote (json-c escapes '"', '\' and C0 inside strings but
     * passes DEL, C1 and invalid bytes through): as TEXT_ESCAPE_JSON_STRING but '"', '\', LF and
     * TAB are kept, as they are the text's structure and layout or already escaped. Correct
     * because a byte >= 0x7f can only stand inside a string; a raw C0 other than LF and TAB
     * (never written by json-c) becomes "\u00NN", which keeps a string valid.
     */
    TEXT_ESCAPE_JSON_TEXT,
};

/* The longest escape one input byte (or a two-byte C1 character) becomes: "\ufffd". */
#define TEXT_ESCAPE_MAX 6

/*
 * text_escape() - write s[0..len) escaped as `how` says into out[0..cap), NUL-terminated (cap
 * >= 1). Stops before the first escape or character that does not fit whole, so the result is
 * never cut inside an escape or a multi-byte character; text of len bytes always fits in
 * len * TEXT_ESCAPE_MAX + 1. Returns the length written (without the NUL). A NUL inside s[0..len)
 * is a C0 control ("\x00"). Pure; thread-safe.
 */
size_t text_escape(char *out, size_t cap, const char *s, size_t len, enum text_escape how);

/*
 * text_escape_buf() - append s[0..len) escaped as `how` says to `out`. Returns K_OK, or
 * K_ENOMEM / K_ETOOBIG (the buffer's limit) with `out` holding a prefix of the result. Pure but
 * for `out`.
 */
int text_escape_buf(struct buf *out, const char *s, size_t len, enum text_escape how);

/*
 * text_moves_display() - non-zero when s[0..len) holds a character that moves text on the screen
 * without showing (above): for printers that hand valid UTF-8 to a serializer that would write
 * those as they are (libyaml). Bytes that are not UTF-8 are skipped. Pure; thread-safe.
 */
int text_moves_display(const char *s, size_t len);

/*
 * text_is_plain() - non-zero when text_escape() with TEXT_ESCAPE_TERMINAL would leave s[0..len)
 * as it is: valid UTF-8 with no C0, DEL or C1 control. For text that cannot be shown escaped (a
 * completion candidate is typed back as it is printed). Pure; thread-safe.
 */
int text_is_plain(const char *s, size_t len);

#endif
