/*
 * cel.c - a parser, checker and evaluator for the CEL subset of DRA device selectors.
 *
 * The grammar is cel-spec's CEL.g4 (google/cel-spec: doc/langdef.md); the parser is a recursive
 * descent over it whose recursion is bounded by CEL_MAX_DEPTH. Semantic actions resolve the
 * `device` paths while parsing, so the compiled tree holds only typed nodes. Upstream sources
 * for every rule are named in cel.h.
 */
#include "cel.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/quantity.h"
#include "util/clock.h"
#include "util/errbuf.h"
#include "util/result.h"
#include "util/strconv.h"

enum op {
    OP_BOOL,
    OP_INT,
    OP_STR,
    OP_QTY,
    OP_SEMVER, /* sub = 1: the literal is not a semantic version (runtime error) */
    OP_DRIVER,
    OP_ATTR,
    OP_CAP,
    OP_HAS_DOMAIN,
    OP_HAS_KEY,
    OP_NOT,
    OP_AND,
    OP_OR,
    OP_CMP,
    OP_IN_LIST,
    OP_LIST,
    OP_METHOD,
    /* parse-time only: never evaluated */
    OP_PATH_DEVICE,
    OP_PATH_MAP,
    OP_PATH_DOMAIN,
};

enum ty { TY_BOOL, TY_INT, TY_STR, TY_QTY, TY_SEMVER, TY_DYN, TY_LIST, TY_PATH };
enum cmp { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE };
enum method { M_COMPARE_TO, M_IS_GREATER, M_IS_LESS, M_STARTS, M_ENDS, M_CONTAINS };
enum mapkind { MAP_ATTR, MAP_CAP };

static const char *const ty_names[] = {"bool",    "int", "string", "quantity",
                                       "version", "dyn", "list",   "map"};

struct node {
    uint8_t op, ty, sub, depth;
    uint8_t kind;     /* enum mapkind for paths, attributes, capacities, has */
    uint8_t selected; /* built by `.name` (has() needs a field selection) */
    uint32_t off;     /* byte offset in the source */
    int32_t a, b;     /* children; for AND/OR/LIST a is the first child */
    int32_t next;     /* next sibling in AND/OR/LIST */
    int64_t i;
    uint32_t s1, l1; /* string literal, or domain */
    uint32_t s2, l2; /* attribute / capacity name */
};

struct cel_program {
    struct node *nodes;
    size_t n, cap;
    char *pool;
    size_t plen, pcap;
    char *source;
    int32_t root;
};

/* ---- semantic versions (github.com/blang/semver/v4 Parse and Compare) ---- */

struct semver {
    uint64_t major, minor, patch;
    const char *pre; /* dot-separated pre-release identifiers, or NULL */
    size_t prelen;
};

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_alnum_hyphen(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

static bool all_digits(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!is_digit(s[i]))
            return false;
    return true;
}

/* strconv.ParseUint(s, 10, 64) of a digits-only string. */
static bool parse_u64(const char *s, size_t len, uint64_t *out)
{
    if (len == 0)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!is_digit(s[i]))
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* A version number: digits, no leading zero (hasLeadingZeroes), fits uint64. */
static bool parse_vnum(const char *s, size_t len, uint64_t *out)
{
    if (len > 1 && s[0] == '0')
        return false;
    return parse_u64(s, len, out);
}

static const char *memchr_c(const char *s, size_t len, char c)
{
    return len ? memchr(s, c, len) : NULL;
}

/* Each dot-separated identifier is non-empty and [0-9A-Za-z-]; numeric pre-release
 * identifiers have no leading zero and fit uint64 (NewPRVersion). */
static bool valid_idents(const char *s, size_t len, bool pre)
{
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != '.')
            continue;
        const char *id = s + start;
        size_t n = i - start;
        if (n == 0)
            return false;
        uint64_t dummy;
        if (pre && all_digits(id, n)) {
            if (!parse_vnum(id, n, &dummy))
                return false;
        } else {
            for (size_t k = 0; k < n; k++)
                if (!is_alnum_hyphen(id[k]))
                    return false;
        }
        start = i + 1;
    }
    return true;
}

static bool semver_parse(const char *s, size_t len, struct semver *v)
{
    const char *d1 = memchr_c(s, len, '.');
    if (!d1)
        return false;
    size_t rest1 = len - (size_t)(d1 + 1 - s);
    const char *d2 = memchr_c(d1 + 1, rest1, '.');
    if (!d2)
        return false;
    if (!parse_vnum(s, (size_t)(d1 - s), &v->major))
        return false;
    if (!parse_vnum(d1 + 1, (size_t)(d2 - d1 - 1), &v->minor))
        return false;
    const char *p = d2 + 1;
    size_t plen = len - (size_t)(p - s);
    const char *plus = memchr_c(p, plen, '+');
    if (plus) {
        if (!valid_idents(plus + 1, plen - (size_t)(plus + 1 - p), false))
            return false;
        plen = (size_t)(plus - p);
    }
    v->pre = NULL;
    v->prelen = 0;
    const char *minus = memchr_c(p, plen, '-');
    if (minus) {
        v->pre = minus + 1;
        v->prelen = plen - (size_t)(minus + 1 - p);
        if (!valid_idents(v->pre, v->prelen, true))
            return false;
        plen = (size_t)(minus - p);
    }
    return parse_vnum(p, plen, &v->patch);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return a < b ? -1 : a > b;
}

/* Version.Compare: major, minor, patch, then pre-release precedence; build ignored. */
static int semver_compare(const struct semver *a, const struct semver *b)
{
    int c = cmp_u64(a->major, b->major);
    if (!c)
        c = cmp_u64(a->minor, b->minor);
    if (!c)
        c = cmp_u64(a->patch, b->patch);
    if (c)
        return c;
    if (!a->pre && !b->pre)
        return 0;
    if (!a->pre)
        return 1;
    if (!b->pre)
        return -1;
    size_t i = 0, j = 0;
    for (;;) {
        bool aend = i > a->prelen, bend = j > b->prelen;
        if (aend && bend)
            return 0;
        if (aend)
            return -1;
        if (bend)
            return 1;
        size_t ie = i, je = j;
        while (ie < a->prelen && a->pre[ie] != '.')
            ie++;
        while (je < b->prelen && b->pre[je] != '.')
            je++;
        const char *x = a->pre + i, *y = b->pre + j;
        size_t xl = ie - i, yl = je - j;
        bool xn = all_digits(x, xl), yn = all_digits(y, yl);
        if (xn && yn) {
            uint64_t xv = 0, yv = 0;
            parse_u64(x, xl, &xv);
            parse_u64(y, yl, &yv);
            c = cmp_u64(xv, yv);
        } else if (xn) {
            c = -1;
        } else if (yn) {
            c = 1;
        } else {
            size_t m = xl < yl ? xl : yl;
            c = memcmp(x, y, m);
            c = c < 0 ? -1 : c > 0 ? 1 : (xl < yl ? -1 : xl > yl);
        }
        if (c)
            return c;
        i = ie + 1;
        j = je + 1;
    }
}

/*
 * semverlib.go normalizeAndParse: drop one leading "v", strip leading zeros of each of the
 * first three dot-separated parts, pad to three parts. Writes at most len + 4 bytes to out.
 */
static bool semver_normalize(const char *s, size_t len, char *out, size_t *outlen)
{
    if (len && s[0] == 'v') {
        s++;
        len--;
    }
    size_t o = 0, parts = 0, start = 0;
    const char *last = s;
    size_t lastlen = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && (s[i] != '.' || parts == 2))
            continue;
        const char *pp = s + start;
        size_t pl = i - start;
        if (parts)
            out[o++] = '.';
        if (pl > 1) {
            size_t k = 0;
            while (k < pl && pp[k] == '0')
                k++;
            if (k == pl || !is_digit(pp[k]))
                out[o++] = '0';
            memcpy(out + o, pp + k, pl - k);
            o += pl - k;
        } else {
            memcpy(out + o, pp, pl);
            o += pl;
        }
        last = pp;
        lastlen = pl;
        parts++;
        start = i + 1;
    }
    if (parts < 3) {
        if (memchr_c(last, lastlen, '+') || memchr_c(last, lastlen, '-'))
            return false;
        while (parts < 3) {
            memcpy(out + o, ".0", 2);
            o += 2;
            parts++;
        }
    }
    *outlen = o;
    return true;
}

/* ---- quantities ---- */

