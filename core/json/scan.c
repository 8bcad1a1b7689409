/* scan.c - the validating, pricing, member-cutting pass of scan.h. */
#include "scan.h"

#include <stdio.h>
#include <string.h>

#include "util/strconv.h"
#include "util/utf8.h"

static bool scan_fail(struct json_scan *sc, const char *what)
{
    snprintf(sc->err, sc->errlen, "malformed JSON: %s at byte %zu", what, sc->pos);
    return false;
}

static void skip_ws(struct json_scan *sc)
{
    while (sc->pos < sc->len && (sc->s[sc->pos] == ' ' || sc->s[sc->pos] == '\t' ||
                                 sc->s[sc->pos] == '\n' || sc->s[sc->pos] == '\r'))
        sc->pos++;
}

/*
 * The bytes at p[0, 8) that do not stand for themselves in a string (below 0x20, '"', '\\', or
 * from 0x80), as the high bit of each in a word, 0 when there is none. Word-at-a-time: a byte is
 * zero in x exactly when (x - 0x01..) & ~x has its high bit, below 0x20 exactly when
 * (x - 0x20..) & ~x has it; a borrow only marks bytes above a marked one, so the lowest mark is
 * always right.
 */
static uint64_t special8(const unsigned char *p)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    uint64_t quote = v ^ (ones * '"'), bslash = v ^ (ones * '\\');
    return (((quote - ones) & ~quote) | ((bslash - ones) & ~bslash) | ((v - ones * 0x20) & ~v) |
            v) &
           high;
}

/*
 * A string at sc->pos (the opening quote). Its bytes go into *bytes; when key is non-NULL, its
 * decoded text (up to keylen - 1 ASCII characters) goes there, "" when longer or not ASCII.
 */
static bool scan_string(struct json_scan *sc, size_t *bytes, char *key, size_t keylen)
{
    size_t start = ++sc->pos, k = 0;
    bool ascii = true, stopped = false; /* json-c cuts a member name at U+0000 */
    for (;;) {
        /* printable ASCII but '"' and '\\': one byte, itself; 8 bytes at a time, then one by
         * one */
        size_t run = sc->pos;
        while (sc->len - run >= 8) {
            uint64_t hit = special8(sc->s + run);
            if (!hit) {
                run += 8;
                continue;
            }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            run += (size_t)__builtin_ctzll(hit) / 8; /* the first byte that is not plain */
#endif
            break;
        }
        while (run < sc->len && sc->s[run] >= 0x20 && sc->s[run] < 0x80 && sc->s[run] != '"' &&
               sc->s[run] != '\\')
            run++;
        if (key && !stopped) {
            size_t n = run - sc->pos;
            if (n > keylen - 1 - k) {
                n = keylen - 1 - k;
                ascii = false;
            }
            memcpy(key + k, sc->s + sc->pos, n);
            k += n;
        }
        sc->pos = run;
        if (sc->pos >= sc->len)
            return scan_fail(sc, "unterminated string");
        unsigned char c = sc->s[sc->pos];
        unsigned cp = c;
        if (c == '"')
            break;
        if (c < 0x20)
            return scan_fail(sc, "control character in string");
        if (c == '\\') {
            if (sc->pos + 1 >= sc->len)
                return scan_fail(sc, "unterminated string");
            unsigned char e = sc->s[sc->pos + 1];
            static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
            const char *hit = e ? strchr(esc_in, e) : NULL;
            if (hit) {
                cp = (unsigned char)esc_out[hit - esc_in];
                sc->pos += 2;
            } else if (e == 'u') {
                cp = 0;
                for (size_t i = 0; i < 4; i++) {
                    int h =
                        sc->pos + 2 + i < sc->len ? strconv_hex_digit(sc->s[sc->pos + 2 + i]) : -1;
                    if (h < 0)
                        return scan_fail(sc, "invalid \\u escape");
                    cp = cp << 4 | (unsigned)h;
                }
                sc->pos += 6;
            } else {
                return scan_fail(sc, "invalid escape in string");
            }
        } else {
            size_t n = utf8_decode(sc->s + sc->pos, sc->len - sc->pos, &cp);
            if (n == 0)
                return scan_fail(sc, "invalid UTF-8 in string");
            sc->pos += n;
        }
        if (key && !stopped) {
            if (cp == 0)
                stopped = true;
            else if (cp >= 0x80 || k + 1 >= keylen)
                ascii = false;
            else
                key[k++] = (char)cp;
        }
    }
    *bytes = sc->pos - start;
    sc->pos++; /* closing quote */
    if (key)
        key[ascii ? k : 0] = 0;
    return true;
}

