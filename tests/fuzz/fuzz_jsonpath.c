/*
 * fuzz_jsonpath.c - libFuzzer target for the plugin's JSONPath (cli/jsonpath.c), the parser and
 * evaluator of `-o jsonpath=`, `custom-columns=` and `--sort-by`.
 *
 * The input's first line is the template (its first byte chooses the relaxed form when odd); the
 * rest, when it parses as JSON, is the document, else a small list. Besides the sanitizers, the
 * target checks what jsonpath.h promises: a parse either succeeds or fills the error; a run ends
 * with K_OK, K_EINVAL, K_ETOOBIG or K_ENOMEM within its budgets, and says why on K_EINVAL.
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonpath.h"
#include "util/buf.h"
#include "util/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char DOC[] =
    "{\"kind\":\"List\",\"items\":[{\"metadata\":{\"name\":\"a\",\"labels\":{\"x.io/y\":\"1\"}},"
    "\"status\":{\"n\":2,\"v\":[1,2,3]}},{\"metadata\":{\"name\":\"b\"},\"status\":{\"n\":-1}}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > 64 * 1024)
        return 0;
    const uint8_t *nl = memchr(data, '\n', size);
    size_t tlen = nl ? (size_t)(nl - data) : size;
    char *tmpl = malloc(tlen + 1);
    if (!tmpl)
        return 0;
    memcpy(tmpl, data, tlen);
    tmpl[tlen] = '\0';
    json_object *doc = NULL;
    if (nl && size - tlen - 1 > 0) {
        struct json_tokener *tok = json_tokener_new_ex(64);
        if (tok) {
            doc = json_tokener_parse_ex(tok, (const char *)nl + 1, (int)(size - tlen - 1));
            json_tokener_free(tok);
        }
    }
    if (!doc)
        doc = json_tokener_parse(DOC);
    struct jsonpath *jp = NULL;
    char err[256] = "";
    int rc = jsonpath_parse(tmpl, data[0] & 1, &jp, err, sizeof(err));
    if (rc == K_OK) {
        struct buf out;
        buf_init(&out, 1u << 20);
        for (int as_json = 0; as_json < 2; as_json++) {
            buf_reset(&out);
            err[0] = '\0';
            int prc = jsonpath_print(jp, doc, as_json, &out, err, sizeof(err));
            if (prc != K_OK && prc != K_EINVAL && prc != K_ETOOBIG && prc != K_ENOMEM) {
                fprintf(stderr, "jsonpath_print: unexpected %d\n", prc);
                abort();
            }
            if (prc == K_EINVAL && !err[0]) {
                fprintf(stderr, "jsonpath_print %d with error \"%s\"\n", prc, err);
                abort();
            }
        }
        buf_cleanup(&out);
        jsonpath_free(jp);
    } else if (rc == K_EINVAL && !err[0]) {
        fprintf(stderr, "jsonpath_parse refused without saying why\n");
        abort();
    }
    json_object_put(doc);
    free(tmpl);
    return 0;
}
