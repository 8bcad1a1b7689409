/* printer.c - kubectl's output formats over json-c lists (printer.h). */
#include "printer.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yaml.h>

#include "table.h"
#include "util/clock.h"
#include "util/duration.h"
#include "util/errbuf.h"
#include "util/escape.h"
#include "util/result.h"
#include "util/utf8.h"

#define CUSTOM_MAX_COLUMNS TABLE_MAX_COLS

struct printer_custom {
    char *headers[CUSTOM_MAX_COLUMNS];
    struct jsonpath *paths[CUSTOM_MAX_COLUMNS];
    size_t n;
};

static void custom_free(struct printer_custom *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->headers[i]);
        jsonpath_free(c->paths[i]);
    }
    free(c);
}

void printer_cleanup(struct printer *p)
{
    jsonpath_free(p->template);
    custom_free(p->custom);
    jsonpath_free(p->sort_by);
    p->template = NULL;
    p->custom = NULL;
    p->sort_by = NULL;
}

/* kubectl: pkg/cmd/get/customcolumn.go NewCustomColumnsPrinterFromSpec */
static int parse_custom(const char *spec, struct printer *p, char *err, size_t errlen)
{
    if (!*spec) {
        errbuf_printf(err, errlen, "custom-columns format specified but no custom columns given");
        return K_EINVAL;
    }
    struct printer_custom *c = calloc(1, sizeof(*c));
    char *copy = strdup(spec);
    if (!c || !copy) {
        free(c);
        free(copy);
        return K_ENOMEM;
    }
    p->custom = c;
    int rc = K_OK;
    char *save = NULL;
    for (char *part = strtok_r(copy, ",", &save); part && rc == K_OK;
         part = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(part, ':');
        if (!colon) {
            errbuf_printf(
                err, errlen,
                "unexpected custom-columns spec: %.200s, expected <header>:<json-path-expr>", part);
            rc = K_EINVAL;
            break;
        }
        if (c->n == CUSTOM_MAX_COLUMNS) {
            errbuf_printf(err, errlen, "custom-columns: at most %d columns", CUSTOM_MAX_COLUMNS);
            rc = K_EINVAL;
            break;
        }
        *colon = '\0';
        if (!(c->headers[c->n] = strdup(part))) {
            rc = K_ENOMEM;
            break;
        }
        char perr[256];
        rc = jsonpath_parse(colon + 1, true, &c->paths[c->n], perr, sizeof(perr));
        c->n++;
        if (rc)
            errbuf_printf(err, errlen, "custom-columns %.60s: %s", part, perr);
    }
    free(copy);
    if (rc == K_OK && c->n == 0) {
        errbuf_printf(err, errlen, "custom-columns format specified but no custom columns given");
        rc = K_EINVAL;
    }
    return rc;
}

int printer_parse(const char *o, struct printer *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof(*p));
    if (errlen)
        err[0] = '\0';
    static const struct {
        const char *name;
        enum printer_format f;
    } plain[] = {{"", PRINTER_TABLE},
                 {"wide", PRINTER_WIDE},
                 {"json", PRINTER_JSON},
                 {"yaml", PRINTER_YAML},
                 {"name", PRINTER_NAME}};
    if (!o)
        o = "";
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
        if (strcmp(o, plain[i].name) == 0) {
            p->format = plain[i].f;
            return K_OK;
        }
    static const struct {
        const char *prefix;
        enum printer_format f;
    } tmpl[] = {{"custom-columns=", PRINTER_CUSTOM_COLUMNS},
                {"jsonpath=", PRINTER_JSONPATH},
                {"jsonpath-as-json=", PRINTER_JSONPATH_AS_JSON}};
    for (size_t i = 0; i < sizeof(tmpl) / sizeof(tmpl[0]); i++) {
        size_t n = strlen(tmpl[i].prefix);
        if (strncmp(o, tmpl[i].prefix, n) != 0)
            continue;
        p->format = tmpl[i].f;
        if (p->format == PRINTER_CUSTOM_COLUMNS)
            return parse_custom(o + n, p, err, errlen);
        if (!o[n]) {
            errbuf_printf(err, errlen, "template format specified but no template given");
            return K_EINVAL;
        }
        char perr[256];
        int rc = jsonpath_parse(o + n, false, &p->template, perr, sizeof(perr));
        if (rc)
            errbuf_printf(err, errlen, "error parsing jsonpath %.100s: %s", o + n, perr);
        return rc;
    }
    errbuf_printf(err, errlen,
                  "unable to match a printer suitable for the output format \"%.100s\", allowed "
                  "formats are: custom-columns,json,jsonpath,jsonpath-as-json,name,wide,yaml",
                  o);
    return K_EINVAL;
}

