/* jsonpath.c - kubectl's JSONPath templates over json-c objects (jsonpath.h). */
#include "jsonpath.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/errbuf.h"
#include "util/escape.h"
#include "util/result.h"

enum seg_kind {
    SEG_NAMES,   /* .name, ['a','b'] */
    SEG_ALL,     /* .*, [*] */
    SEG_INDICES, /* [n], [1,2] */
    SEG_SLICE,   /* [a:b:c] */
    SEG_DESCEND, /* .. : the value and every object or array below it, in document order */
    SEG_FILTER,  /* [?(...)] */
};

enum filter_op { OP_EXISTS, OP_EQ, OP_NE, OP_LT, OP_GT, OP_LE, OP_GE };
enum lit_kind { LIT_STRING, LIT_NUMBER, LIT_BOOL, LIT_NULL };

struct path;

struct filter {
    struct path *lhs; /* relative to the element (@) */
    enum filter_op op;
    enum lit_kind lit;
    char *s;
    double num;
    bool b;
};

struct seg {
    enum seg_kind kind;
    char **names;
    size_t n_names;
    long *idx;
    size_t n_idx;
    long start, end, step;
    bool has_start, has_end;
    struct filter *filter;
};

struct path {
    bool from_root; /* '$': the root; otherwise the current object (@, or a range's element) */
    struct seg *segs;
    size_t n;
};

enum tnode_kind { T_TEXT, T_PATH, T_RANGE };

struct tnode {
    enum tnode_kind kind;
    char *text; /* T_TEXT */
    size_t text_len;
    struct path *path;  /* T_PATH, T_RANGE */
    struct tnode *body; /* T_RANGE */
    size_t n_body;
};

struct jsonpath {
    struct tnode *nodes;
    size_t n;
};

/* ---- freeing ------------------------------------------------------------------------------- */

static void path_free(struct path *p);

static void seg_cleanup(struct seg *s)
{
    for (size_t i = 0; i < s->n_names; i++)
        free(s->names[i]);
    free(s->names);
    free(s->idx);
    if (s->filter) {
        path_free(s->filter->lhs);
        free(s->filter->s);
        free(s->filter);
    }
}

static void path_free(struct path *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        seg_cleanup(&p->segs[i]);
    free(p->segs);
    free(p);
}

static void nodes_free(struct tnode *nodes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(nodes[i].text);
        path_free(nodes[i].path);
        nodes_free(nodes[i].body, nodes[i].n_body);
    }
    free(nodes);
}

void jsonpath_free(struct jsonpath *jp)
{
    if (!jp)
        return;
    nodes_free(jp->nodes, jp->n);
    free(jp);
}

/* ---- parsing ------------------------------------------------------------------------------- */

struct parser {
    const char *s; /* the template */
    size_t pos, len;
    char *err;
    size_t errlen;
    int rc;
};

__attribute__((format(printf, 2, 3))) static int perr(struct parser *p, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (!p->rc) {
        errbuf_printf(p->err, p->errlen, "%s at character %zu of the template", msg, p->pos + 1);
        p->rc = K_EINVAL;
    }
    return p->rc;
}

static int nomem(struct parser *p)
{
    if (!p->rc) {
        errbuf_printf(p->err, p->errlen, "out of memory");
        p->rc = K_ENOMEM;
    }
    return p->rc;
}

static char peek(const struct parser *p)
{
    return p->pos < p->len ? p->s[p->pos] : '\0';
}

static void skip_space(struct parser *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t'))
        p->pos++;
}

/* A quoted string ('...' or "..."), backslash escapes \n \t \r \\ \" \' ; *out owned. */
static int parse_quoted(struct parser *p, char **out, size_t *out_len)
{
    char q = peek(p);
    p->pos++;
    char *b = malloc(p->len - p->pos + 1);
    if (!b)
        return nomem(p);
    size_t n = 0;
    while (p->pos < p->len && p->s[p->pos] != q) {
        char c = p->s[p->pos++];
        if (c == '\\' && p->pos < p->len) {
            char e = p->s[p->pos++];
            c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
        }
        b[n++] = c;
    }
    if (p->pos >= p->len) {
        free(b);
        return perr(p, "unterminated quoted string");
    }
    p->pos++; /* the closing quote */
    b[n] = '\0';
    *out = b;
    if (out_len)
        *out_len = n;
    return K_OK;
}

