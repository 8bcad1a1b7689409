/* main.c - the gputri command: triage and explain one pod. The command line is in gputri.c. */
#include <stdio.h>

#include "gputri.h"

int main(int argc, char **argv)
{
    const struct gputri_io io = {.out = stdout, .err = stderr};
    return gputri_main(argc, argv, &io);
}