int printer_set_sort_by(struct printer *p, const char *expr, char *err, size_t errlen)
{
    jsonpath_free(p->sort_by);
    p->sort_by = NULL;
    char perr[256];
    int rc = jsonpath_parse(expr, true, &p->sort_by, perr, sizeof(perr));
    if (rc)
        errbuf_printf(err, errlen, "--sort-by %.100s: %s", expr, perr);
    return rc;
}

bool printer_is_table(const struct printer *p)
{
    return p->format == PRINTER_TABLE || p->format == PRINTER_WIDE ||
           p->format == PRINTER_CUSTOM_COLUMNS;
}

/* ---- sorting ------------------------------------------------------------------------------- */

struct sort_key {
    json_object *item;
    json_object *value; /* borrowed from item */
    bool found;
    size_t index;
};

/* fvbommel/sortorder NaturalLess, which kubectl's sorter uses for strings: runs of digits
 * compare by value (then by length: fewer leading zeros first), the rest byte by byte. */
static int natural_cmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            const char *za = a, *zb = b;
            while (*za == '0')
                za++;
            while (*zb == '0')
                zb++;
            const char *ea = za, *eb = zb;
            while (isdigit((unsigned char)*ea))
                ea++;
            while (isdigit((unsigned char)*eb))
                eb++;
            size_t la = (size_t)(ea - za), lb = (size_t)(eb - zb);
            if (la != lb)
                return la < lb ? -1 : 1;
            int c = strncmp(za, zb, la);
            if (c)
                return c;
            if ((ea - a) != (eb - b)) /* same value: fewer leading zeros first */
                return (ea - a) < (eb - b) ? -1 : 1;
            a = ea;
            b = eb;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    return *a ? 1 : *b ? -1 : 0;
}

static int rank_of(json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null:
        return 0;
    case json_type_boolean:
        return 1;
    case json_type_int:
    case json_type_double:
        return 2;
    case json_type_string:
        return 3;
    default:
        return 4;
    }
}

static int cmp_keys(const void *x, const void *y)
{
    const struct sort_key *a = x, *b = y;
    int c = 0;
    if (a->found != b->found)
        c = a->found ? 1 : -1;
    else if (a->found && rank_of(a->value) != rank_of(b->value))
        c = rank_of(a->value) < rank_of(b->value) ? -1 : 1;
    else if (a->found) {
        switch (rank_of(a->value)) {
        case 1:
            c = (int)json_object_get_boolean(a->value) - (int)json_object_get_boolean(b->value);
            break;
        case 2: {
            double da = json_object_is_type(a->value, json_type_int)
                            ? (double)json_object_get_int64(a->value)
                            : json_object_get_double(a->value);
            double db = json_object_is_type(b->value, json_type_int)
                            ? (double)json_object_get_int64(b->value)
                            : json_object_get_double(b->value);
            c = da < db ? -1 : da > db ? 1 : 0;
            break;
        }
        case 3:
            c = natural_cmp(json_object_get_string(a->value), json_object_get_string(b->value));
            break;
        case 4:
            c = strcmp(json_object_to_json_string(a->value), json_object_to_json_string(b->value));
            break;
        default:
            break;
        }
    }
    if (c)
        return c;
    return a->index < b->index ? -1 : a->index > b->index ? 1 : 0; /* stable */
}

