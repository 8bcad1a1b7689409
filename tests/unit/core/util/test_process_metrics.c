/* Tests for core/util/process_metrics.c: process_* from procfs, as client_golang reads them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "text.h"
#include "util/buf.h"
#include "util/process_metrics.h"
#include "util/result.h"

/* proc(5) stat of a process whose command holds spaces and parentheses: utime 250, stime 150,
 * starttime 12345, vsize 104857600, rss 2560 pages. */
static const char STAT[] =
    "4242 (gputri (x) y) S 1 4242 4242 0 -1 4194560 1131 0 0 0 250 150 0 0 20 0 9 0 12345 "
    "104857600 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";

static const char LIMITS[] =
    "Limit                     Soft Limit           Hard Limit           Units     \n"
    "Max cpu time              unlimited            unlimited            seconds   \n"
    "Max open files            1024                 524288               files     \n"
    "Max locked memory         8388608              8388608              bytes     \n"
    "Max address space         unlimited            unlimited            bytes     \n";

static void test_parse_stat(void **state)
{
    (void)state;
    struct process_stats s = {0};
    assert_true(process_stats_parse_stat(STAT, 1700000000, 100, 4096, &s));
    assert_true(s.have_stat);
    assert_true(s.cpu_seconds > 3.99 && s.cpu_seconds < 4.01); /* (250 + 150) / 100 */
    assert_int_equal(s.virtual_memory_bytes, 104857600);
    assert_int_equal(s.resident_memory_bytes, 2560 * 4096);
    assert_true(s.have_start_time);
    assert_true(s.start_time_seconds > 1700000123.44 && s.start_time_seconds < 1700000123.46);

    /* no btime: no start time, the rest still read */
    struct process_stats n = {0};
    assert_true(process_stats_parse_stat(STAT, 0, 100, 4096, &n));
    assert_true(n.have_stat);
    assert_false(n.have_start_time);

    /* a negative rss reads as 0 */
    struct process_stats neg = {0};
    assert_true(process_stats_parse_stat("1 (a) R 0 0 0 0 0 0 0 0 0 0 1 1 0 0 0 0 1 0 5 10 -3\n", 1,
                                         100, 4096, &neg));
    assert_int_equal(neg.resident_memory_bytes, 0);
}

static void test_parse_stat_refuses_garbage(void **state)
{
    (void)state;
    struct process_stats s = {0};
    assert_false(process_stats_parse_stat("", 1, 100, 4096, &s));
    assert_false(process_stats_parse_stat("1 (a) R 0 0", 1, 100, 4096, &s));
    assert_false(process_stats_parse_stat("1 a R 0 0 0 0 0 0 0 0 0 0 1 1 0 0 0 0 1 0 5 10 3\n", 1,
                                          100, 4096, &s));
    assert_false(process_stats_parse_stat("1 (a) R 0 0 0 0 0 0 0 0 0 0 x 1 0 0 0 0 1 0 5 10 3\n", 1,
                                          100, 4096, &s));
    /* utime past 2^64 */
    assert_false(process_stats_parse_stat(
        "1 (a) R 0 0 0 0 0 0 0 0 0 0 99999999999999999999 1 0 0 0 0 1 0 5 10 3\n", 1, 100, 4096,
        &s));
    assert_false(process_stats_parse_stat(NULL, 1, 100, 4096, &s));
    assert_false(s.have_stat);
}

static void test_parse_limits(void **state)
{
    (void)state;
    struct process_stats s = {0};
    assert_true(process_stats_parse_limits(LIMITS, &s));
    assert_true(s.have_limits);
    assert_int_equal(s.max_fds, 1024);
    assert_true(s.max_virtual_memory_bytes == PROCESS_UNLIMITED);

    struct process_stats m = {0};
    assert_false(process_stats_parse_limits("Limit Soft Hard Units\n"
                                            "Max open files            1024    1024    files\n",
                                            &m));
    assert_false(m.have_limits);
    assert_false(process_stats_parse_limits(
        "Max open files            lots      1024    files\n"
        "Max address space         unlimited            unlimited            bytes\n",
        &m));
    /* "Max open filesystems" is not "Max open files" */
    assert_false(process_stats_parse_limits(
        "Max open filesystems      7      7    files\n"
        "Max address space         unlimited            unlimited            bytes\n",
        &m));
}

static void test_parse_btime(void **state)
{
    (void)state;
    assert_int_equal(process_stats_parse_btime("cpu  1 2 3\nintr 5 0\nbtime 1700000000\n"
                                               "processes 9\n"),
                     1700000000);
    assert_int_equal(process_stats_parse_btime("cpu 1\nbtimex 5\n"), 0);
    assert_int_equal(process_stats_parse_btime(""), 0);
}