enum cel_lookup cel_quantity_milli(const char *s, int64_t *milli)
{
    int64_t m;
    if (!s || quantity_parse_milli(s, &m) != K_OK)
        return CEL_LOOKUP_MISSING;
    if (m == INT64_MAX || m == INT64_MIN)
        return CEL_LOOKUP_UNKNOWN;
    /* Exact at milli-units? value = digits * 10^(exp - frac) (* 2^k); conservative. */
    size_t i = 0;
    if (s[i] == '+' || s[i] == '-')
        i++;
    int64_t frac = 0, trailing = 0;
    bool nonzero = false, in_frac = false;
    for (; is_digit(s[i]) || (s[i] == '.' && !in_frac); i++) {
        if (s[i] == '.') {
            in_frac = true;
            continue;
        }
        if (in_frac)
            frac++;
        if (s[i] == '0') {
            trailing++;
        } else {
            trailing = 0;
            nonzero = true;
        }
    }
    if (!nonzero) {
        *milli = 0;
        return CEL_LOOKUP_FOUND;
    }
    int64_t exp10 = 0;
    const char *suf = s + i;
    if ((suf[0] == 'e' || suf[0] == 'E') && suf[1]) {
        long long e = strtoll(suf + 1, NULL, 10); /* validated by quantity_parse_milli */
        if (e < -(1LL << 40))
            e = -(1LL << 40);
        if (e > (1LL << 40))
            e = 1LL << 40;
        exp10 = e;
    } else if (suf[0] && suf[1] != 'i') {
        switch (suf[0]) {
        case 'n':
            exp10 = -9;
            break;
        case 'u':
            exp10 = -6;
            break;
        case 'm':
            exp10 = -3;
            break;
        default:
            exp10 = 3; /* k M G T P E: positive */
        }
    }
    if (exp10 - frac + trailing < -3)
        return CEL_LOOKUP_UNKNOWN;
    *milli = m;
    return CEL_LOOKUP_FOUND;
}

/* ---- program storage ---- */

static int32_t new_node(struct cel_program *p, uint8_t op, uint8_t ty, uint32_t off)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 32;
        struct node *nn = realloc(p->nodes, cap * sizeof(*nn));
        if (!nn)
            return -1;
        p->nodes = nn;
        p->cap = cap;
    }
    struct node *x = &p->nodes[p->n];
    memset(x, 0, sizeof(*x));
    x->op = op;
    x->ty = ty;
    x->off = off;
    x->a = x->b = x->next = -1;
    x->depth = 1;
    return (int32_t)p->n++;
}

static bool pool_reserve(struct cel_program *p, size_t more)
{
    if (p->plen + more <= p->pcap)
        return true;
    size_t cap = p->pcap ? p->pcap : 64;
    while (cap < p->plen + more)
        cap *= 2;
    char *np = realloc(p->pool, cap);
    if (!np)
        return false;
    p->pool = np;
    p->pcap = cap;
    return true;
}

/* ---- lexer ---- */

enum tok {
    T_EOF,
    T_IDENT,
    T_INT,
    T_STR,
    T_LPAREN,
    T_RPAREN,
    T_LBRACK,
    T_RBRACK,
    T_LBRACE,
    T_RBRACE,
    T_DOT,
    T_COMMA,
    T_COLON,
    T_QUEST,
    T_AND,
    T_OR,
    T_NOT,
    T_EQ,
    T_NE,
    T_LT,
    T_LE,
    T_GT,
    T_GE,
    T_PLUS,
    T_MINUS,
    T_STAR,
    T_SLASH,
    T_PCT,
    T_BAD, /* an error was recorded */
};

struct parser {
    const char *src;
    size_t len, pos;
    struct cel_program *prog;
    int status;
    char *err;
    size_t errlen;
    int depth;
    /* current token */
    int tok;
    size_t tstart, tend;
    uint64_t tint; /* T_INT magnitude */
    bool tint_overflow;
    uint32_t ts, tl; /* T_STR decoded into the pool */
};

static void fail(struct parser *p, int status, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void fail(struct parser *p, int status, size_t off, const char *fmt, ...)
{
    if (p->status != CEL_OK)
        return;
    p->status = status;
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    const char *prefix = status == CEL_UNSUPPORTED ? "unsupported: "
                         : status == CEL_LIMIT     ? "limit: "
                         : status == CEL_NOMEM     ? ""
                                                   : "invalid: ";
    errbuf_printf(p->err, p->errlen, "%s%s at offset %zu", prefix, msg, off);
}

static void nomem(struct parser *p)
{
    fail(p, CEL_NOMEM, p->pos, "out of memory");
}

static bool ident_start(char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool ident_char(char c)
{
    return ident_start(c) || is_digit(c);
}

static void put_utf8(struct cel_program *prog, uint32_t cp)
{
    char *o = prog->pool + prog->plen;
    if (cp < 0x80) {
        o[0] = (char)cp;
        prog->plen += 1;
    } else if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        prog->plen += 2;
    } else if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        prog->plen += 3;
    } else {
        o[0] = (char)(0xF0 | (cp >> 18));
        o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[3] = (char)(0x80 | (cp & 0x3F));
        prog->plen += 4;
    }
}

/* A string literal starting at p->pos (after any r prefix). CEL.g4 STRING and ESC_SEQ. */
static int lex_string(struct parser *p, bool raw)
{
    const char *s = p->src;
    char q = s[p->pos];
    bool triple = p->pos + 2 < p->len && s[p->pos + 1] == q && s[p->pos + 2] == q;
    p->pos += triple ? 3 : 1;
    /* the decoded text is never longer than 4 bytes per source byte */
    if (!pool_reserve(p->prog, 4 * (p->len - p->pos) + 4)) {
        nomem(p);
        return T_BAD;
    }
    struct cel_program *prog = p->prog;
    p->ts = (uint32_t)prog->plen;
    for (;;) {
        if (p->pos >= p->len) {
            fail(p, CEL_INVALID, p->tstart, "unterminated string literal");
            return T_BAD;
        }
        char c = s[p->pos];
        if (c == q) {
            if (!triple) {
                p->pos++;
                break;
            }
            if (p->pos + 2 < p->len && s[p->pos + 1] == q && s[p->pos + 2] == q) {
                p->pos += 3;
                break;
            }
        }
        if (!triple && (c == '\n' || c == '\r')) {
            fail(p, CEL_INVALID, p->pos, "newline in string literal");
            return T_BAD;
        }
        if (c != '\\' || raw) {
            prog->pool[prog->plen++] = c;
            p->pos++;
            continue;
        }
        size_t esc = p->pos;
        if (p->pos + 1 >= p->len) {
            fail(p, CEL_INVALID, esc, "unterminated string literal");
            return T_BAD;
        }
        char e = s[p->pos + 1];
        p->pos += 2;
        uint32_t cp;
        int digits = 0, base = 16;
        switch (e) {
        case 'a':
            cp = '\a';
            break;
        case 'b':
            cp = '\b';
            break;
        case 'f':
            cp = '\f';
            break;
        case 'n':
            cp = '\n';
            break;
        case 'r':
            cp = '\r';
            break;
        case 't':
            cp = '\t';
            break;
        case 'v':
            cp = '\v';
            break;
        case '"':
        case '\'':
        case '\\':
        case '?':
        case '`':
            cp = (uint32_t)(unsigned char)e;
            break;
        case 'x':
        case 'X':
            digits = 2;
            break;
        case 'u':
            digits = 4;
            break;
        case 'U':
            digits = 8;
            break;
        default:
            if (e >= '0' && e <= '3') {
                digits = 2;
                base = 8;
                cp = (uint32_t)(e - '0');
                break;
            }
            fail(p, CEL_INVALID, esc, "invalid escape sequence");
            return T_BAD;
        }
        if (digits) {
            if (base == 16)
                cp = 0;
            for (int k = 0; k < digits; k++) {
                int d = p->pos < p->len ? strconv_hex_digit((unsigned char)s[p->pos]) : -1;
                if (d < 0 || d >= base) {
                    fail(p, CEL_INVALID, esc, "invalid escape sequence");
                    return T_BAD;
                }
                cp = cp * (uint32_t)base + (uint32_t)d;
                p->pos++;
            }
            if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                fail(p, CEL_INVALID, esc, "invalid code point in escape sequence");
                return T_BAD;
            }
        }
        put_utf8(prog, cp);
    }
    p->tl = (uint32_t)(prog->plen - p->ts);
    return T_STR;
}

