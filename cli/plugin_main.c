/*
 * plugin_main.c - kubectl-gputri, the kubectl plugin: `kubectl gputri pods` and
 * `kubectl gputri explain POD`. The command line is in plugin.c.
 */
#include <stdio.h>

#include "plugin.h"

int main(int argc, char **argv)
{
    const struct plugin_io io = {.out = stdout, .err = stderr};
    return plugin_main(argc, argv, &io);
}