/* A directory laid out as procfs: the rendering is exactly client_golang's families. */
static void test_read_and_render_fake_proc(void **state)
{
    (void)state;
    char root[] = "/tmp/gputri-test-proc-XXXXXX";
    assert_non_null(mkdtemp(root));
    char path[512];
    snprintf(path, sizeof(path), "%s/self", root);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/self/fd", root);
    assert_int_equal(mkdir(path, 0700), 0);
    test_write_file(root, "stat", "cpu 1 2 3\nbtime 1700000000\n");
    test_write_file(root, "self/stat", STAT);
    test_write_file(root, "self/limits", LIMITS);
    test_write_file(root, "self/fd/0", "");
    test_write_file(root, "self/fd/1", "");
    test_write_file(root, "self/fd/2", "");

    struct process_stats s;
    process_stats_read(root, &s);
    assert_true(s.have_stat && s.have_start_time && s.have_limits && s.have_open_fds);
    assert_int_equal(s.open_fds, 3);
    struct buf b;
    buf_init(&b, 1 << 16);
    assert_int_equal(process_metrics_render(&s, &b), K_OK);
    long page = sysconf(_SC_PAGESIZE);
    long hz = sysconf(_SC_CLK_TCK);
    char want[2048];
    snprintf(want, sizeof(want),
             "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
             "# TYPE process_cpu_seconds_total counter\n"
             "process_cpu_seconds_total %.2f\n"
             "# HELP process_open_fds Number of open file descriptors.\n"
             "# TYPE process_open_fds gauge\n"
             "process_open_fds 3\n"
             "# HELP process_max_fds Maximum number of open file descriptors.\n"
             "# TYPE process_max_fds gauge\n"
             "process_max_fds 1024\n"
             "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
             "# TYPE process_virtual_memory_bytes gauge\n"
             "process_virtual_memory_bytes 104857600\n"
             "# HELP process_virtual_memory_max_bytes Maximum amount of virtual memory available "
             "in bytes.\n"
             "# TYPE process_virtual_memory_max_bytes gauge\n"
             "process_virtual_memory_max_bytes 18446744073709551615\n"
             "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
             "# TYPE process_resident_memory_bytes gauge\n"
             "process_resident_memory_bytes %ld\n"
             "# HELP process_start_time_seconds Start time of the process since unix epoch in "
             "seconds.\n"
             "# TYPE process_start_time_seconds gauge\n"
             "process_start_time_seconds %.2f\n",
             400.0 / (double)hz, 2560 * page, 1700000000.0 + 12345.0 / (double)hz);
    assert_string_equal(buf_cstr(&b), want);
    buf_cleanup(&b);

    /* without the limits file and /proc/stat: those families are left out */
    snprintf(path, sizeof(path), "%s/self/limits", root);
    assert_int_equal(unlink(path), 0);
    snprintf(path, sizeof(path), "%s/stat", root);
    assert_int_equal(unlink(path), 0);
    process_stats_read(root, &s);
    assert_true(s.have_stat && s.have_open_fds);
    assert_false(s.have_limits || s.have_start_time);
    buf_init(&b, 1 << 16);
    assert_int_equal(process_metrics_render(&s, &b), K_OK);
    assert_non_null(strstr(buf_cstr(&b), "process_cpu_seconds_total "));
    assert_null(strstr(buf_cstr(&b), "process_max_fds"));
    assert_null(strstr(buf_cstr(&b), "process_start_time_seconds"));
    buf_cleanup(&b);

    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
    assert_int_equal(system(cmd), 0);

    /* nothing readable: nothing rendered */
    process_stats_read("/nonexistent-gputri-proc", &s);
    assert_false(s.have_stat || s.have_open_fds || s.have_limits || s.have_start_time);
    buf_init(&b, 1 << 16);
    assert_int_equal(process_metrics_render(&s, &b), K_OK);
    assert_string_equal(buf_cstr(&b), "");
    buf_cleanup(&b);
}

/* This process, from the real /proc: plausible values. */
static void test_real_proc(void **state)
{
    (void)state;
    struct process_stats s;
    process_stats_read(NULL, &s);
    assert_true(s.have_stat && s.have_start_time && s.have_limits && s.have_open_fds);
    assert_true(s.open_fds >= 3); /* stdin, stdout, stderr */
    /* qemu-user synthesizes /proc/self/stat with zeros for every counter (only pid, comm, ppid,
     * starttime and startstack are filled: qemu linux-user/syscall.c open_self_stat), so memory
     * and CPU are only checked on a real kernel. */
    if (getenv("GPUTRI_TEST_EMULATED") == NULL) {
        assert_true(s.resident_memory_bytes > 0);
        assert_true(s.virtual_memory_bytes >= s.resident_memory_bytes);
    }
    /* the soft limit getrlimit(2) reports (valgrind reports its own, lower one: at most that) */
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    assert_true(s.max_fds >= (rl.rlim_cur == RLIM_INFINITY ? PROCESS_UNLIMITED : rl.rlim_cur));
    double now = (double)time(NULL);
    assert_true(s.start_time_seconds <= now + 2 && s.start_time_seconds > now - 3600);
    assert_true(s.cpu_seconds >= 0);
    struct buf b;
    buf_init(&b, 1 << 16);
    assert_int_equal(process_metrics_append(&b), K_OK);
    assert_non_null(strstr(buf_cstr(&b), "\nprocess_open_fds "));
    assert_non_null(strstr(buf_cstr(&b), "\nprocess_start_time_seconds "));
    /* a buffer too small for the families: the buf error */
    struct buf small;
    buf_init(&small, 16);
    assert_int_equal(process_metrics_append(&small), K_ETOOBIG);
    buf_cleanup(&small);
    buf_cleanup(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_stat),
        cmocka_unit_test(test_parse_stat_refuses_garbage),
        cmocka_unit_test(test_parse_limits),
        cmocka_unit_test(test_parse_btime),
        cmocka_unit_test(test_read_and_render_fake_proc),
        cmocka_unit_test(test_real_proc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
