/* Tests for core/util/clock.c: the system clocks and the fake one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "util/clock.h"

static void test_system_clock(void **state)
{
    (void)state;
    int64_t a = clock_mono_ns(NULL), b = clock_mono_ns(clock_system());
    assert_true(b >= a);
    /* the wall clock is the epoch time */
    int64_t wall = clock_wall_s(NULL), now = (int64_t)time(NULL);
    assert_true(wall >= now - 1 && wall <= now + 1);
}

static void test_fake_clock_moves_only_when_told(void **state)
{
    (void)state;
    struct clock_fake f;
    clock_fake_init(&f, 1764513000000);
    struct clock c = clock_fake_clock(&f);
    assert_int_equal(clock_mono_ms(&c), 1000);
    assert_int_equal(clock_wall_ms(&c), 1764513000000);
    assert_int_equal(clock_wall_s(&c), 1764513000);
    assert_int_equal(clock_mono_ms(&c), 1000);
    clock_fake_advance_ms(&f, 1500);
    assert_int_equal(clock_mono_ms(&c), 2500);
    assert_int_equal(clock_mono_ns(&c), 2500000000);
    assert_int_equal(clock_wall_ms(&c), 1764513001500);
    clock_fake_advance_ms(&f, -5); /* never backwards */
    assert_int_equal(clock_mono_ms(&c), 2500);
}

static void test_rfc3339(void **state)
{
    (void)state;
    char out[CLOCK_RFC3339_MAX];
    clock_format_rfc3339(1764513000123, false, out, sizeof(out));
    assert_string_equal(out, "2025-11-30T14:30:00Z");
    clock_format_rfc3339(1764513000123, true, out, sizeof(out));
    assert_string_equal(out, "2025-11-30T14:30:00.123000Z");
    clock_format_rfc3339(-1, true, out, sizeof(out));
    assert_string_equal(out, "1969-12-31T23:59:59.999000Z");
    clock_format_rfc3339(0, false, out, 8); /* cut, but terminated */
    assert_string_equal(out, "1970-01");
}

static void test_parse_rfc3339(void **state)
{
    (void)state;
    int64_t t = -1;
    assert_true(clock_parse_rfc3339("1970-01-01T00:00:00Z", &t));
    assert_int_equal(t, 0);
    assert_true(clock_parse_rfc3339("2026-12-01T12:10:29Z", &t));
    assert_int_equal(t, 1796127029);
    assert_true(clock_parse_rfc3339("2026-12-01T12:10:29.123456Z", &t));
    assert_int_equal(t, 1796127029);
    assert_true(clock_parse_rfc3339("2026-12-01T14:10:29+02:00", &t));
    assert_int_equal(t, 1796127029);
    assert_true(clock_parse_rfc3339("2024-02-29T00:00:00Z", &t));
    assert_int_equal(t, 1709164800);
    int64_t ms = -1;
    assert_true(clock_parse_rfc3339_ms("2026-12-01T12:10:29.123456789Z", &ms));
    assert_int_equal(ms, 1796127029123);
    assert_true(clock_parse_rfc3339_ms("1970-01-01T00:00:01.5Z", &ms));
    assert_int_equal(ms, 1500);
    /* and back */
    char buf[CLOCK_RFC3339_MAX];
    clock_format_rfc3339(1796127029000, false, buf, sizeof(buf));
    assert_string_equal(buf, "2026-12-01T12:10:29Z");
    t = 7;
    const char *bad[] = {"",
                         "2026-12-01",
                         "2026-12-01T12:10:29",
                         "2026-13-01T00:00:00Z",
                         "2026-12-01T12:10:29.Z",
                         "2026-12-01T12:10:29Zx",
                         "1969-12-31T23:59:59Z",
                         "2026-12-01 12:10:29Z",
                         "2026-12-01T12:10:29+0200",
                         NULL};
    for (size_t i = 0; bad[i]; i++)
        assert_false(clock_parse_rfc3339(bad[i], &t));
    assert_false(clock_parse_rfc3339(NULL, &t));
    assert_int_equal(t, 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_rfc3339),
        cmocka_unit_test(test_system_clock),
        cmocka_unit_test(test_fake_clock_moves_only_when_told),
        cmocka_unit_test(test_rfc3339),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
