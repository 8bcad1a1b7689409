/*
 * printer.h - kubectl's output formats for the plugin's lists (`pods`, `nodes`) and single
 * objects (`explain -o json|yaml`), over json-c objects.
 *
 * A command builds its answer as a Kubernetes-style list, {"apiVersion", "kind": "<X>List",
 * "metadata": {}, "items": [...]}, each item an object with "apiVersion", "kind" and "metadata"
 * ({"name", "namespace", "labels", ...}), and describes its table as columns (struct
 * printer_column: a header and a JSONPath into one item, or a cell function). The printer then
 * writes it as `-o` asks, as kubectl's printers do (k8s.io/cli-runtime: pkg/printers, kubectl:
 * pkg/cmd/get):
 *   ""/table   the columns without PRINTER_COL_WIDE, header first (cli/table.h: tabwriter
 *              layout, cells escaped for a terminal); the NAMESPACE column
 *              (PRINTER_COL_NAMESPACE) only with all_namespaces; LABELS last with show_labels
 *   wide       every column
 *   json       the list (or object) as JSON, pretty-printed (json-c), strings escaped
 *              (util/escape.h TEXT_ESCAPE_JSON_TEXT), newline-terminated
 *   yaml       the same as YAML (libyaml's emitter; strings quoted where plain would read as
 *              another type or hold a control), members in the object's order
 *   name       "<resource>/<metadata.name>" per item (printer_table.resource, or the item's
 *              lower-case kind), as `kubectl get -o name`
 *   custom-columns=HEADER:PATH[,HEADER:PATH...]   kubectl's custom columns (cli/jsonpath.h
 *              relaxed paths, "<none>" for no value)
 *   jsonpath=TEMPLATE, jsonpath-as-json=TEMPLATE   cli/jsonpath.h on the whole list (on each
 *              object for printer_print_item), as kubectl applies it
 * --sort-by (printer_set_sort_by) orders the items in every format; --no-headers drops the
 * header of table, wide and custom-columns.
 *
 * Errors: functions return K_* values (util/result.h) and write a one-line reason, without
 * "error: ", into the caller's err buffer (errlen bytes, always NUL-terminated).
 * Thread-safety: a printer is read-only while printing; not thread-safe while being set up.
 */
#ifndef GPUTRI_CLI_PRINTER_H
#define GPUTRI_CLI_PRINTER_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#include "jsonpath.h"
#include "util/buf.h"

enum printer_format {
    PRINTER_TABLE,
    PRINTER_WIDE,
    PRINTER_JSON,
    PRINTER_YAML,
    PRINTER_NAME,
    PRINTER_CUSTOM_COLUMNS,
    PRINTER_JSONPATH,
    PRINTER_JSONPATH_AS_JSON,
};

/* How a column's value becomes its cell. */
enum printer_cell {
    PRINTER_CELL_TEXT, /* as a custom-columns cell (jsonpath_cell), "<none>" when absent */
    /* a RFC 3339 time ("2026-12-06T15:04:05Z") printed as its age at printer.now the way
     * kubectl prints AGE (util/duration.h duration_human: "45s", "3m4s",
     * "5h", "3d4h", "2y"); "<unknown>" when absent or unparsable */
    PRINTER_CELL_AGE,
};

#define PRINTER_COL_WIDE 0x1u      /* only with -o wide */
#define PRINTER_COL_NAMESPACE 0x2u /* only with all_namespaces (kubectl's -A NAMESPACE column) */

struct printer_column {
    const char *header; /* "NAME" */
    /* a relaxed JSONPath into one item (".metadata.name"); unused when cell is set */
    const char *path;
    enum printer_cell type;
    unsigned flags; /* PRINTER_COL_* */
    /* may be NULL: append the cell of `item` (borrowed) to out; returns K_OK, K_ENOMEM or
     * K_ETOOBIG. For cells no path gives (e.g. "nvidia.com/gpu=2" from a map). */
    int (*cell)(json_object *item, struct buf *out);
};

