/* Keeps the test support library non-empty. */
typedef int gputri_testlib_empty;