static int lex_number(struct parser *p)
{
    const char *s = p->src;
    size_t i = p->pos;
    uint64_t v = 0;
    bool over = false;
    if (s[i] == '0' && i + 2 < p->len && s[i + 1] == 'x' &&
        strconv_hex_digit((unsigned char)s[i + 2]) >= 0) {
        i += 2;
        while (i < p->len && strconv_hex_digit((unsigned char)s[i]) >= 0) {
            if (v >> 60)
                over = true;
            v = v * 16 + (uint64_t)strconv_hex_digit((unsigned char)s[i]);
            i++;
        }
    } else {
        while (i < p->len && is_digit(s[i])) {
            unsigned d = (unsigned)(s[i] - '0');
            if (v > (UINT64_MAX - d) / 10)
                over = true;
            v = v * 10 + d;
            i++;
        }
        bool dbl = false;
        if (i + 1 < p->len && s[i] == '.' && is_digit(s[i + 1]))
            dbl = true;
        if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
            size_t k = i + 1;
            if (k < p->len && (s[k] == '+' || s[k] == '-'))
                k++;
            if (k < p->len && is_digit(s[k]))
                dbl = true;
        }
        if (dbl) {
            fail(p, CEL_UNSUPPORTED, p->pos, "double literal");
            return T_BAD;
        }
    }
    if (i < p->len && (s[i] == 'u' || s[i] == 'U')) {
        fail(p, CEL_UNSUPPORTED, p->pos, "uint literal");
        return T_BAD;
    }
    p->pos = i;
    p->tint = v;
    p->tint_overflow = over;
    return T_INT;
}

static int lex(struct parser *p)
{
    const char *s = p->src;
    for (;;) {
        while (p->pos < p->len && (s[p->pos] == ' ' || s[p->pos] == '\t' || s[p->pos] == '\n' ||
                                   s[p->pos] == '\r' || s[p->pos] == '\f'))
            p->pos++;
        if (p->pos + 1 < p->len && s[p->pos] == '/' && s[p->pos + 1] == '/') {
            while (p->pos < p->len && s[p->pos] != '\n')
                p->pos++;
            continue;
        }
        break;
    }
    p->tstart = p->pos;
    if (p->pos >= p->len)
        return T_EOF;
    char c = s[p->pos];
    char c1 = p->pos + 1 < p->len ? s[p->pos + 1] : '\0';
    if (is_digit(c))
        return lex_number(p);
    if (c == '.' && is_digit(c1)) {
        fail(p, CEL_UNSUPPORTED, p->pos, "double literal");
        return T_BAD;
    }
    if (c == '"' || c == '\'')
        return lex_string(p, false);
    if ((c == 'r' || c == 'R') && (c1 == '"' || c1 == '\'')) {
        p->pos++;
        return lex_string(p, true);
    }
    if ((c == 'b' || c == 'B') && (c1 == '"' || c1 == '\'' ||
                                   ((c1 == 'r' || c1 == 'R') && p->pos + 2 < p->len &&
                                    (s[p->pos + 2] == '"' || s[p->pos + 2] == '\'')))) {
        fail(p, CEL_UNSUPPORTED, p->pos, "bytes literal");
        return T_BAD;
    }
    if ((c == 'r' || c == 'R') && (c1 == 'b' || c1 == 'B') && p->pos + 2 < p->len &&
        (s[p->pos + 2] == '"' || s[p->pos + 2] == '\'')) {
        fail(p, CEL_UNSUPPORTED, p->pos, "bytes literal");
        return T_BAD;
    }
    if (ident_start(c)) {
        while (p->pos < p->len && ident_char(s[p->pos]))
            p->pos++;
        return T_IDENT;
    }
    p->pos++;
    switch (c) {
    case '(':
        return T_LPAREN;
    case ')':
        return T_RPAREN;
    case '[':
        return T_LBRACK;
    case ']':
        return T_RBRACK;
    case '{':
        return T_LBRACE;
    case '}':
        return T_RBRACE;
    case '.':
        return T_DOT;
    case ',':
        return T_COMMA;
    case ':':
        return T_COLON;
    case '?':
        return T_QUEST;
    case '+':
        return T_PLUS;
    case '-':
        return T_MINUS;
    case '*':
        return T_STAR;
    case '/':
        return T_SLASH;
    case '%':
        return T_PCT;
    case '&':
        if (c1 == '&') {
            p->pos++;
            return T_AND;
        }
        break;
    case '|':
        if (c1 == '|') {
            p->pos++;
            return T_OR;
        }
        break;
    case '=':
        if (c1 == '=') {
            p->pos++;
            return T_EQ;
        }
        break;
    case '!':
        if (c1 == '=') {
            p->pos++;
            return T_NE;
        }
        return T_NOT;
    case '<':
        if (c1 == '=') {
            p->pos++;
            return T_LE;
        }
        return T_LT;
    case '>':
        if (c1 == '=') {
            p->pos++;
            return T_GE;
        }
        return T_GT;
    default:
        break;
    }
    fail(p, CEL_INVALID, p->tstart, "unexpected character");
    return T_BAD;
}

static void advance(struct parser *p)
{
    if (p->status != CEL_OK) {
        p->tok = T_BAD;
        return;
    }
    p->tok = lex(p);
    p->tend = p->pos;
}

static bool tok_is(const struct parser *p, const char *word)
{
    size_t n = strlen(word);
    return p->tok == T_IDENT && p->tend - p->tstart == n &&
           memcmp(p->src + p->tstart, word, n) == 0;
}

/* CEL reserved words (langdef.md "Syntax"): never identifiers. */
static bool tok_reserved(const struct parser *p)
{
    static const char *const words[] = {
        "as",  "break",  "const", "continue", "else",    "for",       "function",
        "if",  "import", "let",   "loop",     "package", "namespace", "return",
        "var", "void",   "while", "true",     "false",   "null",      "in"};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (tok_is(p, words[i]))
            return true;
    return false;
}

static bool expect(struct parser *p, int tok, const char *what)
{
    if (p->status != CEL_OK)
        return false;
    if (p->tok != tok) {
        fail(p, CEL_INVALID, p->tstart, "expected %s", what);
        return false;
    }
    advance(p);
    return p->status == CEL_OK;
}

/* ---- parser and checker ---- */

#define NODE(p, i) (&(p)->prog->nodes[(i)])

static int32_t mk(struct parser *p, uint8_t op, uint8_t ty, size_t off)
{
    int32_t n = new_node(p->prog, op, ty, (uint32_t)off);
    if (n < 0)
        nomem(p);
    return n;
}

/* Set a node's depth from its children; fail above CEL_MAX_DEPTH. */
static bool set_depth(struct parser *p, int32_t n, int32_t a, int32_t b)
{
    unsigned d = 0;
    if (a >= 0)
        d = NODE(p, a)->depth;
    if (b >= 0 && NODE(p, b)->depth > d)
        d = NODE(p, b)->depth;
    if (d + 1 > CEL_MAX_DEPTH) {
        fail(p, CEL_LIMIT, NODE(p, n)->off, "expression nested deeper than %d", CEL_MAX_DEPTH);
        return false;
    }
    NODE(p, n)->depth = (uint8_t)(d + 1);
    return true;
}

static bool scalar(uint8_t ty)
{
    return ty != TY_LIST && ty != TY_PATH;
}

static bool boolish(uint8_t ty)
{
    return ty == TY_BOOL || ty == TY_DYN;
}

static int32_t parse_expr(struct parser *p);

static const char *tyname(uint8_t ty)
{
    return ty_names[ty];
}

/* Arguments of a call: up to 2, returned in args; *nargs set. Current token is '('. */
static bool parse_args(struct parser *p, int32_t *args, int *nargs, size_t callee_off)
{
    *nargs = 0;
    advance(p); /* ( */
    if (p->tok == T_RPAREN) {
        advance(p);
        return p->status == CEL_OK;
    }
    for (;;) {
        int32_t a = parse_expr(p);
        if (a < 0)
            return false;
        if (*nargs == 2) {
            fail(p, CEL_UNSUPPORTED, callee_off, "call with more than two arguments");
            return false;
        }
        args[(*nargs)++] = a;
        if (p->tok == T_COMMA) {
            advance(p);
            continue;
        }
        return expect(p, T_RPAREN, "')'");
    }
}