static bool name_char(char c)
{
    return c && !strchr(".[]{}() \t,=!<>@$\"'", c);
}

static struct seg *add_seg(struct parser *p, struct path *path, enum seg_kind kind)
{
    struct seg *grown = realloc(path->segs, (path->n + 1) * sizeof(*grown));
    if (!grown) {
        nomem(p);
        return NULL;
    }
    path->segs = grown;
    struct seg *s = &path->segs[path->n++];
    memset(s, 0, sizeof(*s));
    s->kind = kind;
    s->step = 1;
    return s;
}

static int add_name(struct parser *p, struct seg *s, const char *name, size_t len)
{
    char **grown = realloc(s->names, (s->n_names + 1) * sizeof(*grown));
    if (!grown)
        return nomem(p);
    s->names = grown;
    if (!(s->names[s->n_names] = strndup(name, len)))
        return nomem(p);
    s->n_names++;
    return K_OK;
}

static int parse_int(struct parser *p, long *out)
{
    const char *start = p->s + p->pos;
    char *end;
    errno = 0;
    long v = strtol(start, &end, 10);
    if (end == start || errno)
        return perr(p, "want a number");
    p->pos += (size_t)(end - start);
    *out = v;
    return K_OK;
}

static int parse_path(struct parser *p, struct path **out, bool in_filter);

static int parse_filter(struct parser *p, struct seg *s)
{
    /* after "[?(" */
    skip_space(p);
    if (peek(p) != '@')
        return perr(p, "a filter starts with @ (only [?(@.path OP value)] is supported)");
    struct filter *f = calloc(1, sizeof(*f));
    if (!f)
        return nomem(p);
    s->filter = f;
    if (parse_path(p, &f->lhs, true))
        return p->rc;
    skip_space(p);
    static const struct {
        const char *text;
        enum filter_op op;
    } ops[] = {{"==", OP_EQ}, {"!=", OP_NE}, {"<=", OP_LE},
               {">=", OP_GE}, {"<", OP_LT},  {">", OP_GT}};
    f->op = OP_EXISTS;
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (strncmp(p->s + p->pos, ops[i].text, strlen(ops[i].text)) == 0) {
            f->op = ops[i].op;
            p->pos += strlen(ops[i].text);
            break;
        }
    if (f->op != OP_EXISTS) {
        skip_space(p);
        char c = peek(p);
        if (c == '"' || c == '\'') {
            f->lit = LIT_STRING;
            if (parse_quoted(p, &f->s, NULL))
                return p->rc;
        } else if (strncmp(p->s + p->pos, "true", 4) == 0 ||
                   strncmp(p->s + p->pos, "false", 5) == 0) {
            f->lit = LIT_BOOL;
            f->b = c == 't';
            p->pos += f->b ? 4 : 5;
        } else if (strncmp(p->s + p->pos, "null", 4) == 0) {
            f->lit = LIT_NULL;
            p->pos += 4;
        } else {
            const char *start = p->s + p->pos;
            char *end;
            f->num = strtod(start, &end);
            if (end == start)
                return perr(p, "want a quoted string, a number, true, false or null");
            f->lit = LIT_NUMBER;
            p->pos += (size_t)(end - start);
        }
        skip_space(p);
    }
    if (peek(p) == '&' || peek(p) == '|' || peek(p) == '=')
        return perr(p, "&&, || and =~ are not supported in filters");
    if (peek(p) != ')')
        return perr(p, "want ')' to end the filter");
    p->pos++;
    return K_OK;
}

