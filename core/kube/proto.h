/*
 * proto.h - reading the API server's protobuf encoding: the wire format, the envelope, a LIST.
 *
 * An API server answers `Accept: application/vnd.kubernetes.protobuf` for built-in types with
 * the 4 bytes "k8s\0" followed by a runtime.Unknown message whose `raw` member (field 2) holds
 * the object (kubernetes/kubernetes:
 * staging/src/k8s.io/apimachinery/pkg/runtime/serializer/protobuf/protobuf.go; the message
 * numbers are those of the generated.proto files under staging/src/k8s.io/api and
 * staging/src/k8s.io/apimachinery). This is what client-go's informers read; it is several times
 * cheaper than JSON for the server to write and for us to read, as unread members are skipped
 * by their length without being looked at.
 *
 * Only what gputri reads is decoded; every other field is skipped. Every length is checked
 * against the bytes left, so a reader never leaves its buffer whatever the input; nothing here
 * allocates. Pure functions, thread-safe on distinct readers. Fuzzed by fuzz_proto.
 */
#ifndef GPUTRI_KUBE_PROTO_H
#define GPUTRI_KUBE_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The media type asked for, with JSON as the fallback a server without protobuf answers in. */
#define KUBE_PROTO_ACCEPT "application/vnd.kubernetes.protobuf, application/json"

/* The envelope's first bytes. */
#define KUBE_PROTO_MAGIC "k8s\0"
#define KUBE_PROTO_MAGIC_LEN 4

/* A message being read: the bytes not read yet. */
struct pb_reader {
    const uint8_t *p, *end;
    bool error; /* set by pb_next on malformed input; reading stops */
};

/* Wire types (protobuf encoding). Groups (3, 4) are not used by Kubernetes and are malformed. */
enum pb_wire { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

/* One field: its number and wire type, and the value (varint) or the bytes (len, borrowed). */
struct pb_field {
    uint32_t number;
    enum pb_wire wire;
    uint64_t varint;     /* PB_VARINT, PB_I64, PB_I32 */
    const uint8_t *data; /* PB_LEN: the bytes, inside the reader's buffer */
    size_t len;
};

/* pb_reader_init() - a reader over `len` bytes at `data` (borrowed). */
void pb_reader_init(struct pb_reader *r, const void *data, size_t len);

/*
 * pb_next() - read the next field into *f. Returns true when one was read; false at the end of
 * the message or on malformed input (r->error set: a varint of more than 10 bytes, a length past
 * the end, field number 0, a group or an unknown wire type). Each call consumes at least one
 * byte, so a loop over pb_next ends within the buffer's length.
 */
bool pb_next(struct pb_reader *r, struct pb_field *f);

/* pb_sub() - a reader over the bytes of a PB_LEN field. */
struct pb_reader pb_sub(const struct pb_field *f);

/*
 * pb_string() - the PB_LEN field `f` as a C string, copied to out (cap bytes with the NUL).
 * Returns false, out set to "", when it is not PB_LEN, holds a NUL byte, is not UTF-8, or does
 * not fit.
 */
bool pb_string(const struct pb_field *f, char *out, size_t cap);

/* pb_equals() - whether the PB_LEN field `f` holds exactly the bytes of the C string s. */
bool pb_equals(const struct pb_field *f, const char *s);

/*
 * kube_proto_is() - whether `len` bytes at `data` start with the protobuf envelope's magic (a
 * JSON body never does).
 */
bool kube_proto_is(const void *data, size_t len);

/*
 * kube_proto_unwrap() - the object inside an envelope: *raw and *raw_len (borrowed from data)
 * receive runtime.Unknown's raw bytes. Returns K_OK, or K_EPARSE when the magic is missing, the
 * Unknown is malformed, it has no raw member, or names a contentEncoding (the API server writes
 * none).
 */
int kube_proto_unwrap(const void *data, size_t len, const uint8_t **raw, size_t *raw_len);

/*
 * kube_proto_list() - read a LIST response body (envelope included): every kind's List has
 * metadata (ListMeta) = 1 and items = 2. Calls item(ctx, bytes, len) for each item in order
 * (the item's encoded message, borrowed for the call); a non-zero return stops the walk with
 * that value. resource_version and cont (caller buffers of cap bytes each, may be NULL) receive
 * ListMeta's resourceVersion and continue ("" when absent). Returns K_OK, the item callback's
 * value, K_EPARSE (malformed; items already delivered stay delivered) or K_ETOOBIG (a
 * resourceVersion or continue token longer than cap - 1).
 */
int kube_proto_list(const void *data, size_t len,
                    int (*item)(void *ctx, const uint8_t *bytes, size_t len), void *ctx,
                    char *resource_version, char *cont, size_t cap);

/*
 * kube_proto_status_message() - the message of a meta/v1 Status in an envelope (an error the
 * API server answered in protobuf), copied to out (cap bytes with the NUL). Returns false when
 * the body is not one or has no message.
 */
bool kube_proto_status_message(const void *data, size_t len, char *out, size_t cap);

#endif