static int32_t global_call(struct parser *p, size_t off, size_t nlen)
{
    const char *name = p->src + off;
    int32_t args[2];
    int nargs;
    if (!parse_args(p, args, &nargs, off))
        return -1;
    if (nlen == 3 && memcmp(name, "has", 3) == 0) {
        if (nargs != 1) {
            fail(p, CEL_INVALID, off, "has() takes one argument");
            return -1;
        }
        struct node *a = NODE(p, args[0]);
        if ((a->op == OP_ATTR || a->op == OP_CAP) && a->selected) {
            a->op = OP_HAS_KEY;
            a->ty = TY_BOOL;
            a->off = (uint32_t)off;
            return args[0];
        }
        fail(p, CEL_UNSUPPORTED, off, "has() other than has(device.attributes[D].N)");
        return -1;
    }
    if (nlen == 8 && memcmp(name, "quantity", 8) == 0) {
        struct node *a = nargs == 1 ? NODE(p, args[0]) : NULL;
        if (!a || a->op != OP_STR) {
            fail(p, CEL_UNSUPPORTED, off, "quantity() of anything but one string literal");
            return -1;
        }
        char buf[128];
        int64_t milli = 0;
        enum cel_lookup q = CEL_LOOKUP_MISSING;
        if (a->l1 < sizeof(buf) && !memchr(p->prog->pool + a->s1, '\0', a->l1)) {
            memcpy(buf, p->prog->pool + a->s1, a->l1);
            buf[a->l1] = '\0';
            q = cel_quantity_milli(buf, &milli);
        }
        if (q != CEL_LOOKUP_FOUND) {
            fail(p, CEL_UNSUPPORTED, off, "quantity literal not exact in int64 milli-units");
            return -1;
        }
        a->op = OP_QTY;
        a->ty = TY_QTY;
        a->i = milli;
        a->off = (uint32_t)off;
        return args[0];
    }
    if (nlen == 6 && memcmp(name, "semver", 6) == 0) {
        if (nargs < 1) {
            fail(p, CEL_UNSUPPORTED, off, "semver() without arguments");
            return -1;
        }
        struct node *a = NODE(p, args[0]);
        bool normalize = false;
        if (nargs == 2) {
            struct node *b = NODE(p, args[1]);
            if (b->op != OP_BOOL) {
                fail(p, CEL_UNSUPPORTED, off, "semver() with a non-literal second argument");
                return -1;
            }
            normalize = b->i != 0;
        }
        if (a->op != OP_STR) {
            fail(p, CEL_UNSUPPORTED, off, "semver() of anything but a string literal");
            return -1;
        }
        a->op = OP_SEMVER;
        a->ty = TY_SEMVER;
        a->off = (uint32_t)off;
        struct semver v;
        if (normalize) {
            if (!pool_reserve(p->prog, a->l1 + 8)) {
                nomem(p);
                return -1;
            }
            size_t outlen = 0;
            uint32_t at = (uint32_t)p->prog->plen;
            if (semver_normalize(p->prog->pool + a->s1, a->l1, p->prog->pool + at, &outlen)) {
                p->prog->plen += outlen;
                a->s1 = at;
                a->l1 = (uint32_t)outlen;
            } else {
                a->sub = 1;
            }
        }
        if (!a->sub && !semver_parse(p->prog->pool + a->s1, a->l1, &v))
            a->sub = 1;
        return args[0];
    }
    fail(p, CEL_UNSUPPORTED, off, "function %.*s()", (int)(nlen > 40 ? 40 : nlen), name);
    return -1;
}

static int32_t parse_primary(struct parser *p)
{
    if (p->status != CEL_OK)
        return -1;
    size_t off = p->tstart;
    int32_t n;
    switch (p->tok) {
    case T_INT:
        if (p->tint_overflow || p->tint > (uint64_t)INT64_MAX) {
            fail(p, CEL_INVALID, off, "integer literal out of range");
            return -1;
        }
        n = mk(p, OP_INT, TY_INT, off);
        if (n >= 0)
            NODE(p, n)->i = (int64_t)p->tint;
        advance(p);
        return n;
    case T_STR:
        n = mk(p, OP_STR, TY_STR, off);
        if (n >= 0) {
            NODE(p, n)->s1 = p->ts;
            NODE(p, n)->l1 = p->tl;
        }
        advance(p);
        return n;
    case T_LPAREN:
        advance(p);
        n = parse_expr(p);
        if (n < 0 || !expect(p, T_RPAREN, "')'"))
            return -1;
        return n;
    case T_LBRACK: {
        n = mk(p, OP_LIST, TY_LIST, off);
        if (n < 0)
            return -1;
        advance(p);
        int32_t last = -1;
        while (p->tok != T_RBRACK) {
            int32_t item = parse_expr(p);
            if (item < 0)
                return -1;
            if (!scalar(NODE(p, item)->ty)) {
                fail(p, CEL_UNSUPPORTED, NODE(p, item)->off, "list element of type %s",
                     tyname(NODE(p, item)->ty));
                return -1;
            }
            /* HomogeneousAggregateLiterals (apiserver/pkg/cel/environment/base.go): every
             * element has the same type; dyn does not join with string or int */
            uint8_t it = NODE(p, item)->ty;
            if (last < 0) {
                NODE(p, n)->sub = it;
            } else if (NODE(p, n)->sub != it) {
                fail(p, CEL_UNSUPPORTED, NODE(p, item)->off, "mixed-type list literal");
                return -1;
            }
            if (last < 0)
                NODE(p, n)->a = item;
            else
                NODE(p, last)->next = item;
            last = item;
            if (NODE(p, item)->depth + 1 > CEL_MAX_DEPTH) {
                fail(p, CEL_LIMIT, off, "expression nested deeper than %d", CEL_MAX_DEPTH);
                return -1;
            }
            if (NODE(p, item)->depth + 1 > NODE(p, n)->depth)
                NODE(p, n)->depth = (uint8_t)(NODE(p, item)->depth + 1);
            if (p->tok == T_COMMA) {
                advance(p);
                continue;
            }
            if (p->tok != T_RBRACK) {
                fail(p, CEL_INVALID, p->tstart, "expected ',' or ']'");
                return -1;
            }
        }
        advance(p);
        return p->status == CEL_OK ? n : -1;
    }
    case T_LBRACE:
        fail(p, CEL_UNSUPPORTED, off, "map literal");
        return -1;
    case T_DOT:
        fail(p, CEL_UNSUPPORTED, off, "leading '.' in a name");
        return -1;
    case T_IDENT:
        break;
    default:
        fail(p, CEL_INVALID, off,
             p->tok == T_EOF ? "unexpected end of expression" : "unexpected token");
        return -1;
    }
    size_t nlen = p->tend - p->tstart;
    if (tok_is(p, "true") || tok_is(p, "false")) {
        n = mk(p, OP_BOOL, TY_BOOL, off);
        if (n >= 0)
            NODE(p, n)->i = tok_is(p, "true");
        advance(p);
        return n;
    }
    if (tok_is(p, "null")) {
        fail(p, CEL_UNSUPPORTED, off, "null");
        return -1;
    }
    if (tok_reserved(p)) {
        fail(p, CEL_INVALID, off, "reserved word %.*s", (int)nlen, p->src + off);
        return -1;
    }
    bool device = tok_is(p, "device");
    advance(p);
    if (p->tok == T_LPAREN)
        return global_call(p, off, nlen);
    if (p->tok == T_LBRACE) {
        fail(p, CEL_UNSUPPORTED, off, "message literal");
        return -1;
    }
    if (!device) {
        fail(p, CEL_UNSUPPORTED, off, "identifier %.*s", (int)(nlen > 40 ? 40 : nlen),
             p->src + off);
        return -1;
    }
    return mk(p, OP_PATH_DEVICE, TY_PATH, off);
}

/* `x.name` */
static bool do_select(struct parser *p, int32_t x, size_t noff, size_t nlen)
{
    struct node *n = NODE(p, x);
    const char *name = p->src + noff;
    if (n->op == OP_PATH_DEVICE) {
        if (nlen == 6 && memcmp(name, "driver", 6) == 0) {
            n->op = OP_DRIVER;
            n->ty = TY_STR;
            return true;
        }
        if (nlen == 10 && memcmp(name, "attributes", 10) == 0) {
            n->op = OP_PATH_MAP;
            n->kind = MAP_ATTR;
            return true;
        }
        if (nlen == 8 && memcmp(name, "capacity", 8) == 0) {
            n->op = OP_PATH_MAP;
            n->kind = MAP_CAP;
            return true;
        }
        fail(p, CEL_UNSUPPORTED, noff, "field device.%.*s", (int)(nlen > 40 ? 40 : nlen), name);
        return false;
    }
    if (n->op != OP_PATH_MAP && n->op != OP_PATH_DOMAIN) {
        fail(p, CEL_UNSUPPORTED, noff, "field selection on %s", tyname(n->ty));
        return false;
    }
    if (!pool_reserve(p->prog, nlen)) {
        nomem(p);
        return false;
    }
    uint32_t at = (uint32_t)p->prog->plen;
    memcpy(p->prog->pool + at, name, nlen);
    p->prog->plen += nlen;
    n = NODE(p, x);
    if (n->op == OP_PATH_MAP) {
        n->op = OP_PATH_DOMAIN;
        n->s1 = at;
        n->l1 = (uint32_t)nlen;
    } else {
        n->op = n->kind == MAP_ATTR ? OP_ATTR : OP_CAP;
        n->ty = n->kind == MAP_ATTR ? TY_DYN : TY_QTY;
        n->s2 = at;
        n->l2 = (uint32_t)nlen;
    }
    n->selected = 1;
    return true;
}