/* After '[': the subscript up to and including ']'. */
static int parse_bracket(struct parser *p, struct path *path)
{
    skip_space(p);
    char c = peek(p);
    if (c == '*') {
        p->pos++;
        if (!add_seg(p, path, SEG_ALL))
            return p->rc;
    } else if (c == '?') {
        p->pos++;
        if (peek(p) != '(')
            return perr(p, "want '(' after '?'");
        p->pos++;
        struct seg *s = add_seg(p, path, SEG_FILTER);
        if (!s || parse_filter(p, s))
            return p->rc;
    } else if (c == '\'' || c == '"') {
        struct seg *s = add_seg(p, path, SEG_NAMES);
        if (!s)
            return p->rc;
        for (;;) {
            char *name;
            size_t len;
            skip_space(p);
            if (peek(p) != '\'' && peek(p) != '"')
                return perr(p, "want a quoted name");
            if (parse_quoted(p, &name, &len))
                return p->rc;
            int rc = add_name(p, s, name, len);
            free(name);
            if (rc)
                return rc;
            skip_space(p);
            if (peek(p) != ',')
                break;
            p->pos++;
        }
    } else if (c == '-' || c == ':' || isdigit((unsigned char)c)) {
        long first = 0;
        bool has_first = c != ':';
        if (has_first && parse_int(p, &first))
            return p->rc;
        skip_space(p);
        if (peek(p) == ':') {
            struct seg *s = add_seg(p, path, SEG_SLICE);
            if (!s)
                return p->rc;
            s->has_start = has_first;
            s->start = first;
            p->pos++;
            skip_space(p);
            if (peek(p) == '-' || isdigit((unsigned char)peek(p))) {
                s->has_end = true;
                if (parse_int(p, &s->end))
                    return p->rc;
            }
            skip_space(p);
            if (peek(p) == ':') {
                p->pos++;
                if (parse_int(p, &s->step))
                    return p->rc;
                if (s->step <= 0)
                    return perr(p, "a slice's step must be positive");
            }
        } else {
            struct seg *s = add_seg(p, path, SEG_INDICES);
            if (!s)
                return p->rc;
            for (;;) {
                long *grown = realloc(s->idx, (s->n_idx + 1) * sizeof(*grown));
                if (!grown)
                    return nomem(p);
                s->idx = grown;
                s->idx[s->n_idx++] = first;
                skip_space(p);
                if (peek(p) != ',')
                    break;
                p->pos++;
                skip_space(p);
                if (parse_int(p, &first))
                    return p->rc;
            }
        }
    } else {
        return perr(p, "want *, ?(...), a quoted name, an index or a slice after '['");
    }
    skip_space(p);
    if (peek(p) != ']')
        return perr(p, "want ']'");
    p->pos++;
    return K_OK;
}

/* A path: [$|@] then .name .* ..name [..] ...; stops at anything else. */
static int parse_path(struct parser *p, struct path **out, bool in_filter)
{
    struct path *path = calloc(1, sizeof(*path));
    if (!path)
        return nomem(p);
    *out = path;
    char c = peek(p);
    if (c == '$') {
        path->from_root = true;
        p->pos++;
    } else if (c == '@') {
        p->pos++;
    }
    for (;;) {
        c = peek(p);
        if (c == '.' && p->pos + 1 < p->len && p->s[p->pos + 1] == '.') {
            p->pos += 2;
            if (!add_seg(p, path, SEG_DESCEND))
                return p->rc;
            if (peek(p) == '[')
                continue;
            c = '.'; /* a name or * follows */
            p->pos--;
        }
        if (c == '.') {
            p->pos++;
            if (peek(p) == '*') {
                p->pos++;
                if (!add_seg(p, path, SEG_ALL))
                    return p->rc;
                continue;
            }
            size_t start = p->pos;
            bool escaped = false;
            /* kubectl's escaped dot: nvidia\.com/gpu is one name, "nvidia.com/gpu" */
            while (p->pos < p->len &&
                   ((peek(p) == '\\' && p->pos + 1 < p->len) || name_char(peek(p)))) {
                escaped |= peek(p) == '\\';
                p->pos += peek(p) == '\\' ? 2 : 1;
            }
            if (p->pos == start) {
                if (path->n == 0 && !in_filter) /* "{.}" or "{@.}": the current object */
                    continue;
                return perr(p, "want a name after '.'");
            }
            struct seg *s = add_seg(p, path, SEG_NAMES);
            if (!s)
                return p->rc;
            if (!escaped) {
                if (add_name(p, s, p->s + start, p->pos - start))
                    return p->rc;
                continue;
            }
            char *plain = malloc(p->pos - start);
            if (!plain)
                return nomem(p);
            size_t n = 0;
            for (size_t i = start; i < p->pos; i++) {
                if (p->s[i] == '\\')
                    i++;
                plain[n++] = p->s[i];
            }
            int arc = add_name(p, s, plain, n);
            free(plain);
            if (arc)
                return p->rc;
        } else if (c == '[') {
            p->pos++;
            if (parse_bracket(p, path))
                return p->rc;
        } else {
            return K_OK;
        }
    }
}

