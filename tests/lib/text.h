/*
 * text.h - reading what a unit test got back as text: the lines of a scrape that start with a
 * prefix, and the output of a shell command (curl against a server the test started); writing
 * the costliest JSON per byte, for the tree budgets; and writing a file a test reads.
 */
#ifndef GPUTRI_TEST_TEXT_H
#define GPUTRI_TEST_TEXT_H

#include <stddef.h>

/*
 * test_lines_with() - the lines of `text` that start with `prefix`, each with its '\n', joined
 * into out (len bytes, always NUL-terminated; a line that would not fit is left out).
 */
void test_lines_with(const char *text, const char *prefix, char *out, size_t len);

/*
 * test_command_output() - run `cmd` with /bin/sh (popen) and put the first len - 1 bytes it
 * writes to stdout into out, NUL-terminated. Fails the running cmocka test when popen fails.
 */
void test_command_output(const char *cmd, char *out, size_t len);

/*
 * test_empty_objects() - head, then an array of empty objects "{},{},...,{}" (no brackets), then
 * tail, at most len bytes in all: the text whose json-c tree costs most per byte (about 800 bytes
 * per "{},"). malloc'd, NUL-terminated; fails the running cmocka test when out of memory.
 */
char *test_empty_objects(const char *head, size_t len, const char *tail);

/*
 * test_write_file() - create or truncate `dir`/`name` and write `text` into it. Fails the running
 * cmocka test when the file cannot be opened. Returns the path (static storage, overwritten by the
 * next call).
 */
const char *test_write_file(const char *dir, const char *name, const char *text);

#endif
