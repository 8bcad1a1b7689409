/*
 * main.c - gputri-certs: make the webhook's CA and serving certificate, write them to files,
 * a kubernetes.io/tls Secret and the ValidatingWebhookConfiguration's caBundle; inspect certs.
 * The commands are in commands.c.
 */
#include <stdio.h>

#include "commands.h"

int main(int argc, char **argv)
{
    const struct certs_io io = {.out = stdout, .err = stderr};
    return certs_main(argc, argv, &io);
}