/* One "{...}" after the '{'; adds a node to (*nodes, *n). Sets *end for {end}. */
static int parse_action(struct parser *p, struct tnode **nodes, size_t *n, bool *end, bool *range)
{
    skip_space(p);
    struct tnode node = {0};
    *end = *range = false;
    if (strncmp(p->s + p->pos, "end", 3) == 0 && !name_char(p->s[p->pos + 3])) {
        p->pos += 3;
        *end = true;
    } else if (strncmp(p->s + p->pos, "range", 5) == 0 && (p->s[p->pos + 5] == ' ')) {
        p->pos += 5;
        skip_space(p);
        node.kind = T_RANGE;
        if (parse_path(p, &node.path, false))
            goto fail;
        *range = true;
    } else if (peek(p) == '"' || peek(p) == '\'') {
        node.kind = T_TEXT;
        if (parse_quoted(p, &node.text, &node.text_len))
            goto fail;
    } else if (peek(p) == '.' || peek(p) == '[' || peek(p) == '$' || peek(p) == '@') {
        node.kind = T_PATH;
        if (parse_path(p, &node.path, false))
            goto fail;
    } else {
        perr(p, "want a path (.name, [..], $, @), a quoted string, range or end");
        goto fail;
    }
    skip_space(p);
    if (peek(p) != '}') {
        perr(p, "want '}' (function calls and other JSONPath forms are not supported)");
        goto fail;
    }
    p->pos++;
    if (*end)
        return K_OK;
    struct tnode *grown = realloc(*nodes, (*n + 1) * sizeof(*grown));
    if (!grown) {
        nomem(p);
        goto fail;
    }
    *nodes = grown;
    (*nodes)[(*n)++] = node;
    return K_OK;
fail:
    free(node.text);
    path_free(node.path);
    return p->rc;
}

/* Nodes up to the end of the template (depth 0) or the {end} of a range. */
static int parse_nodes(struct parser *p, struct tnode **nodes, size_t *n, int depth)
{
    while (p->pos < p->len) {
        if (peek(p) != '{') {
            size_t start = p->pos;
            while (p->pos < p->len && p->s[p->pos] != '{')
                p->pos++;
            struct tnode *grown = realloc(*nodes, (*n + 1) * sizeof(*grown));
            if (!grown)
                return nomem(p);
            *nodes = grown;
            struct tnode *t = &(*nodes)[*n];
            memset(t, 0, sizeof(*t));
            t->kind = T_TEXT;
            t->text_len = p->pos - start;
            if (!(t->text = strndup(p->s + start, t->text_len)))
                return nomem(p);
            (*n)++;
            continue;
        }
        p->pos++;
        bool end, range;
        if (parse_action(p, nodes, n, &end, &range))
            return p->rc;
        if (end) {
            if (depth == 0)
                return perr(p, "{end} without {range}");
            return K_OK;
        }
        if (range) {
            if (depth >= 16)
                return perr(p, "ranges nested too deep");
            struct tnode *body = NULL;
            size_t nb = 0;
            int rc = parse_nodes(p, &body, &nb, depth + 1);
            (*nodes)[*n - 1].body = body; /* freed with the node, also on error */
            (*nodes)[*n - 1].n_body = nb;
            if (rc)
                return rc;
        }
    }
    if (depth > 0)
        return perr(p, "{range} without {end}");
    return K_OK;
}