/* RFC 8259 number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? (no NaN, no Infinity). */
static bool scan_number(struct json_scan *sc)
{
    const unsigned char *s = sc->s;
    size_t p = sc->pos, len = sc->len;
    if (p < len && s[p] == '-')
        p++;
    if (p < len && s[p] == '0') {
        p++;
    } else if (p < len && s[p] >= '1' && s[p] <= '9') {
        while (p < len && s[p] >= '0' && s[p] <= '9')
            p++;
    } else {
        sc->pos = p;
        return scan_fail(sc, "invalid number");
    }
    if (p < len && s[p] == '.') {
        size_t d = ++p;
        while (p < len && s[p] >= '0' && s[p] <= '9')
            p++;
        if (p == d) {
            sc->pos = p;
            return scan_fail(sc, "invalid number");
        }
    }
    if (p < len && (s[p] == 'e' || s[p] == 'E')) {
        p++;
        if (p < len && (s[p] == '+' || s[p] == '-'))
            p++;
        size_t d = p;
        while (p < len && s[p] >= '0' && s[p] <= '9')
            p++;
        if (p == d) {
            sc->pos = p;
            return scan_fail(sc, "invalid number");
        }
    }
    sc->pos = p;
    return true;
}

static bool scan_literal(struct json_scan *sc, const char *lit)
{
    size_t n = strlen(lit);
    if (sc->len - sc->pos < n || memcmp(sc->s + sc->pos, lit, n) != 0)
        return scan_fail(sc, "unexpected character");
    sc->pos += n;
    return true;
}

/* The rule of member `key` in an object read under `node`, NULL when none names it. */
static const struct json_member_rule *rule_of(const struct json_scan *sc, unsigned char node,
                                              const char *key, size_t *index)
{
    if (node == JSON_NODE_ALL || node == JSON_NODE_CUT || !sc->schema ||
        node >= sc->schema->n_nodes)
        return NULL;
    const struct json_schema_node *n = &sc->schema->nodes[node];
    for (size_t i = 0; i < n->n_members; i++)
        if (n->members[i].name[0] == key[0] && strcmp(n->members[i].name, key) == 0) {
            *index = i;
            return &n->members[i];
        }
    return NULL;
}

/* The node of a member not named by a rule of `node`. */
static unsigned char other_of(const struct json_scan *sc, unsigned char node)
{
    if (node == JSON_NODE_ALL || node == JSON_NODE_CUT || !sc->schema ||
        node >= sc->schema->n_nodes)
        return JSON_NODE_ALL;
    return sc->schema->nodes[node].other;
}

/* A value starts at sc->pos, inside `depth` open containers. */
static void value_begin(struct json_scan *sc)
{
    sc->values++;
    if (sc->depth > 0 && !sc->is_object[sc->depth - 1])
        sc->cost[sc->region] += JSON_COST_ELEMENT;
    if (sc->next_region) {
        sc->region = sc->next_region;
        sc->region_depth = sc->depth;
        sc->span[sc->region].start = sc->pos;
        sc->next_region = 0;
    }
}

