/* gpu.c - the configurable set of GPU resource names. */
#include "gpu.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util/result.h"

/*
 * next_entry() - the next non-empty entry of a comma-separated list at *p, trimmed of blanks, as
 * [*start, *end); advances *p past it. False at the end of the string.
 */
static bool next_entry(const char **p, const char **start, const char **end)
{
    while (**p) {
        while (**p == ',' || isspace((unsigned char)**p))
            (*p)++;
        *start = *p;
        while (**p && **p != ',')
            (*p)++;
        *end = *p;
        while (*end > *start && isspace((unsigned char)(*end)[-1]))
            (*end)--;
        if (*end != *start)
            return true;
    }
    return false;
}

/* star_only_last() - whether [start, end) has no '*' or only as its last character. */
static bool star_only_last(const char *start, const char *end)
{
    const char *star = memchr(start, '*', (size_t)(end - start));
    return !star || star == end - 1;
}

int gpu_set_parse(struct gpu_set *set, const char *csv)
{
    set->patterns = NULL;
    set->n = 0;
    const char *p = csv, *start, *end;
    while (next_entry(&p, &start, &end)) {
        if (!star_only_last(start, end)) {
            gpu_set_cleanup(set);
            return K_EINVAL;
        }
        char **pats = realloc(set->patterns, (set->n + 1) * sizeof(*pats));
        if (!pats) {
            gpu_set_cleanup(set);
            return K_ENOMEM;
        }
        set->patterns = pats;
        pats[set->n] = strndup(start, (size_t)(end - start));
        if (!pats[set->n]) {
            gpu_set_cleanup(set);
            return K_ENOMEM;
        }
        set->n++;
    }
    return set->n ? K_OK : K_EINVAL;
}

const char *gpu_set_invalid_reason(const char *csv)
{
    bool any = false;
    const char *p = csv, *start, *end;
    while (next_entry(&p, &start, &end)) {
        if (!star_only_last(start, end))
            return "'*' may only end a name";
        any = true;
    }
    return any ? NULL : "no resource names";
}

bool gpu_set_contains(const struct gpu_set *set, const char *resource)
{
    for (size_t i = 0; i < set->n; i++) {
        const char *pat = set->patterns[i];
        size_t len = strlen(pat);
        if (len && pat[len - 1] == '*') {
            if (strncmp(resource, pat, len - 1) == 0)
                return true;
        } else if (strcmp(resource, pat) == 0) {
            return true;
        }
    }
    return false;
}

void gpu_set_cleanup(struct gpu_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        free(set->patterns[i]);
    free(set->patterns);
    set->patterns = NULL;
    set->n = 0;
}

static const struct {
    const char *resource, *scheduler;
} vendor_resources[] = {
    {"nvidia.com/gpumem", "hami-scheduler"},   {"nvidia.com/gpumem-percentage", "hami-scheduler"},
    {"nvidia.com/gpucores", "hami-scheduler"}, {"volcano.sh/vgpu-number", "volcano"},
    {"volcano.sh/vgpu-memory", "volcano"},     {"volcano.sh/vgpu-cores", "volcano"},
};

const char *gpu_vendor_scheduler(const char *resource, const char **canonical)
{
    for (size_t i = 0; resource && i < sizeof(vendor_resources) / sizeof(vendor_resources[0]); i++)
        if (strcmp(resource, vendor_resources[i].resource) == 0) {
            if (canonical)
                *canonical = vendor_resources[i].resource;
            return vendor_resources[i].scheduler;
        }
    return NULL;
}