int jsonpath_parse(const char *tmpl, bool relaxed, struct jsonpath **out, char *err, size_t errlen)
{
    *out = NULL;
    if (errlen)
        err[0] = '\0';
    size_t len = strlen(tmpl);
    if (len > JSONPATH_MAX_TEMPLATE) {
        errbuf_printf(err, errlen, "template longer than %d bytes", JSONPATH_MAX_TEMPLATE);
        return K_ETOOBIG;
    }
    char *owned = NULL;
    if (relaxed) {
        /* kubectl's RelaxedJSONPathExpression: "{.a}", ".a" and "a" are one expression */
        const char *in = tmpl;
        size_t n = len;
        if (n >= 2 && in[0] == '{' && in[n - 1] == '}') {
            in++;
            n -= 2;
        }
        if (memchr(in, '{', n) || memchr(in, '}', n) || n == 0) {
            errbuf_printf(err, errlen,
                          "unexpected path string, expected a 'name1.name2' or "
                          "'.name1.name2' or '{name1.name2}' or '{.name1.name2}'");
            return K_EINVAL;
        }
        bool dot = in[0] == '.' || in[0] == '[' || in[0] == '$' || in[0] == '@';
        if (asprintf(&owned, "{%s%.*s}", dot ? "" : ".", (int)n, in) < 0)
            return K_ENOMEM;
        tmpl = owned;
        len = strlen(owned);
    }
    struct jsonpath *jp = calloc(1, sizeof(*jp));
    if (!jp) {
        free(owned);
        return K_ENOMEM;
    }
    struct parser p = {.s = tmpl, .len = len, .err = err, .errlen = errlen};
    int rc = parse_nodes(&p, &jp->nodes, &jp->n, 0);
    free(owned);
    if (rc) {
        jsonpath_free(jp);
        return rc;
    }
    *out = jp;
    return K_OK;
}

/* ---- evaluation ---------------------------------------------------------------------------- */

/* A set of values (borrowed; NULL is JSON null). */
struct vals {
    json_object **v;
    size_t n, cap;
    int rc;
};

static void vals_push(struct vals *s, json_object *o)
{
    if (s->rc)
        return;
    if (s->n >= JSONPATH_MAX_RESULTS) {
        s->rc = K_ETOOBIG;
        return;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        json_object **grown = realloc(s->v, cap * sizeof(*grown));
        if (!grown) {
            s->rc = K_ENOMEM;
            return;
        }
        s->v = grown;
        s->cap = cap;
    }
    s->v[s->n++] = o;
}

static void descend(json_object *o, struct vals *out, int depth)
{
    if (out->rc || depth > 200)
        return;
    if (json_object_is_type(o, json_type_object)) {
        vals_push(out, o);
        json_object_object_foreach(o, k, v)
        {
            (void)k;
            descend(v, out, depth + 1);
        }
    } else if (json_object_is_type(o, json_type_array)) {
        vals_push(out, o);
        size_t n = json_object_array_length(o);
        for (size_t i = 0; i < n; i++)
            descend(json_object_array_get_idx(o, i), out, depth + 1);
    }
}

static int eval_path(const struct path *path, json_object *root, json_object *cur,
                     struct vals *out);

static double num_of(json_object *o)
{
    return json_object_is_type(o, json_type_int) ? (double)json_object_get_int64(o)
                                                 : json_object_get_double(o);
}

static bool filter_keeps(const struct filter *f, json_object *root, json_object *el, int *rc)
{
    struct vals lhs = {0};
    *rc = eval_path(f->lhs, root, el, &lhs);
    bool found = lhs.n > 0;
    json_object *v = found ? lhs.v[0] : NULL;
    free(lhs.v);
    if (*rc || !found)
        return false;
    if (f->op == OP_EXISTS)
        return true;
    int cmp;
    bool comparable = true;
    switch (f->lit) {
    case LIT_STRING:
        comparable = json_object_is_type(v, json_type_string);
        cmp = comparable ? strcmp(json_object_get_string(v), f->s) : 0;
        break;
    case LIT_NUMBER: {
        comparable =
            json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
        double d = comparable ? num_of(v) : 0;
        cmp = d < f->num ? -1 : d > f->num ? 1 : 0;
        break;
    }
    case LIT_BOOL:
        comparable = json_object_is_type(v, json_type_boolean);
        cmp = comparable ? (int)json_object_get_boolean(v) - (int)f->b : 0;
        break;
    case LIT_NULL:
    default:
        comparable = v == NULL;
        cmp = 0;
        break;
    }
    switch (f->op) {
    case OP_EQ:
        return comparable && cmp == 0;
    case OP_NE:
        return !comparable || cmp != 0;
    case OP_LT:
        return comparable && cmp < 0;
    case OP_GT:
        return comparable && cmp > 0;
    case OP_LE:
        return comparable && cmp <= 0;
    case OP_GE:
        return comparable && cmp >= 0;
    case OP_EXISTS:
    default:
        return true;
    }
}

