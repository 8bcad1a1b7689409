/* toleration_advice.c - the one wording of the toleration gputri advises. */
#include "toleration_advice.h"

#include <ctype.h>
#include <stdio.h>
#include <strings.h>

static const char *str_or_empty(const char *s)
{
    return s ? s : "";
}

/* Whether YAML reads the plain scalar `v` as something other than a string (label values begin
 * with a letter or digit: a digit may start a number; the words are YAML 1.1's booleans and
 * null, which libyaml-based tools and sigs.k8s.io/yaml still read so). */
static bool needs_quotes(const char *v)
{
    static const char *const words[] = {"y",     "yes", "n",   "no",  "true",
                                        "false", "on",  "off", "null"};
    if (*v == '\0' || isdigit((unsigned char)*v) || *v == '-' || *v == '+' || *v == '.')
        return true;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strcasecmp(v, words[i]) == 0)
            return true;
    return false;
}

size_t toleration_advice(char *out, size_t len, const struct taint *taint, bool any_value)
{
    const char *key = str_or_empty(taint->key);
    const char *value = str_or_empty(taint->value);
    const char *effect = str_or_empty(taint->effect);
    int n;
    if (*value && !any_value) {
        const char *q = needs_quotes(value) ? "\"" : "";
        n = snprintf(out, len, "{key: %s, value: %s%s%s, effect: %s}", key, q, value, q, effect);
    } else {
        n = snprintf(out, len, "{key: %s, operator: Exists, effect: %s}", key, effect);
    }
    return n < 0 ? 0 : (size_t)n;
}
