/* duration.c - kubectl's AGE text. */
#include "duration.h"

#include <inttypes.h>
#include <stdio.h>

/* One step of the ladder: a value of `unit` is written while it stays below `per * upto`
 * of it, with the remainder in `unit` shown (when not zero) below `detail_below` of the next. */
struct step {
    char unit, next;
    int64_t per;          /* units of this step in one of the next */
    int64_t upto;         /* keep this unit below upto*per of it */
    int64_t detail_below; /* show the remainder while below this many of the next unit */
};

void duration_human(int64_t seconds, char *out, size_t len)
{
    static const struct step steps[] = {
        {'s', 'm', 60, 2, 10},
        {'m', 'h', 60, 3, 8},
        {'h', 'd', 24, 2, 8},
        {'d', 'y', 365, 2, 8},
    };
    if (seconds < -1) {
        snprintf(out, len, "<invalid>");
        return;
    }
    if (seconds < 0)
        seconds = 0;
    int64_t v = seconds;
    char unit = 's';
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        const struct step *s = &steps[i];
        if (v < s->per * s->upto) {
            snprintf(out, len, "%" PRId64 "%c", v, unit);
            return;
        }
        int64_t big = v / s->per, rest = v % s->per;
        if (big < s->detail_below) {
            if (rest)
                snprintf(out, len, "%" PRId64 "%c%" PRId64 "%c", big, s->next, rest, unit);
            else
                snprintf(out, len, "%" PRId64 "%c", big, s->next);
            return;
        }
        v = big;
        unit = s->next;
    }
    snprintf(out, len, "%" PRId64 "y", v);
}