static void apply_seg(const struct seg *s, json_object *root, json_object *o, struct vals *out)
{
    bool obj = json_object_is_type(o, json_type_object);
    bool arr = json_object_is_type(o, json_type_array);
    size_t len = arr ? json_object_array_length(o) : 0;
    switch (s->kind) {
    case SEG_NAMES:
        for (size_t i = 0; obj && i < s->n_names; i++) {
            json_object *v;
            if (json_object_object_get_ex(o, s->names[i], &v))
                vals_push(out, v);
        }
        break;
    case SEG_ALL:
        if (obj) {
            json_object_object_foreach(o, k, v)
            {
                (void)k;
                vals_push(out, v);
            }
        }
        for (size_t i = 0; i < len; i++)
            vals_push(out, json_object_array_get_idx(o, i));
        break;
    case SEG_INDICES:
        for (size_t i = 0; arr && i < s->n_idx; i++) {
            long ix = s->idx[i] < 0 ? (long)len + s->idx[i] : s->idx[i];
            if (ix >= 0 && (size_t)ix < len)
                vals_push(out, json_object_array_get_idx(o, (size_t)ix));
        }
        break;
    case SEG_SLICE: {
        if (!arr)
            break;
        long n = (long)len;
        long a = s->has_start ? s->start : 0, b = s->has_end ? s->end : n;
        if (a < 0)
            a += n;
        if (b < 0)
            b += n;
        a = a < 0 ? 0 : a > n ? n : a;
        b = b < 0 ? 0 : b > n ? n : b;
        /* i < b <= n and step >= 1: stop before i + step could pass LONG_MAX */
        for (long i = a; i < b && !out->rc; i = s->step > b - i ? b : i + s->step)
            vals_push(out, json_object_array_get_idx(o, (size_t)i));
        break;
    }
    case SEG_DESCEND:
        descend(o, out, 0);
        break;
    case SEG_FILTER:
        for (size_t i = 0; i < len && !out->rc; i++) {
            json_object *el = json_object_array_get_idx(o, i);
            int rc = K_OK;
            if (filter_keeps(s->filter, root, el, &rc))
                vals_push(out, el);
            if (rc && !out->rc)
                out->rc = rc;
        }
        break;
    }
}

static int eval_path(const struct path *path, json_object *root, json_object *cur, struct vals *out)
{
    struct vals a = {0}, b = {0};
    vals_push(&a, path->from_root ? root : cur);
    for (size_t i = 0; i < path->n && !a.rc; i++) {
        b.n = 0;
        for (size_t j = 0; j < a.n && !b.rc; j++)
            apply_seg(&path->segs[i], root, a.v[j], &b);
        struct vals t = a;
        a = b;
        b = t;
        if (b.rc && !a.rc)
            a.rc = b.rc;
    }
    int rc = a.rc;
    for (size_t i = 0; i < a.n && !rc; i++) {
        vals_push(out, a.v[i]);
        rc = out->rc;
    }
    free(a.v);
    free(b.v);
    return rc;
}

/* One value as text: strings as they are (escaped for a terminal), the rest as compact JSON. */
static int value_text(json_object *v, struct buf *out)
{
    if (json_object_is_type(v, json_type_string))
        return text_escape_buf(out, json_object_get_string(v),
                               (size_t)json_object_get_string_len(v), TEXT_ESCAPE_TERMINAL);
    if (!v)
        return buf_append_str(out, "null");
    const char *s =
        json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    return s ? text_escape_buf(out, s, strlen(s), TEXT_ESCAPE_JSON_TEXT) : K_ENOMEM;
}