/* `x[key]` */
static bool do_index(struct parser *p, int32_t x, int32_t key, size_t off)
{
    struct node *n = NODE(p, x), *k = NODE(p, key);
    if (n->op != OP_PATH_MAP && n->op != OP_PATH_DOMAIN) {
        fail(p, CEL_UNSUPPORTED, off, "index operator on %s", tyname(n->ty));
        return false;
    }
    if (k->op != OP_STR) {
        fail(p, CEL_UNSUPPORTED, off, "map key that is not a string literal");
        return false;
    }
    if (n->op == OP_PATH_MAP) {
        n->op = OP_PATH_DOMAIN;
        n->s1 = k->s1;
        n->l1 = k->l1;
    } else {
        n->op = n->kind == MAP_ATTR ? OP_ATTR : OP_CAP;
        n->ty = n->kind == MAP_ATTR ? TY_DYN : TY_QTY;
        n->s2 = k->s1;
        n->l2 = k->l1;
    }
    n->selected = 0;
    return true;
}

static bool method_types_ok(int m, uint8_t rt, uint8_t at)
{
    if (m <= M_IS_LESS) {
        bool r = rt == TY_QTY || rt == TY_SEMVER || rt == TY_DYN;
        bool a = at == TY_QTY || at == TY_SEMVER || at == TY_DYN;
        return r && a && (rt == at || rt == TY_DYN || at == TY_DYN);
    }
    return (rt == TY_STR || rt == TY_DYN) && (at == TY_STR || at == TY_DYN);
}

static int32_t do_method(struct parser *p, int32_t recv, size_t noff, size_t nlen)
{
    static const char *const names[] = {"compareTo",  "isGreaterThan", "isLessThan",
                                        "startsWith", "endsWith",      "contains"};
    const char *name = p->src + noff;
    int m = -1;
    for (int i = 0; i < 6; i++)
        if (strlen(names[i]) == nlen && memcmp(names[i], name, nlen) == 0)
            m = i;
    if (m < 0) {
        fail(p, CEL_UNSUPPORTED, noff, "method %.*s()", (int)(nlen > 40 ? 40 : nlen), name);
        return -1;
    }
    int32_t args[2];
    int nargs;
    if (!parse_args(p, args, &nargs, noff))
        return -1;
    if (nargs != 1) {
        fail(p, CEL_UNSUPPORTED, noff, "%s() with %d arguments", names[m], nargs);
        return -1;
    }
    uint8_t rt = NODE(p, recv)->ty, at = NODE(p, args[0])->ty;
    if (!method_types_ok(m, rt, at)) {
        fail(p, CEL_UNSUPPORTED, noff, "%s() on %s with %s", names[m], tyname(rt), tyname(at));
        return -1;
    }
    int32_t n = mk(p, OP_METHOD, m == M_COMPARE_TO ? TY_INT : TY_BOOL, noff);
    if (n < 0)
        return -1;
    NODE(p, n)->sub = (uint8_t)m;
    NODE(p, n)->a = recv;
    NODE(p, n)->b = args[0];
    return set_depth(p, n, recv, args[0]) ? n : -1;
}

static int32_t parse_postfix(struct parser *p, int32_t x)
{
    while (x >= 0 && p->status == CEL_OK) {
        if (p->tok == T_DOT) {
            advance(p);
            if (p->tok == T_QUEST) {
                fail(p, CEL_UNSUPPORTED, p->tstart, "optional field selection .?");
                return -1;
            }
            /* reserved words other than the keywords are valid field names in cel-go */
            if (p->tok != T_IDENT || tok_is(p, "in") || tok_is(p, "true") || tok_is(p, "false") ||
                tok_is(p, "null")) {
                fail(p, CEL_INVALID, p->tstart, "expected a field name after '.'");
                return -1;
            }
            size_t noff = p->tstart, nlen = p->tend - p->tstart;
            advance(p);
            if (p->tok == T_LPAREN) {
                x = do_method(p, x, noff, nlen);
            } else if (!do_select(p, x, noff, nlen)) {
                return -1;
            }
        } else if (p->tok == T_LBRACK) {
            size_t off = p->tstart;
            advance(p);
            if (p->tok == T_QUEST) {
                fail(p, CEL_UNSUPPORTED, p->tstart, "optional index [?");
                return -1;
            }
            int32_t key = parse_expr(p);
            if (key < 0 || !expect(p, T_RBRACK, "']'"))
                return -1;
            if (!do_index(p, x, key, off))
                return -1;
        } else {
            break;
        }
    }
    return p->status == CEL_OK ? x : -1;
}

static int32_t parse_unary(struct parser *p)
{
    if (p->status != CEL_OK)
        return -1;
    if (p->tok == T_NOT) {
        size_t off = p->tstart;
        if (++p->depth > CEL_MAX_DEPTH) {
            fail(p, CEL_LIMIT, off, "expression nested deeper than %d", CEL_MAX_DEPTH);
            return -1;
        }
        advance(p);
        int32_t x = parse_unary(p);
        p->depth--;
        if (x < 0)
            return -1;
        if (!boolish(NODE(p, x)->ty)) {
            fail(p, CEL_UNSUPPORTED, off, "! on %s", tyname(NODE(p, x)->ty));
            return -1;
        }
        int32_t n = mk(p, OP_NOT, TY_BOOL, off);
        if (n < 0)
            return -1;
        NODE(p, n)->a = x;
        return set_depth(p, n, x, -1) ? n : -1;
    }
    if (p->tok == T_MINUS) {
        size_t off = p->tstart;
        advance(p);
        if (p->tok != T_INT) {
            if (p->status == CEL_OK)
                fail(p, CEL_UNSUPPORTED, off, "unary minus on anything but an integer literal");
            return -1;
        }
        if (p->tint_overflow || p->tint > (uint64_t)INT64_MAX + 1) {
            fail(p, CEL_INVALID, off, "integer literal out of range");
            return -1;
        }
        int32_t n = mk(p, OP_INT, TY_INT, off);
        if (n < 0)
            return -1;
        NODE(p, n)->i = p->tint == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)p->tint;
        advance(p);
        return parse_postfix(p, n);
    }
    return parse_postfix(p, parse_primary(p));
}

static int32_t parse_mul(struct parser *p)
{
    int32_t x = parse_unary(p);
    if (x >= 0 && (p->tok == T_STAR || p->tok == T_SLASH || p->tok == T_PCT)) {
        fail(p, CEL_UNSUPPORTED, p->tstart, "arithmetic operator");
        return -1;
    }
    return x;
}

static int32_t parse_add(struct parser *p)
{
    int32_t x = parse_mul(p);
    if (x >= 0 && (p->tok == T_PLUS || p->tok == T_MINUS)) {
        fail(p, CEL_UNSUPPORTED, p->tstart, "arithmetic operator");
        return -1;
    }
    return x;
}

static bool ordered(uint8_t ty)
{
    return ty == TY_INT || ty == TY_STR || ty == TY_BOOL || ty == TY_DYN;
}

static int32_t make_in(struct parser *p, int32_t l, int32_t r, size_t off)
{
    struct node *ln = NODE(p, l), *rn = NODE(p, r);
    if (rn->op == OP_LIST) {
        if (!scalar(ln->ty)) {
            fail(p, CEL_UNSUPPORTED, off, "'in' with a %s on the left", tyname(ln->ty));
            return -1;
        }
        /* in_list is (A, list(A)): a known element type must match a known left type */
        if (rn->a >= 0 && ln->ty != rn->sub && ln->ty != TY_DYN && rn->sub != TY_DYN) {
            fail(p, CEL_UNSUPPORTED, off, "%s in list of %s", tyname(ln->ty), tyname(rn->sub));
            return -1;
        }
        int32_t n = mk(p, OP_IN_LIST, TY_BOOL, off);
        if (n < 0)
            return -1;
        NODE(p, n)->a = l;
        NODE(p, n)->b = r;
        return set_depth(p, n, l, r) ? n : -1;
    }
    if ((rn->op == OP_PATH_MAP || rn->op == OP_PATH_DOMAIN) && ln->op == OP_STR) {
        /* reuse the right node: it already holds the map kind and domain */
        if (rn->op == OP_PATH_MAP) {
            rn->op = OP_HAS_DOMAIN;
            rn->s1 = ln->s1;
            rn->l1 = ln->l1;
        } else {
            rn->op = OP_HAS_KEY;
            rn->s2 = ln->s1;
            rn->l2 = ln->l1;
        }
        rn->ty = TY_BOOL;
        rn->off = (uint32_t)off;
        return r;
    }
    fail(p, CEL_UNSUPPORTED, off, "'in' on %s", tyname(rn->ty));
    return -1;
}