int printer_sort(const struct printer *p, json_object *items, char *err, size_t errlen)
{
    if (!p->sort_by || !json_object_is_type(items, json_type_array))
        return K_OK;
    size_t n = json_object_array_length(items);
    if (n == 0)
        return K_OK;
    struct sort_key *keys = calloc(n, sizeof(*keys));
    if (!keys)
        return K_ENOMEM;
    bool any = false;
    int rc = K_OK;
    for (size_t i = 0; i < n && rc == K_OK; i++) {
        keys[i].item = json_object_get(json_object_array_get_idx(items, i));
        keys[i].index = i;
        rc = jsonpath_first(p->sort_by, keys[i].item, &keys[i].value, &keys[i].found);
        any = any || keys[i].found;
    }
    if (rc == K_OK && !any) {
        errbuf_printf(err, errlen,
                      "couldn't find any field with the --sort-by path in the list "
                      "of objects");
        rc = K_EINVAL;
    }
    if (rc == K_OK) {
        qsort(keys, n, sizeof(*keys), cmp_keys);
        for (size_t i = 0; i < n; i++) /* each put drops the array's old reference; ours stay */
            json_object_array_put_idx(items, i, json_object_get(keys[i].item));
    }
    for (size_t i = 0; i < n; i++)
        json_object_put(keys[i].item);
    free(keys);
    return rc;
}

/* ---- tables -------------------------------------------------------------------------------- */

static bool column_shown(const struct printer *p, const struct printer_column *c)
{
    if ((c->flags & PRINTER_COL_WIDE) && p->format != PRINTER_WIDE)
        return false;
    if ((c->flags & PRINTER_COL_NAMESPACE) && !p->all_namespaces)
        return false;
    return true;
}

/* "k=v,k2=v2" sorted by key, as labels.FormatLabels; "<none>" for none. */
static int labels_cell(json_object *item, struct buf *out)
{
    json_object *meta, *labels;
    if (!json_object_object_get_ex(item, "metadata", &meta) ||
        !json_object_object_get_ex(meta, "labels", &labels) ||
        !json_object_is_type(labels, json_type_object) || json_object_object_length(labels) == 0)
        return buf_append_str(out, "<none>");
    size_t n = (size_t)json_object_object_length(labels), i = 0;
    const char **keys = calloc(n, sizeof(*keys));
    if (!keys)
        return K_ENOMEM;
    json_object_object_foreach(labels, k, v)
    {
        (void)v;
        keys[i++] = k;
    }
    for (size_t a = 1; a < n; a++) /* insertion sort: few labels */
        for (size_t b = a; b > 0 && strcmp(keys[b - 1], keys[b]) > 0; b--) {
            const char *t = keys[b];
            keys[b] = keys[b - 1];
            keys[b - 1] = t;
        }
    int rc = K_OK;
    for (i = 0; i < n && rc == K_OK; i++) {
        json_object *lv = json_object_object_get(labels, keys[i]);
        rc =
            buf_printf(out, "%s%s=%s", i ? "," : "", keys[i],
                       json_object_is_type(lv, json_type_string) ? json_object_get_string(lv) : "");
    }
    free(keys);
    return rc;
}

static int age_cell(const struct printer *p, json_object *v, struct buf *out)
{
    int64_t t = 0;
    if (!json_object_is_type(v, json_type_string) ||
        !clock_parse_rfc3339(json_object_get_string(v), &t))
        return buf_append_str(out, "<unknown>");
    char age[DURATION_HUMAN_MAX];
    duration_human((p->now ? p->now : (int64_t)time(NULL)) - t, age, sizeof(age));
    return buf_append_str(out, age);
}