struct run {
    json_object *root;
    bool as_json;
    json_object *array; /* as_json: every result */
    struct buf *out;
    char *err;
    size_t errlen;
    size_t work; /* values every expression of the run produced, bounded by JSONPATH_MAX_WORK */
};

static int run_nodes(struct run *r, const struct tnode *nodes, size_t n, json_object *cur,
                     int depth)
{
    for (size_t i = 0; i < n; i++) {
        const struct tnode *t = &nodes[i];
        if (t->kind == T_TEXT) {
            if (!r->as_json) {
                int rc = buf_append(r->out, t->text, t->text_len);
                if (rc)
                    return rc;
            }
            continue;
        }
        struct vals v = {0};
        int rc = eval_path(t->path, r->root, cur, &v);
        /* nested ranges multiply: the whole run has one budget, not each expression */
        r->work += v.n;
        if (rc == K_OK && r->work > JSONPATH_MAX_WORK)
            rc = K_ETOOBIG;
        for (size_t j = 0; j < v.n && rc == K_OK; j++) {
            if (t->kind == T_RANGE) {
                rc = run_nodes(r, t->body, t->n_body, v.v[j], depth + 1);
            } else if (r->as_json) {
                json_object *c = json_object_get(v.v[j]);
                if (json_object_array_add(r->array, c) != 0) {
                    json_object_put(c);
                    rc = K_ENOMEM;
                }
            } else {
                if (j > 0)
                    rc = buf_append(r->out, " ", 1);
                if (rc == K_OK)
                    rc = value_text(v.v[j], r->out);
            }
        }
        free(v.v);
        if (rc) {
            if (rc == K_ETOOBIG)
                errbuf_printf(r->err, r->errlen,
                              "more than %d results in one expression or %d in all, or the "
                              "output too large",
                              JSONPATH_MAX_RESULTS, JSONPATH_MAX_WORK);
            return rc;
        }
    }
    return K_OK;
}

int jsonpath_print(const struct jsonpath *jp, json_object *root, bool as_json, struct buf *out,
                   char *err, size_t errlen)
{
    if (errlen)
        err[0] = '\0';
    struct run r = {.root = root, .as_json = as_json, .out = out, .err = err, .errlen = errlen};
    if (as_json && !(r.array = json_object_new_array()))
        return K_ENOMEM;
    int rc = run_nodes(&r, jp->nodes, jp->n, root, 0);
    if (rc == K_OK && as_json) {
        const char *s = json_object_to_json_string_ext(r.array, JSON_C_TO_STRING_PRETTY |
                                                                    JSON_C_TO_STRING_SPACED |
                                                                    JSON_C_TO_STRING_NOSLASHESCAPE);
        rc = s ? text_escape_buf(out, s, strlen(s), TEXT_ESCAPE_JSON_TEXT) : K_ENOMEM;
        if (rc == K_OK)
            rc = buf_append(out, "\n", 1);
    }
    json_object_put(r.array);
    return rc;
}

/* The values of the template's first expression. */
static int first_values(const struct jsonpath *jp, json_object *root, struct vals *v)
{
    for (size_t i = 0; i < jp->n; i++)
        if (jp->nodes[i].kind != T_TEXT)
            return eval_path(jp->nodes[i].path, root, root, v);
    return K_OK;
}

int jsonpath_first(const struct jsonpath *jp, json_object *root, json_object **value, bool *found)
{
    struct vals v = {0};
    int rc = first_values(jp, root, &v);
    *value = rc == K_OK && v.n ? v.v[0] : NULL;
    if (found)
        *found = rc == K_OK && v.n > 0;
    free(v.v);
    return rc;
}

int jsonpath_cell(const struct jsonpath *jp, json_object *root, struct buf *out)
{
    struct vals v = {0};
    int rc = first_values(jp, root, &v);
    if (rc == K_OK && v.n == 0)
        rc = buf_append_str(out, "<none>");
    for (size_t i = 0; i < v.n && rc == K_OK; i++) {
        if (i)
            rc = buf_append(out, ",", 1);
        if (rc == K_OK)
            rc = value_text(v.v[i], out);
    }
    free(v.v);
    return rc;
}