static int32_t parse_rel(struct parser *p)
{
    int32_t l = parse_add(p);
    while (l >= 0 && p->status == CEL_OK) {
        int cmp;
        switch (p->tok) {
        case T_EQ:
            cmp = CMP_EQ;
            break;
        case T_NE:
            cmp = CMP_NE;
            break;
        case T_LT:
            cmp = CMP_LT;
            break;
        case T_LE:
            cmp = CMP_LE;
            break;
        case T_GT:
            cmp = CMP_GT;
            break;
        case T_GE:
            cmp = CMP_GE;
            break;
        default:
            cmp = tok_is(p, "in") ? -2 : -1;
        }
        if (cmp == -1)
            break;
        size_t off = p->tstart;
        advance(p);
        int32_t r = parse_add(p);
        if (r < 0)
            return -1;
        if (cmp == -2) {
            l = make_in(p, l, r, off);
            continue;
        }
        uint8_t lt = NODE(p, l)->ty, rt = NODE(p, r)->ty;
        bool ok = scalar(lt) && scalar(rt);
        if (ok && (cmp == CMP_EQ || cmp == CMP_NE))
            ok = lt == rt || lt == TY_DYN || rt == TY_DYN;
        else if (ok)
            ok = ordered(lt) && ordered(rt) && (lt == rt || lt == TY_DYN || rt == TY_DYN);
        if (!ok) {
            fail(p, CEL_UNSUPPORTED, off, "comparison of %s with %s", tyname(lt), tyname(rt));
            return -1;
        }
        int32_t n = mk(p, OP_CMP, TY_BOOL, off);
        if (n < 0)
            return -1;
        NODE(p, n)->sub = (uint8_t)cmp;
        NODE(p, n)->a = l;
        NODE(p, n)->b = r;
        if (!set_depth(p, n, l, r))
            return -1;
        l = n;
    }
    return p->status == CEL_OK ? l : -1;
}

/* a && b && ... (op OP_AND, T_AND) or a || b || ... as one n-ary node. */
static int32_t parse_logic(struct parser *p, int tok, uint8_t op, int32_t (*sub)(struct parser *))
{
    int32_t first = sub(p);
    if (first < 0 || p->tok != tok)
        return first;
    int32_t n = mk(p, op, TY_BOOL, NODE(p, first)->off);
    if (n < 0)
        return -1;
    NODE(p, n)->a = first;
    int32_t last = first;
    unsigned depth = NODE(p, first)->depth;
    for (;;) {
        if (!boolish(NODE(p, last)->ty)) {
            fail(p, CEL_UNSUPPORTED, NODE(p, last)->off, "%s on %s", op == OP_AND ? "&&" : "||",
                 tyname(NODE(p, last)->ty));
            return -1;
        }
        if (p->tok != tok)
            break;
        advance(p);
        int32_t x = sub(p);
        if (x < 0)
            return -1;
        NODE(p, last)->next = x;
        last = x;
        if (NODE(p, x)->depth > depth)
            depth = NODE(p, x)->depth;
    }
    if (depth + 1 > CEL_MAX_DEPTH) {
        fail(p, CEL_LIMIT, NODE(p, n)->off, "expression nested deeper than %d", CEL_MAX_DEPTH);
        return -1;
    }
    NODE(p, n)->depth = (uint8_t)(depth + 1);
    return n;
}

static int32_t parse_and(struct parser *p)
{
    return parse_logic(p, T_AND, OP_AND, parse_rel);
}

static int32_t parse_or(struct parser *p)
{
    return parse_logic(p, T_OR, OP_OR, parse_and);
}

static int32_t parse_expr(struct parser *p)
{
    if (p->status != CEL_OK)
        return -1;
    if (++p->depth > CEL_MAX_DEPTH) {
        fail(p, CEL_LIMIT, p->tstart, "expression nested deeper than %d", CEL_MAX_DEPTH);
        return -1;
    }
    int32_t x = parse_or(p);
    if (x >= 0 && p->tok == T_QUEST) {
        fail(p, CEL_UNSUPPORTED, p->tstart, "conditional operator ?:");
        return -1;
    }
    p->depth--;
    return p->status == CEL_OK ? x : -1;
}

/* Offset of the first byte that is not well-formed UTF-8, or len. */
static size_t utf8_invalid_at(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        size_t n;
        uint32_t cp, min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            n = 1, cp = c & 0x1F, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            n = 2, cp = c & 0x0F, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            n = 3, cp = c & 0x07, min = 0x10000;
        } else {
            return i;
        }
        if (len - i <= n)
            return i;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return i;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += n + 1;
    }
    return len;
}

void cel_program_free(struct cel_program *prog)
{
    if (!prog)
        return;
    free(prog->nodes);
    free(prog->pool);
    free(prog->source);
    free(prog);
}

const char *cel_program_source(const struct cel_program *prog)
{
    return prog->source;
}

int cel_compile(const char *expr, size_t len, struct cel_program **out, char *err, size_t errlen)
{
    *out = NULL;
    errbuf_printf(err, errlen, "%s", "");
    if (!expr) {
        errbuf_printf(err, errlen, "invalid: no expression");
        return CEL_INVALID;
    }
    if (len > CEL_MAX_EXPR_LEN) {
        errbuf_printf(err, errlen, "limit: expression longer than %d bytes", CEL_MAX_EXPR_LEN);
        return CEL_LIMIT;
    }
    /* API objects arrive as JSON, so their text is UTF-8; cel-go would read other bytes as
     * U+FFFD. Do not guess. */
    size_t bad = utf8_invalid_at((const unsigned char *)expr, len);
    if (bad < len) {
        errbuf_printf(err, errlen, "unsupported: bytes that are not UTF-8 at offset %zu", bad);
        return CEL_UNSUPPORTED;
    }
    struct cel_program *prog = calloc(1, sizeof(*prog));
    if (!prog || !(prog->source = malloc(len + 1))) {
        free(prog);
        errbuf_printf(err, errlen, "out of memory");
        return CEL_NOMEM;
    }
    memcpy(prog->source, expr, len);
    prog->source[len] = '\0';
    struct parser p = {.src = prog->source, .len = len, .prog = prog, .err = err, .errlen = errlen};
    advance(&p);
    int32_t root = parse_expr(&p);
    if (root >= 0 && p.tok != T_EOF)
        fail(&p, CEL_INVALID, p.tstart, "unexpected token after the expression");
    if (p.status == CEL_OK && !boolish(NODE(&p, root)->ty))
        fail(&p, CEL_INVALID, NODE(&p, root)->off, "must evaluate to bool, not %s",
             tyname(NODE(&p, root)->ty));
    if (p.status != CEL_OK) {
        cel_program_free(prog);
        return p.status;
    }
    prog->root = root;
    *out = prog;
    return CEL_OK;
}

/* ---- evaluation ---- */

enum vkind { V_BOOL, V_INT, V_STR, V_QTY, V_SEMVER, V_ERR, V_UNK };

struct val {
    uint8_t k;
    bool b;
    int64_t i;
    const char *s; /* V_STR, V_SEMVER text; V_ERR/V_UNK message */
    size_t len;
    int32_t node; /* V_ERR/V_UNK: where */
};

struct evalctx {
    const struct cel_program *prog;
    const struct cel_device *dev;
    int32_t aborted; /* node whose evaluation aborted the whole program (a Go panic), or -1 */
    uint64_t steps;  /* taken so far (cel.h: cost) */
    uint64_t limit;  /* steps allowed; UINT64_MAX: unbounded */
    bool over;       /* the limit was reached: `aborted` is where the evaluation stopped */
};

void cel_budget_init(struct cel_budget *b, uint64_t steps)
{
    *b = (struct cel_budget){.left = steps};
}

void cel_budget_set_deadline(struct cel_budget *b, int64_t deadline_ns)
{
    b->deadline_ns = deadline_ns;
    b->next_check = b->spent;
}