/* One row of `item` (or the header) into tab. */
static int table_row(const struct printer *p, const struct printer_table *t,
                     const struct jsonpath *const *paths, json_object *item, struct table *tab,
                     bool header)
{
    const char *cells[TABLE_MAX_COLS] = {0};
    struct buf bufs[TABLE_MAX_COLS];
    size_t n = 0;
    int rc = K_OK;
    if (p->format == PRINTER_CUSTOM_COLUMNS) {
        for (size_t i = 0; i < p->custom->n && n < TABLE_MAX_COLS && rc == K_OK; i++) {
            buf_init(&bufs[n], 1u << 20);
            rc = header ? buf_append_str(&bufs[n], p->custom->headers[i])
                        : jsonpath_cell(p->custom->paths[i], item, &bufs[n]);
            n++;
        }
    } else {
        for (size_t i = 0; i < t->n && n < TABLE_MAX_COLS && rc == K_OK; i++) {
            const struct printer_column *c = &t->cols[i];
            if (!column_shown(p, c))
                continue;
            buf_init(&bufs[n], 1u << 20);
            if (header)
                rc = buf_append_str(&bufs[n], c->header);
            else if (c->cell)
                rc = c->cell(item, &bufs[n]);
            else if (c->type == PRINTER_CELL_AGE) {
                json_object *v = NULL;
                rc = jsonpath_first(paths[i], item, &v, NULL);
                if (rc == K_OK)
                    rc = age_cell(p, v, &bufs[n]);
            } else {
                rc = jsonpath_cell(paths[i], item, &bufs[n]);
            }
            n++;
        }
        if (p->show_labels && n < TABLE_MAX_COLS && rc == K_OK) {
            buf_init(&bufs[n], 1u << 20);
            rc = header ? buf_append_str(&bufs[n], "LABELS") : labels_cell(item, &bufs[n]);
            n++;
        }
    }
    for (size_t i = 0; i < n; i++)
        cells[i] = buf_cstr(&bufs[i]);
    if (rc == K_OK) {
        if (tab->ncols != n) { /* the first row sets the width */
            table_cleanup(tab);
            table_init(tab, n);
        }
        rc = table_add_row(tab, cells);
    }
    for (size_t i = 0; i < n; i++)
        buf_cleanup(&bufs[i]);
    return rc;
}

/* The table's columns' paths, parsed once; *out has t->n entries (NULL for cell columns). */
static int column_paths(const struct printer_table *t, struct jsonpath ***out, char *err,
                        size_t errlen)
{
    *out = calloc(t && t->n ? t->n : 1, sizeof(**out));
    if (!*out)
        return K_ENOMEM;
    for (size_t i = 0; t && i < t->n; i++) {
        if (t->cols[i].cell || !t->cols[i].path)
            continue;
        char perr[200];
        int rc = jsonpath_parse(t->cols[i].path, true, &(*out)[i], perr, sizeof(perr));
        if (rc) {
            errbuf_printf(err, errlen, "column %s: %s", t->cols[i].header, perr);
            return rc;
        }
    }
    return K_OK;
}

static void paths_free(struct jsonpath **paths, const struct printer_table *t)
{
    for (size_t i = 0; paths && t && i < t->n; i++)
        jsonpath_free(paths[i]);
    free(paths);
}

/* Rows for `items` (an array, or one object when `one`), the header first when header. */
static int print_table(const struct printer *p, const struct printer_table *t, json_object *items,
                       bool one, bool header, struct buf *out, char *err, size_t errlen)
{
    size_t n = one ? 1 : json_object_array_length(items);
    if (n == 0)
        return K_OK;
    struct jsonpath **paths = NULL;
    int rc = p->format == PRINTER_CUSTOM_COLUMNS ? K_OK : column_paths(t, &paths, err, errlen);
    struct table tab;
    table_init(&tab, 1);
    if (rc == K_OK && header && !p->no_headers)
        rc = table_row(p, t, (const struct jsonpath *const *)paths, NULL, &tab, true);
    for (size_t i = 0; i < n && rc == K_OK; i++)
        rc = table_row(p, t, (const struct jsonpath *const *)paths,
                       one ? items : json_object_array_get_idx(items, i), &tab, false);
    if (rc == K_OK)
        rc = table_render(&tab, 0, out);
    table_cleanup(&tab);
    paths_free(paths, t);
    return rc;
}

/* ---- json, yaml, name ---------------------------------------------------------------------- */