/* A value ended at sc->pos (after a scalar, or after the closing bracket with depth popped). */
static void value_end(struct json_scan *sc)
{
    if (sc->region && sc->depth == sc->region_depth) {
        sc->span[sc->region].end = sc->pos;
        sc->region = 0;
    }
    if (sc->cut_depth == sc->depth) {
        /* the member cut ends with its value; when nothing before it in its object was kept,
         * it also takes the ',' after it, else it began at the ',' before it */
        sc->cuts[sc->n_cuts++] = (struct json_cut){sc->cut_start, sc->pos, ""};
        sc->cut_comma = !sc->kept[sc->depth - 1];
        sc->cut_depth = -1;
    }
}

static bool duplicate(struct json_scan *sc, const struct json_member_rule *rule)
{
    char what[160];
    snprintf(what, sizeof(what), "duplicate member \"%s\"", rule->label ? rule->label : rule->name);
    return scan_fail(sc, what);
}

/* A member name `key` was read (and its ':') in the object at depth sc->depth: check its rule,
 * decide whether its value is kept or cut and under which node it is read. */
static bool member_name(struct json_scan *sc, const char *key)
{
    int d = sc->depth - 1;
    size_t index = 0;
    const struct json_member_rule *rule = rule_of(sc, sc->node[d], key, &index);
    unsigned char child = rule ? rule->node : other_of(sc, sc->node[d]);
    if (rule && rule->unique && index < 32) {
        if (sc->unique_seen[d] >> index & 1u)
            return duplicate(sc, rule);
        sc->unique_seen[d] |= 1u << index;
    }
    if (child == JSON_NODE_CUT && sc->prune && sc->n_cuts < JSON_SCAN_MAX_CUTS) {
        sc->cut_depth = sc->depth;
        sc->cut_start = sc->kept[d] ? sc->comma[d] : sc->key_start;
        sc->next_node = JSON_NODE_ALL; /* nothing is recorded inside a cut */
        return true;
    }
    if (rule && rule->region && rule->region < JSON_MAX_REGIONS && !sc->region) {
        if (sc->region_seen[rule->region])
            return duplicate(sc, rule);
        sc->region_seen[rule->region] = true;
        sc->next_region = rule->region;
    }
    /* kept (or no cut left: parsed, and priced all the same) */
    sc->kept[d] = true;
    sc->next_node = child == JSON_NODE_CUT ? JSON_NODE_ALL : child;
    return true;
}

