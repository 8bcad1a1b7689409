/*
 * fuzz_input.h - the fuzz targets' reading of their input as JSON.
 *
 * fuzz_json() - the json-c object of the `size` bytes at `data` (not NUL-terminated; json-c's
 * strict-less default tokener, one value, trailing bytes ignored), or NULL when they are not
 * JSON or json-c has no memory. The caller owns it (json_object_put).
 */
#ifndef GPUTRI_FUZZ_INPUT_H
#define GPUTRI_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

static inline json_object *fuzz_json(const uint8_t *data, size_t size)
{
    json_tokener *tok = json_tokener_new();
    json_object *obj = tok ? json_tokener_parse_ex(tok, (const char *)data, (int)size) : NULL;
    json_tokener_free(tok);
    return obj;
}

#endif