static int print_json(json_object *o, struct buf *out)
{
    const char *text = json_object_to_json_string_ext(
        o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
    /* json-c escapes C0 in strings, not DEL, C1 or bytes that are not UTF-8 (util/escape.h) */
    int rc = text ? text_escape_buf(out, text, strlen(text), TEXT_ESCAPE_JSON_TEXT) : K_ENOMEM;
    return rc == K_OK ? buf_append(out, "\n", 1) : rc;
}

static int yaml_write(void *data, unsigned char *buffer, size_t size)
{
    return buf_append(data, buffer, size) == K_OK;
}

/* Whether a plain scalar would read back as something other than this string (YAML 1.1 as
 * go-yaml v2, which kubectl's sigs.k8s.io/yaml uses: y/n/yes/no/on/off are booleans). */
static bool needs_quotes(const char *s)
{
    static const char *const words[] = {"y",     "n",    "yes", "no",   "on",    "off", "true",
                                        "false", "null", "~",   ".inf", "-.inf", ".nan"};
    if (!*s)
        return true;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strcasecmp(s, words[i]) == 0)
            return true;
    return isdigit((unsigned char)s[0]) || strchr("+-.", s[0]) != NULL;
}

static bool valid_utf8(const char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        unsigned cp;
        size_t n = utf8_decode((const unsigned char *)s + i, len - i, &cp);
        if (n == 0 || cp == 0)
            return false;
        i += n;
    }
    return true;
}

/* A string libyaml can take: valid UTF-8 (escaped for a terminal otherwise). */
static int yaml_scalar(yaml_emitter_t *e, const char *s, size_t len, bool is_string)
{
    char *owned = NULL;
    if (is_string && !valid_utf8(s, len)) {
        struct buf b;
        buf_init(&b, (size_t)1 << 30);
        if (text_escape_buf(&b, s, len, TEXT_ESCAPE_TERMINAL) != K_OK) {
            buf_cleanup(&b);
            return K_ENOMEM;
        }
        len = b.len;
        s = owned = buf_take(&b);
    }
    bool quote = is_string && needs_quotes(s);
    yaml_event_t ev;
    int ok = yaml_scalar_event_initialize(
        &ev, NULL, NULL, (yaml_char_t *)(s ? s : ""), (int)len, !quote, quote || is_string,
        quote ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE);
    free(owned);
    return ok && yaml_emitter_emit(e, &ev) ? K_OK : K_EINVAL;
}

static int yaml_value(yaml_emitter_t *e, json_object *o, int depth)
{
    yaml_event_t ev;
    if (depth > 200)
        return K_EINVAL;
    switch (json_object_get_type(o)) {
    case json_type_object: {
        if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_ANY_MAPPING_STYLE) ||
            !yaml_emitter_emit(e, &ev))
            return K_EINVAL;
        json_object_object_foreach(o, k, v)
        {
            int rc = yaml_scalar(e, k, strlen(k), true);
            if (rc == K_OK)
                rc = yaml_value(e, v, depth + 1);
            if (rc)
                return rc;
        }
        return yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev) ? K_OK
                                                                                   : K_EINVAL;
    }
    case json_type_array: {
        if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_ANY_SEQUENCE_STYLE) ||
            !yaml_emitter_emit(e, &ev))
            return K_EINVAL;
        size_t n = json_object_array_length(o);
        for (size_t i = 0; i < n; i++) {
            int rc = yaml_value(e, json_object_array_get_idx(o, i), depth + 1);
            if (rc)
                return rc;
        }
        return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev) ? K_OK
                                                                                    : K_EINVAL;
    }
    case json_type_string:
        return yaml_scalar(e, json_object_get_string(o), (size_t)json_object_get_string_len(o),
                           true);
    case json_type_null:
        return yaml_scalar(e, "null", 4, false);
    default: {
        const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        return yaml_scalar(e, s, strlen(s), false);
    }
    }
}

static int print_yaml(json_object *o, struct buf *out)
{
    yaml_emitter_t e;
    yaml_event_t ev;
    if (!yaml_emitter_initialize(&e))
        return K_ENOMEM;
    yaml_emitter_set_output(&e, yaml_write, out);
    yaml_emitter_set_unicode(&e, 1);
    yaml_emitter_set_width(&e, -1);
    yaml_emitter_set_indent(&e, 2);
    int rc = K_EINVAL;
    if (yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && yaml_emitter_emit(&e, &ev) &&
        yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) &&
        yaml_emitter_emit(&e, &ev)) {
        rc = yaml_value(&e, o, 0);
        if (rc == K_OK)
            rc = yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&e, &ev) &&
                         yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&e, &ev) &&
                         yaml_emitter_flush(&e)
                     ? K_OK
                     : K_EINVAL;
    }
    if (rc == K_EINVAL && e.error == YAML_MEMORY_ERROR)
        rc = K_ENOMEM;
    else if (rc == K_EINVAL && e.error == YAML_WRITER_ERROR)
        rc = K_ETOOBIG;
    yaml_emitter_delete(&e);
    return rc;
}

