/*
 * jsonpath.h - kubectl's JSONPath templates over json-c objects (-o jsonpath=, -o
 * jsonpath-as-json=, custom-columns and --sort-by).
 *
 * The template language is kubectl's (kubernetes/kubernetes: staging/src/k8s.io/client-go/util/
 * jsonpath, parser.go and jsonpath.go; kubernetes/website: content/en/docs/reference/kubectl/
 * jsonpath.md), this subset of it:
 *   - text outside braces is printed as it is; {"..."} is a quoted string (\n, \t, \", \\, \r);
 *   - $ the root (optional) and @ the current object;
 *   - .name and ['name'] / ["name"] (a key with dots, e.g. ['app.kubernetes.io/name']);
 *     .* and [*] every member or element;
 *   - [n] (n < 0 counts from the end), [start:end] and [start:end:step] slices;
 *   - [a,b] unions of indices or quoted names;
 *   - ..name recursive descent (every member called name, at any depth, document order);
 *   - [?(@.path OP literal)] filters, OP one of == != < > <= >=, the literal a quoted
 *     string, a number, true, false or null; [?(@.path)] keeps the elements that have it;
 *   - {range EXPR}...{end} repeats its body for each result of EXPR, with @ bound to it.
 * Not supported (refused at parse with a message): function calls, && and || in filters,
 * regular expressions (=~), {else}.
 *
 * Results as kubectl prints them (jsonpath.go PrintResults): the results of one {expression}
 * separated by one space; a string as it is, a number, boolean or null as JSON writes it, an
 * object or array as compact JSON. A key that is missing gives no result (kubectl's
 * allowMissingKeys, which its printers set). Strings are escaped for a terminal (util/escape.h
 * TEXT_ESCAPE_TERMINAL) unless the caller asks for JSON; the template's own text is not.
 *
 * Thread-safety: a parsed template is read-only during evaluation; evaluate one template from
 * several threads only on distinct output buffers.
 */
#ifndef GPUTRI_CLI_JSONPATH_H
#define GPUTRI_CLI_JSONPATH_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

/* A parsed template; opaque. */
struct jsonpath;

/* Bounds: template length and the results one evaluation may produce (K_ETOOBIG past them). */
#define JSONPATH_MAX_TEMPLATE 4096
#define JSONPATH_MAX_RESULTS 1000000
/* Values all the expressions of one run produce together (nested ranges multiply). */
#define JSONPATH_MAX_WORK 4000000

/*
 * jsonpath_parse() - parse template `tmpl` (kubectl's form: "{.items[*].metadata.name}",
 * "name: {.metadata.name}{\"\\n\"}"). With `relaxed`, a template with no brace is one expression
 * and may omit the leading '.' or '$' ("metadata.name", ".metadata.name"), as kubectl's
 * custom-columns and --sort-by take it (kubectl: pkg/cmd/get/customcolumn.go
 * RelaxedJSONPathExpression). On K_OK *out is a new template (jsonpath_free it). Returns K_OK,
 * K_EINVAL with a one-line reason in err (errlen bytes, always NUL-terminated), K_ETOOBIG for a
 * template over JSONPATH_MAX_TEMPLATE, K_ENOMEM.
 */
int jsonpath_parse(const char *tmpl, bool relaxed, struct jsonpath **out, char *err, size_t errlen);

/*
 * jsonpath_print() - evaluate `jp` on `root` (borrowed) and append the text to out, as
 * `kubectl -o jsonpath=` prints it (see the top). With `as_json`, as -o jsonpath-as-json: the
 * results of every expression as one JSON array, pretty-printed (the template's text is not
 * printed). Returns K_OK, K_EINVAL (err says why: e.g. range over a scalar), K_ETOOBIG (more
 * than JSONPATH_MAX_RESULTS results of one expression, more than JSONPATH_MAX_WORK of all the
 * expressions of the run together, or out's limit), K_ENOMEM.
 */
int jsonpath_print(const struct jsonpath *jp, json_object *root, bool as_json, struct buf *out,
                   char *err, size_t errlen);

/*
 * jsonpath_first() - the first result of the template's first expression on `root`, or NULL
 * when it has none (borrowed from root; a JSON null is also NULL: *found tells them apart,
 * found may be NULL). For custom-columns cells and --sort-by keys. Returns K_OK, K_ETOOBIG,
 * K_ENOMEM.
 */
int jsonpath_first(const struct jsonpath *jp, json_object *root, json_object **value, bool *found);

/*
 * jsonpath_cell() - every result of the template's first expression on `root`, appended to
 * `out` as kubectl's custom-columns prints a cell: joined by ',', strings as they are, other
 * values as compact JSON; "<none>" when there is none. Returns K_OK, K_ETOOBIG, K_ENOMEM.
 */
int jsonpath_cell(const struct jsonpath *jp, json_object *root, struct buf *out);

/* jsonpath_free() - free a template; NULL is fine. */
void jsonpath_free(struct jsonpath *jp);

#endif