bool cel_budget_charge(struct cel_budget *b, uint64_t steps)
{
    if (!b)
        return true;
    if (b->exhausted || steps > b->left) {
        b->spent += b->left;
        b->left = 0;
        b->exhausted = true;
        return false;
    }
    b->left -= steps;
    b->spent += steps;
    if (b->deadline_ns && b->spent >= b->next_check) {
        b->next_check = b->spent + CEL_DEADLINE_CHECK_STEPS;
        if (clock_mono_ns(NULL) > b->deadline_ns) {
            /* this charge's work is done; none after it */
            b->left = 0;
            b->exhausted = true;
            b->late = true;
        }
    }
    return true;
}

/* Take `steps`; past the limit the whole evaluation stops at `idx` (as an abort does). */
static bool charge(struct evalctx *c, int32_t idx, uint64_t steps)
{
    if (c->over || c->aborted >= 0)
        return false;
    if (steps > c->limit - c->steps) {
        c->steps = c->limit;
        c->over = true;
        if (c->aborted < 0)
            c->aborted = idx;
        return false;
    }
    c->steps += steps;
    return true;
}

/* Comparing two versions parses both (semver_cmp_vals): measured as about 8 steps more than
 * their bytes (bench/cel_cost_bench.c). */
#define SEMVER_CMP_STEPS 8

/* The steps for traversing `bytes` bytes of strings. */
static uint64_t str_steps(size_t bytes)
{
    return bytes / CEL_COST_STRING_BYTES;
}

static struct val verr(int32_t node, const char *msg)
{
    struct val v = {.k = V_ERR, .s = msg, .node = node};
    return v;
}

static struct val vunk(int32_t node, const char *msg)
{
    struct val v = {.k = V_UNK, .s = msg, .node = node};
    return v;
}

static struct val vbool(bool b)
{
    struct val v = {.k = V_BOOL, .b = b};
    return v;
}

static struct val vint(int64_t i)
{
    struct val v = {.k = V_INT, .i = i};
    return v;
}

static bool bad(const struct val *v)
{
    return v->k == V_ERR || v->k == V_UNK;
}

/* Strict functions: any error makes the result an error; otherwise any unknown, unknown. */
static const struct val *worst(const struct val *a, const struct val *b)
{
    if (a->k == V_ERR)
        return a;
    if (b->k == V_ERR)
        return b;
    return a->k == V_UNK ? a : b;
}

static int cmp_bytes(const char *a, size_t al, const char *b, size_t bl)
{
    size_t m = al < bl ? al : bl;
    int c = m ? memcmp(a, b, m) : 0;
    if (c)
        return c < 0 ? -1 : 1;
    return al < bl ? -1 : al > bl;
}

static int semver_cmp_vals(const struct val *a, const struct val *b)
{
    struct semver x, y;
    semver_parse(a->s, a->len, &x); /* validated when the value was made */
    semver_parse(b->s, b->len, &y);
    return semver_compare(&x, &y);
}

/* lhs.Equal(rhs) in cel-go: heterogeneous equality is false, except that Semver and Quantity
 * return "no such overload" for a different type (apiserver/pkg/cel semver.go, quantity.go). */
static struct val eq(struct evalctx *c, const struct val *l, const struct val *r, int32_t node)
{
    if (l->k == V_STR && r->k == V_STR)
        charge(c, node, str_steps(l->len < r->len ? l->len : r->len));
    else if (l->k == V_SEMVER && r->k == V_SEMVER)
        charge(c, node, SEMVER_CMP_STEPS + str_steps(l->len + r->len));
    switch (l->k) {
    case V_BOOL:
        return vbool(r->k == V_BOOL && l->b == r->b);
    case V_INT:
        return vbool(r->k == V_INT && l->i == r->i);
    case V_STR:
        return vbool(r->k == V_STR && cmp_bytes(l->s, l->len, r->s, r->len) == 0);
    case V_QTY:
        if (r->k != V_QTY)
            return verr(node, "no such overload: quantity == non-quantity");
        return vbool(l->i == r->i);
    case V_SEMVER:
        if (r->k != V_SEMVER)
            return verr(node, "no such overload: version == non-version");
        return vbool(semver_cmp_vals(l, r) == 0);
    default:
        return verr(node, "internal error");
    }
}

static struct val eval(struct evalctx *c, int32_t idx);

static struct val eval_attr(struct evalctx *c, int32_t idx, const struct node *n)
{
    const char *pool = c->prog->pool;
    const struct cel_device *d = c->dev;
    if (n->kind == MAP_ATTR) {
        struct cel_attr_value av;
        memset(&av, 0, sizeof(av));
        enum cel_lookup l = CEL_LOOKUP_MISSING;
        if (d->attribute)
            l = d->attribute(d->ctx, pool + n->s1, n->l1, pool + n->s2, n->l2, &av);
        if (l == CEL_LOOKUP_MISSING)
            return verr(idx, "no such key");
        if (l != CEL_LOOKUP_FOUND)
            return vunk(idx, "attribute value not modelled");
        struct val v = {.k = V_BOOL};
        switch (av.kind) {
        case CEL_ATTR_BOOL:
            return vbool(av.b);
        case CEL_ATTR_INT:
            return vint(av.i);
        case CEL_ATTR_STRING:
            v.k = V_STR;
            v.s = av.s ? av.s : "";
            v.len = av.s ? av.len : 0;
            return v;
        case CEL_ATTR_VERSION: {
            struct semver sv;
            if (!av.s || !semver_parse(av.s, av.len, &sv))
                return verr(idx, "attribute: parse semantic version");
            v.k = V_SEMVER;
            v.s = av.s;
            v.len = av.len;
            return v;
        }
        }
        return vunk(idx, "attribute value not modelled");
    }
    int64_t milli = 0;
    enum cel_lookup l = CEL_LOOKUP_MISSING;
    if (d->capacity)
        l = d->capacity(d->ctx, pool + n->s1, n->l1, pool + n->s2, n->l2, &milli);
    if (l == CEL_LOOKUP_MISSING)
        return verr(idx, "no such key");
    if (l != CEL_LOOKUP_FOUND)
        return vunk(idx, "capacity value not modelled");
    struct val v = {.k = V_QTY, .i = milli};
    return v;
}

static struct val eval_has(struct evalctx *c, int32_t idx, const struct node *n)
{
    const char *pool = c->prog->pool;
    const struct cel_device *d = c->dev;
    const char *name = n->op == OP_HAS_KEY ? pool + n->s2 : NULL;
    size_t nlen = n->op == OP_HAS_KEY ? n->l2 : 0;
    enum cel_lookup l = CEL_LOOKUP_MISSING;
    if (n->kind == MAP_ATTR && d->attribute) {
        struct cel_attr_value av;
        memset(&av, 0, sizeof(av));
        l = d->attribute(d->ctx, pool + n->s1, n->l1, name, nlen, &av);
    } else if (n->kind == MAP_CAP && d->capacity) {
        int64_t milli;
        l = d->capacity(d->ctx, pool + n->s1, n->l1, name, nlen, &milli);
    }
    /* CEL_LOOKUP_UNKNOWN: present, only its value is not modelled */
    (void)idx;
    return vbool(l != CEL_LOOKUP_MISSING);
}

static struct val eval_logic(struct evalctx *c, const struct node *n)
{
    bool absorb = n->op == OP_OR; /* the value that decides: false for &&, true for || */
    struct val firsterr = {.k = V_BOOL}, firstunk = {.k = V_BOOL};
    for (int32_t k = n->a; k >= 0; k = c->prog->nodes[k].next) {
        struct val v = eval(c, k);
        if (c->aborted >= 0)
            return v;
        if (v.k == V_BOOL) {
            if (v.b == absorb)
                return v;
            continue;
        }
        if (v.k == V_UNK) {
            if (firstunk.k != V_UNK)
                firstunk = v;
            continue;
        }
        if (firsterr.k != V_ERR)
            firsterr = v.k == V_ERR ? v : verr(k, "no such overload: operand not bool");
    }
    if (firstunk.k == V_UNK)
        return firstunk;
    if (firsterr.k == V_ERR)
        return firsterr;
    return vbool(!absorb);
}