static int print_name(const struct printer_table *t, json_object *item, struct buf *out)
{
    const char *res = t && t->resource ? t->resource(item) : NULL;
    char lower[128] = "";
    if (!res) {
        json_object *k;
        const char *kind =
            json_object_object_get_ex(item, "kind", &k) ? json_object_get_string(k) : "";
        size_t i = 0;
        for (; kind && kind[i] && i + 1 < sizeof(lower); i++)
            lower[i] = (char)tolower((unsigned char)kind[i]);
        lower[i] = '\0';
        res = lower;
    }
    json_object *meta, *name;
    const char *n = json_object_object_get_ex(item, "metadata", &meta) &&
                            json_object_object_get_ex(meta, "name", &name)
                        ? json_object_get_string(name)
                        : "";
    int rc = text_escape_buf(out, res, strlen(res), TEXT_ESCAPE_TERMINAL);
    if (rc == K_OK)
        rc = buf_append(out, "/", 1);
    if (rc == K_OK)
        rc = text_escape_buf(out, n, strlen(n), TEXT_ESCAPE_TERMINAL);
    return rc == K_OK ? buf_append(out, "\n", 1) : rc;
}

/* ---- entry points -------------------------------------------------------------------------- */

static int print_one(const struct printer *p, json_object *o, const struct printer_table *t,
                     struct buf *out, char *err, size_t errlen)
{
    switch (p->format) {
    case PRINTER_JSON:
        return print_json(o, out);
    case PRINTER_YAML: {
        int rc = print_yaml(o, out);
        if (rc == K_EINVAL)
            errbuf_printf(err, errlen, "the YAML emitter refused the object");
        return rc;
    }
    case PRINTER_JSONPATH:
    case PRINTER_JSONPATH_AS_JSON:
        return jsonpath_print(p->template, o, p->format == PRINTER_JSONPATH_AS_JSON, out, err,
                              errlen);
    default:
        (void)t;
        return K_EINVAL;
    }
}

int printer_print_list(const struct printer *p, json_object *list, const struct printer_table *t,
                       struct buf *out, char *err, size_t errlen)
{
    if (errlen)
        err[0] = '\0';
    json_object *items = NULL;
    if (!json_object_object_get_ex(list, "items", &items) ||
        !json_object_is_type(items, json_type_array)) {
        errbuf_printf(err, errlen, "no items in the list");
        return K_EINVAL;
    }
    int rc = printer_sort(p, items, err, errlen);
    if (rc)
        return rc;
    if (printer_is_table(p))
        return print_table(p, t, items, false, true, out, err, errlen);
    if (p->format == PRINTER_NAME) {
        size_t n = json_object_array_length(items);
        for (size_t i = 0; i < n && rc == K_OK; i++)
            rc = print_name(t, json_object_array_get_idx(items, i), out);
        return rc;
    }
    return print_one(p, list, t, out, err, errlen);
}

int printer_write_item(const struct printer *p, json_object *item, FILE *out, char *err,
                       size_t errlen)
{
    struct buf b;
    buf_init(&b, (size_t)1 << 30);
    int rc = printer_print_item(p, item, NULL, false, &b, err, errlen);
    if (rc == K_OK && b.len && fwrite(b.data, 1, b.len, out) != b.len)
        rc = K_EIO;
    buf_cleanup(&b);
    return rc;
}

int printer_print_item(const struct printer *p, json_object *item, const struct printer_table *t,
                       bool header, struct buf *out, char *err, size_t errlen)
{
    if (errlen)
        err[0] = '\0';
    if (printer_is_table(p))
        return print_table(p, t, item, true, header, out, err, errlen);
    if (p->format == PRINTER_NAME)
        return print_name(t, item, out);
    return print_one(p, item, t, out, err, errlen);
}