/* The pass of json_scan(): a state machine over the text, one byte class at a time. */
static bool scan_json(struct json_scan *sc)
{
    enum { VALUE, VALUE_OR_CLOSE, NAME, NAME_OR_CLOSE, AFTER } st = VALUE;
    for (;;) {
        skip_ws(sc);
        if (st == AFTER && sc->depth == 0) {
            if (sc->pos != sc->len)
                return scan_fail(sc, "trailing data after the value");
            return true;
        }
        if (sc->pos >= sc->len)
            return scan_fail(sc, "unexpected end of input");
        unsigned char c = sc->s[sc->pos];
        size_t bytes;
        switch (st) {
        case VALUE_OR_CLOSE:
        case NAME_OR_CLOSE:
            if (c == (st == VALUE_OR_CLOSE ? ']' : '}')) {
                sc->pos++;
                sc->depth--;
                value_end(sc);
                st = AFTER;
                continue;
            }
            if (st == NAME_OR_CLOSE) {
                st = NAME;
                continue;
            }
            __attribute__((fallthrough)); /* a value */
        case VALUE:
            value_begin(sc);
            if (c == '{' || c == '[') {
                if (sc->depth >= (int)sc->max_depth)
                    return scan_fail(sc, "nesting too deep");
                if (sc->depth == 0)
                    sc->root_is_object = c == '{';
                sc->node[sc->depth] = sc->depth == 0
                                          ? (sc->schema ? sc->schema->root : JSON_NODE_ALL)
                                      : sc->is_object[sc->depth - 1] ? sc->next_node
                                                                     : sc->node[sc->depth - 1];
                sc->kept[sc->depth] = false;
                sc->unique_seen[sc->depth] = 0;
                sc->is_object[sc->depth++] = c == '{';
                sc->cost[sc->region] += c == '{' ? JSON_COST_OBJECT : JSON_COST_ARRAY;
                sc->pos++;
                st = c == '{' ? NAME_OR_CLOSE : VALUE_OR_CLOSE;
                continue;
            }
            if (c == '"') {
                if (!scan_string(sc, &bytes, NULL, 0))
                    return false;
                sc->cost[sc->region] += JSON_COST_SCALAR + bytes;
            } else if (c == '-' || (c >= '0' && c <= '9')) {
                if (!scan_number(sc))
                    return false;
                sc->cost[sc->region] += JSON_COST_SCALAR;
            } else if (c == 't' || c == 'f' || c == 'n') {
                if (!scan_literal(sc, c == 't' ? "true" : c == 'f' ? "false" : "null"))
                    return false;
                sc->cost[sc->region] += JSON_COST_SCALAR;
            } else {
                return scan_fail(sc, "unexpected character");
            }
            value_end(sc);
            st = AFTER;
            continue;
        case NAME: {
            char key[JSON_SCAN_NAME_MAX + 1]; /* longer names match no rule */
            if (c != '"')
                return scan_fail(sc, "expected a member name");
            sc->key_start = sc->pos;
            if (!scan_string(sc, &bytes, key, sizeof(key)))
                return false;
            sc->cost[sc->region] += JSON_COST_MEMBER + bytes;
            skip_ws(sc);
            if (sc->pos >= sc->len || sc->s[sc->pos] != ':')
                return scan_fail(sc, "expected ':'");
            sc->pos++;
            if (!member_name(sc, key))
                return false;
            st = VALUE;
            continue;
        }
        case AFTER: {
            bool obj = sc->is_object[sc->depth - 1];
            if (c == ',' && sc->cut_comma)
                sc->cuts[sc->n_cuts - 1].end = sc->pos + 1;
            sc->cut_comma = false;
            if (c == ',' && obj)
                sc->comma[sc->depth - 1] = sc->pos;
            sc->pos++;
            if (c == ',') {
                st = obj ? NAME : VALUE;
            } else if (c == (obj ? '}' : ']')) {
                sc->depth--;
                value_end(sc);
            } else {
                sc->pos--;
                return scan_fail(sc, obj ? "expected ',' or '}'" : "expected ',' or ']'");
            }
            continue;
        }
        }
    }
}

bool json_scan(struct json_scan *sc, const char *text, size_t len,
               const struct json_scan_opts *opts, char *err, size_t errlen)
{
    /* only the fields the pass reads before writing are set: the per-depth arrays are written
     * as each container opens, the cuts as they are found */
    sc->root_is_object = false;
    memset(sc->cost, 0, sizeof(sc->cost));
    memset(sc->region_seen, 0, sizeof(sc->region_seen));
    memset(sc->span, 0, sizeof(sc->span));
    sc->values = 0;
    sc->n_cuts = 0;
    sc->s = (const unsigned char *)text;
    sc->len = len;
    sc->pos = 0;
    sc->schema = opts->schema;
    sc->max_depth = opts->max_depth < JSON_SCAN_MAX_DEPTH ? opts->max_depth : JSON_SCAN_MAX_DEPTH;
    sc->prune = opts->schema && !opts->keep_all;
    sc->depth = 0;
    sc->next_node = JSON_NODE_ALL;
    sc->next_region = 0;
    sc->key_start = 0;
    sc->cut_depth = -1;
    sc->region_depth = -1;
    sc->cut_start = 0;
    sc->cut_comma = false;
    sc->region = 0;
    sc->err = err;
    sc->errlen = errlen;
    return scan_json(sc);
}