static struct val eval_cmp(struct evalctx *c, int32_t idx, const struct node *n)
{
    struct val l = eval(c, n->a), r = eval(c, n->b);
    if (bad(&l) || bad(&r))
        return *worst(&l, &r);
    if (n->sub == CMP_EQ || n->sub == CMP_NE) {
        struct val e = eq(c, &l, &r, idx);
        /* cel-go evalNe: Bool(Equal(l, r) != True), so a "no such overload" from Equal
         * makes != true while == stays an error */
        if (n->sub == CMP_NE)
            return vbool(!(e.k == V_BOOL && e.b));
        return e;
    }
    int o;
    if (l.k == V_INT && r.k == V_INT)
        o = l.i < r.i ? -1 : l.i > r.i;
    else if (l.k == V_STR && r.k == V_STR) {
        charge(c, idx, str_steps(l.len < r.len ? l.len : r.len));
        o = cmp_bytes(l.s, l.len, r.s, r.len);
    } else if (l.k == V_BOOL && r.k == V_BOOL)
        o = (int)l.b - (int)r.b;
    else
        return verr(idx, "no such overload: ordering of different or unordered types");
    switch (n->sub) {
    case CMP_LT:
        return vbool(o < 0);
    case CMP_LE:
        return vbool(o <= 0);
    case CMP_GT:
        return vbool(o > 0);
    default:
        return vbool(o >= 0);
    }
}

static bool is_literal(uint8_t op)
{
    return op == OP_INT || op == OP_STR || op == OP_BOOL;
}

/*
 * `x in [list]`. The Kubernetes CEL programs are planned with cel-go's OptOptimize: a list
 * literal of constants becomes a set (interpreter/planner.go maybeOptimizeSetMembership), an
 * empty one the constant false. The set lookup hashes x, and a version value is not hashable:
 * the Go runtime panics and the whole evaluation fails ("hash of unhashable type cel.Semver",
 * observed with k8s.io/dynamic-resource-allocation v0.34.4). Other lists use
 * baseList.Contains, where an element whose Equal is an error simply does not match.
 */
static struct val eval_in(struct evalctx *c, int32_t idx, const struct node *n)
{
    const struct node *list = &c->prog->nodes[n->b];
    if (list->a < 0)
        return vbool(false);
    bool constant = true;
    uint64_t elems = 0;
    for (int32_t k = list->a; k >= 0; k = c->prog->nodes[k].next, elems++)
        constant = constant && is_literal(c->prog->nodes[k].op);
    if (!charge(c, idx, elems)) /* the walk above */
        return verr(idx, "aborted");
    struct val l = eval(c, n->a);
    if (constant) {
        if (bad(&l))
            return l;
        if (l.k == V_SEMVER) {
            c->aborted = idx;
            return verr(idx, "internal error: hash of unhashable type (a version in a list of "
                             "literals)");
        }
    }
    struct val w = l;
    bool found = false;
    for (int32_t k = list->a; k >= 0; k = c->prog->nodes[k].next) {
        struct val item = eval(c, k);
        if (c->aborted >= 0)
            return item;
        w = *worst(&w, &item);
        if (bad(&w) || found)
            continue;
        struct val e = eq(c, &l, &item, idx);
        found = e.k == V_BOOL && e.b;
    }
    if (bad(&w))
        return w;
    return vbool(found);
}

static bool has_sub(const char *s, size_t sl, const char *sub, size_t subl)
{
    if (subl == 0)
        return true;
    for (size_t i = 0; i + subl <= sl; i++)
        if (memcmp(s + i, sub, subl) == 0)
            return true;
    return false;
}

static struct val eval_method(struct evalctx *c, int32_t idx, const struct node *n)
{
    struct val r = eval(c, n->a), a = eval(c, n->b);
    if (bad(&r) || bad(&a))
        return *worst(&r, &a);
    if (n->sub >= M_STARTS) {
        if (r.k != V_STR || a.k != V_STR)
            return verr(idx, "no such overload: string method on a non-string");
        /* contains() compares the argument at every offset */
        size_t bytes = a.len;
        if (n->sub == M_CONTAINS && a.len <= r.len)
            bytes = (r.len - a.len + 1) * (a.len ? a.len : 1);
        if (!charge(c, idx, str_steps(bytes)))
            return verr(idx, "aborted");
        if (n->sub == M_STARTS)
            return vbool(a.len <= r.len && memcmp(r.s, a.s, a.len) == 0);
        if (n->sub == M_ENDS)
            return vbool(a.len <= r.len && memcmp(r.s + r.len - a.len, a.s, a.len) == 0);
        return vbool(has_sub(r.s, r.len, a.s, a.len));
    }
    int o;
    if (r.k == V_QTY && a.k == V_QTY)
        o = r.i < a.i ? -1 : r.i > a.i;
    else if (r.k == V_SEMVER && a.k == V_SEMVER) {
        charge(c, idx, SEMVER_CMP_STEPS + str_steps(r.len + a.len));
        o = semver_cmp_vals(&r, &a);
    } else
        return verr(idx, "no such overload: comparison method on mismatched types");
    if (n->sub == M_COMPARE_TO)
        return vint(o);
    return vbool(n->sub == M_IS_GREATER ? o > 0 : o < 0);
}

static struct val eval(struct evalctx *c, int32_t idx)
{
    const struct node *n = &c->prog->nodes[idx];
    if (c->aborted >= 0 || !charge(c, idx, 1))
        return verr(c->aborted, "aborted");
    struct val v = {.k = V_BOOL};
    switch (n->op) {
    case OP_BOOL:
        return vbool(n->i != 0);
    case OP_INT:
        return vint(n->i);
    case OP_STR:
        v.k = V_STR;
        v.s = c->prog->pool + n->s1;
        v.len = n->l1;
        return v;
    case OP_QTY:
        v.k = V_QTY;
        v.i = n->i;
        return v;
    case OP_SEMVER:
        if (n->sub)
            return verr(idx, "semver(): not a semantic version");
        v.k = V_SEMVER;
        v.s = c->prog->pool + n->s1;
        v.len = n->l1;
        return v;
    case OP_DRIVER:
        v.k = V_STR;
        v.s = c->dev->driver ? c->dev->driver : "";
        v.len = c->dev->driver ? c->dev->driver_len : 0;
        return v;
    case OP_ATTR:
    case OP_CAP:
        return eval_attr(c, idx, n);
    case OP_HAS_DOMAIN:
    case OP_HAS_KEY:
        return eval_has(c, idx, n);
    case OP_NOT:
        v = eval(c, n->a);
        if (v.k == V_BOOL)
            v.b = !v.b;
        else if (!bad(&v))
            v = verr(idx, "no such overload: ! on a non-bool");
        return v;
    case OP_AND:
    case OP_OR:
        return eval_logic(c, n);
    case OP_CMP:
        return eval_cmp(c, idx, n);
    case OP_IN_LIST:
        return eval_in(c, idx, n);
    case OP_METHOD:
        return eval_method(c, idx, n);
    default:
        return vunk(idx, "internal: path evaluated");
    }
}

enum cel_result cel_eval(const struct cel_program *prog, const struct cel_device *dev, char *err,
                         size_t errlen)
{
    return cel_eval_budget(prog, dev, NULL, err, errlen);
}

size_t cel_program_size(const struct cel_program *prog)
{
    return prog ? prog->n : 0;
}

enum cel_result cel_eval_budget(const struct cel_program *prog, const struct cel_device *dev,
                                struct cel_budget *budget, char *err, size_t errlen)
{
    errbuf_printf(err, errlen, "%s", "");
    if (budget && budget->exhausted) {
        errbuf_printf(err, errlen, "%s", CEL_TOO_COSTLY);
        return CEL_UNKNOWN;
    }
    struct evalctx c = {
        .prog = prog, .dev = dev, .aborted = -1, .limit = budget ? budget->left : UINT64_MAX};
    struct val v = eval(&c, prog->root);
    if (budget)
        cel_budget_charge(budget, c.over ? UINT64_MAX : c.steps);
    if (c.over) {
        errbuf_printf(err, errlen, "%s", CEL_TOO_COSTLY);
        return CEL_UNKNOWN;
    }
    if (c.aborted >= 0)
        v = verr(c.aborted, "internal error: hash of unhashable type (a version in a list of "
                            "literals)");
    if (v.k == V_BOOL)
        return v.b ? CEL_TRUE : CEL_FALSE;
    if (v.k != V_ERR && v.k != V_UNK) {
        v = verr(prog->root, "result is not a bool");
    }
    const struct node *n = &prog->nodes[v.node];
    if ((n->op == OP_ATTR || n->op == OP_CAP) && strcmp(v.s, "no such key") == 0)
        errbuf_printf(err, errlen, "no such key: %.*s at offset %u", (int)n->l2, prog->pool + n->s2,
                      n->off);
    else
        errbuf_printf(err, errlen, "%s at offset %u", v.s, n->off);
    return v.k == V_ERR ? CEL_ERROR : CEL_UNKNOWN;
}
