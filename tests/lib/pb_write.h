/*
 * pb_write.h - writing protobuf by hand for unit tests: the wire format (varints, length-delimited
 * fields), the pieces of a Pod that kube/project_proto.c reads, and the API server's envelope
 * (kube/proto.h), so that tests can build the encodings a server could send, odd ones included.
 * Every function appends to a struct buf (util/buf.h) and fails the running cmocka test when the
 * buffer refuses the bytes. Not thread-safe on one buffer.
 */
#ifndef GPUTRI_TEST_PB_WRITE_H
#define GPUTRI_TEST_PB_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* pb_put_varint() - v as a varint (1 to 10 bytes). */
void pb_put_varint(struct buf *b, uint64_t v);
/* pb_put_bytes() - field `field` as a length-delimited field holding len bytes at data. */
void pb_put_bytes(struct buf *b, unsigned field, const void *data, size_t len);
/* pb_put_text() - the same for the C string s. */
void pb_put_text(struct buf *b, unsigned field, const char *s);
/* pb_put_msg() - the message built in `inner` as field `field`; `inner` is emptied. */
void pb_put_msg(struct buf *b, unsigned field, struct buf *inner);
/*
 * pb_put_quantity() - one entry of a map<string, Quantity> (a ResourceList) as field `field`:
 * {key = 1: name, value = 2: {string = 1: value}}; value NULL writes an entry without its value.
 */
void pb_put_quantity(struct buf *b, unsigned field, const char *name, const char *value);
/*
 * pb_put_pod() - a Pod {metadata {name, namespace}, spec {nodeName (NULL: none), containers
 * {resources {requests {"nvidia.com/gpu": gpus}}}}, status {phase}} as field `field`.
 */
void pb_put_pod(struct buf *b, unsigned field, const char *ns, const char *name, const char *node,
                const char *gpus, const char *phase);
/*
 * pb_put_list() - the envelope ("k8s\0", runtime.Unknown {raw = 2}) around a List whose
 * metadata holds resourceVersion `rv` and whose items (field 2) are already in `items` (built with
 * pb_put_pod(items, 2, ...)); `items` is emptied.
 */
void pb_put_list(struct buf *b, const char *rv, struct buf *items);

#endif