/* A command's table: its columns and what -o name calls its items. */
struct printer_table {
    const struct printer_column *cols;
    size_t n;
    /* may be NULL: the resource of -o name for `item` ("pod", "replicaset.apps"); NULL or a
     * NULL result: the item's "kind" in lower case */
    const char *(*resource)(json_object *item);
};

struct printer {
    enum printer_format format;
    bool no_headers;     /* --no-headers */
    bool show_labels;    /* --show-labels: a LABELS column, "k=v,k2=v2" or "<none>" */
    bool all_namespaces; /* -A: show PRINTER_COL_NAMESPACE columns */
    int64_t now;         /* seconds since the epoch for AGE cells; 0: time(NULL) when printing */
    /* parsed by printer_parse / printer_set_sort_by; owned */
    struct jsonpath *template;     /* jsonpath, jsonpath-as-json */
    struct printer_custom *custom; /* custom-columns */
    struct jsonpath *sort_by;      /* --sort-by, or NULL */
};

/*
 * printer_parse() - set p (zeroed first) from an -o value: NULL or "" (table), "wide", "json",
 * "yaml", "name", "custom-columns=SPEC", "jsonpath=TEMPLATE", "jsonpath-as-json=TEMPLATE"
 * (kubectl's names). Returns K_OK, K_EINVAL (unknown format, empty or bad SPEC/TEMPLATE; err
 * says which, naming the formats), K_ENOMEM. Free with printer_cleanup() in every case.
 */
int printer_parse(const char *o, struct printer *p, char *err, size_t errlen);

/*
 * printer_set_sort_by() - --sort-by EXPR: a relaxed JSONPath (".metadata.name",
 * "{.status.cause}") into one item. Returns K_OK, K_EINVAL (err filled), K_ENOMEM.
 */
int printer_set_sort_by(struct printer *p, const char *expr, char *err, size_t errlen);

/* printer_is_table() - whether the format prints columns (table, wide, custom-columns). */
bool printer_is_table(const struct printer *p);

/*
 * printer_sort() - order the array `items` (borrowed, changed in place) by p->sort_by as
 * kubectl's --sort-by does (kubectl: pkg/cmd/get/sorter.go): by the first value of the path in
 * each item, numbers by value, strings in natural order ("node-2" before "node-10"), booleans
 * false first; items without the value first, the order otherwise kept (stable). Nothing when
 * sort_by is NULL. Returns K_OK, K_EINVAL when no item has the value (err names the path, as
 * kubectl refuses it), K_ENOMEM.
 */
int printer_sort(const struct printer *p, json_object *items, char *err, size_t errlen);

/*
 * printer_print_list() - write `list` (borrowed; its "items" array sorted first with
 * printer_sort) in p's format to out (see the top). Tables: the header (unless no_headers),
 * then one row per item; nothing at all for zero items. Returns K_OK, K_EINVAL (err filled:
 * sort or template), K_ETOOBIG (out's limit), K_ENOMEM.
 */
int printer_print_list(const struct printer *p, json_object *list, const struct printer_table *t,
                       struct buf *out, char *err, size_t errlen);

/*
 * printer_print_item() - write one object (borrowed) in p's format: a table row, with the header
 * first when `header` is true and no_headers is not set; json/yaml the object; name its name;
 * jsonpath the template on the object. For `explain -o json|yaml` and the rows of --watch, as
 * kubectl prints watch events one object at a time. Same results as printer_print_list().
 */
int printer_print_item(const struct printer *p, json_object *item, const struct printer_table *t,
                       bool header, struct buf *out, char *err, size_t errlen);

/*
 * printer_write_item() - printer_print_item() of one object (borrowed, no table, no header) to
 * the stream `out`, whole or not at all (formatted in memory first, at most 1 GiB). The
 * `explain -o` of both programs. Returns its results, or K_EIO when writing fails.
 */
int printer_write_item(const struct printer *p, json_object *item, FILE *out, char *err,
                       size_t errlen);

/* printer_cleanup() - free what printer_parse / printer_set_sort_by made; p may be reused. */
void printer_cleanup(struct printer *p);

#endif
