/* Tests for core/util/file.c: bounded whole-file reads. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/file.h"
#include "util/result.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/gputri-test-file-XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

static const char *write_file(const char *name, const char *content, size_t len)
{
    static char path[128];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(content, 1, len, f), len);
    fclose(f);
    return path;
}

static void test_reads_whole_files(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 16);
    assert_int_equal(file_read(write_file("a", "hello\n", 6), &b, 0), K_OK);
    assert_int_equal(b.len, 6);
    assert_string_equal(buf_cstr(&b), "hello\n");
    buf_cleanup(&b);
    /* exactly at the limit is fine, an empty file gives "" */
    buf_init(&b, 16);
    assert_int_equal(file_read(write_file("b", "0123456789abcdef", 16), &b, FILE_REGULAR_ONLY),
                     K_OK);
    assert_int_equal(b.len, 16);
    buf_cleanup(&b);
    buf_init(&b, 16);
    assert_int_equal(file_read(write_file("c", "", 0), &b, 0), K_OK);
    assert_non_null(b.data);
    assert_string_equal(b.data, "");
    buf_cleanup(&b);
}

static void test_errors(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 16);
    assert_int_equal(file_read(write_file("big", "0123456789abcdefg", 17), &b, 0), K_ETOOBIG);
    assert_int_equal(b.len, 0);
    char path[128];
    snprintf(path, sizeof(path), "%s/missing", dir);
    assert_int_equal(file_read(path, &b, 0), K_ENOTFOUND);
    assert_int_equal(errno, ENOENT);
    snprintf(path, sizeof(path), "%s/missing/x", dir);
    assert_int_equal(file_read(path, &b, 0), K_ENOTFOUND);
    assert_int_equal(file_read(dir, &b, 0), K_EIO); /* a directory */
    assert_int_equal(file_read(dir, &b, FILE_REGULAR_ONLY), K_EIO);
    /* a FIFO with no writer: refused at once instead of blocking */
    snprintf(path, sizeof(path), "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(file_read(path, &b, FILE_REGULAR_ONLY), K_EIO);
    assert_int_equal(b.len, 0);
    buf_cleanup(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reads_whole_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
