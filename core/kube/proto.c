/* proto.c - the protobuf wire format as the API server writes it (proto.h). */
#include "kube/proto.h"

#include <string.h>

#include "util/result.h"
#include "util/utf8.h"

void pb_reader_init(struct pb_reader *r, const void *data, size_t len)
{
    static const uint8_t nothing[1];
    r->p = data ? data : nothing; /* no arithmetic on NULL */
    if (!data)
        len = 0;
    r->end = r->p + len;
    r->error = false;
}

static bool read_varint(struct pb_reader *r, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 10; i++) {
        if (r->p == r->end)
            return false;
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false; /* more than 10 bytes */
}

static bool fail(struct pb_reader *r)
{
    r->error = true;
    r->p = r->end;
    return false;
}

bool pb_next(struct pb_reader *r, struct pb_field *f)
{
    if (r->error || r->p >= r->end)
        return false;
    uint64_t key;
    if (!read_varint(r, &key) || (key >> 3) == 0 || (key >> 3) > UINT32_MAX)
        return fail(r);
    memset(f, 0, sizeof(*f));
    f->number = (uint32_t)(key >> 3);
    f->wire = (enum pb_wire)(key & 7);
    size_t left;
    switch (key & 7) {
    case PB_VARINT:
        if (!read_varint(r, &f->varint))
            return fail(r);
        return true;
    case PB_I64:
    case PB_I32: {
        size_t n = (key & 7) == PB_I64 ? 8 : 4;
        if ((size_t)(r->end - r->p) < n)
            return fail(r);
        for (size_t i = 0; i < n; i++)
            f->varint |= (uint64_t)r->p[i] << (8 * i);
        r->p += n;
        return true;
    }
    case PB_LEN:
        if (!read_varint(r, &f->varint))
            return fail(r);
        left = (size_t)(r->end - r->p);
        if (f->varint > left)
            return fail(r);
        f->data = r->p;
        f->len = (size_t)f->varint;
        r->p += f->len;
        return true;
    default: /* groups (3, 4) and 6, 7 */
        return fail(r);
    }
}

struct pb_reader pb_sub(const struct pb_field *f)
{
    struct pb_reader r;
    pb_reader_init(&r, f->wire == PB_LEN ? f->data : NULL, f->wire == PB_LEN ? f->len : 0);
    return r;
}

bool pb_string(const struct pb_field *f, char *out, size_t cap)
{
    if (cap == 0)
        return false;
    out[0] = '\0';
    if (f->wire != PB_LEN || f->len >= cap)
        return false;
    struct utf8_stream u;
    utf8_stream_init(&u);
    if (utf8_stream_valid_prefix(&u, (const char *)f->data, f->len) != f->len ||
        !utf8_stream_complete(&u))
        return false;
    memcpy(out, f->data, f->len);
    out[f->len] = '\0';
    return true;
}

bool pb_equals(const struct pb_field *f, const char *s)
{
    size_t n = strlen(s);
    return f->wire == PB_LEN && f->len == n && memcmp(f->data, s, n) == 0;
}

bool kube_proto_is(const void *data, size_t len)
{
    return len >= KUBE_PROTO_MAGIC_LEN && memcmp(data, KUBE_PROTO_MAGIC, KUBE_PROTO_MAGIC_LEN) == 0;
}

int kube_proto_unwrap(const void *data, size_t len, const uint8_t **raw, size_t *raw_len)
{
    if (!kube_proto_is(data, len))
        return K_EPARSE;
    struct pb_reader r;
    pb_reader_init(&r, (const uint8_t *)data + KUBE_PROTO_MAGIC_LEN, len - KUBE_PROTO_MAGIC_LEN);
    struct pb_field f;
    bool have = false;
    while (pb_next(&r, &f)) {
        if (f.number == 2 && f.wire == PB_LEN) { /* raw */
            *raw = f.data;
            *raw_len = f.len;
            have = true;
        } else if (f.number == 3 && f.wire == PB_LEN && f.len > 0) { /* contentEncoding */
            return K_EPARSE;
        }
    }
    return r.error || !have ? K_EPARSE : K_OK;
}

/* a ListMeta string member into a caller buffer */
static int list_meta_string(const struct pb_field *f, char *out, size_t cap)
{
    if (!out)
        return K_OK;
    if (f->wire != PB_LEN)
        return K_EPARSE;
    if (f->len >= cap)
        return K_ETOOBIG;
    return pb_string(f, out, cap) ? K_OK : K_EPARSE;
}

int kube_proto_list(const void *data, size_t len,
                    int (*item)(void *ctx, const uint8_t *bytes, size_t len), void *ctx,
                    char *resource_version, char *cont, size_t cap)
{
    if ((resource_version || cont) && cap == 0)
        return K_ETOOBIG;
    if (resource_version)
        resource_version[0] = '\0';
    if (cont)
        cont[0] = '\0';
    const uint8_t *raw;
    size_t raw_len;
    int rc = kube_proto_unwrap(data, len, &raw, &raw_len);
    if (rc)
        return rc;
    struct pb_reader r;
    pb_reader_init(&r, raw, raw_len);
    struct pb_field f;
    while (pb_next(&r, &f)) {
        if (f.wire != PB_LEN)
            continue;
        if (f.number == 2) { /* items */
            rc = item(ctx, f.data, f.len);
            if (rc)
                return rc;
        } else if (f.number == 1) { /* metadata: ListMeta */
            struct pb_reader m = pb_sub(&f);
            struct pb_field g;
            while (pb_next(&m, &g)) {
                if (g.number == 2)
                    rc = list_meta_string(&g, resource_version, cap);
                else if (g.number == 3)
                    rc = list_meta_string(&g, cont, cap);
                if (rc)
                    return rc;
            }
            if (m.error)
                return K_EPARSE;
        }
    }
    return r.error ? K_EPARSE : K_OK;
}

bool kube_proto_status_message(const void *data, size_t len, char *out, size_t cap)
{
    const uint8_t *raw;
    size_t raw_len;
    if (cap == 0 || kube_proto_unwrap(data, len, &raw, &raw_len) != K_OK)
        return false;
    struct pb_reader r;
    pb_reader_init(&r, raw, raw_len);
    struct pb_field f;
    while (pb_next(&r, &f))
        if (f.number == 3 && f.wire == PB_LEN) { /* Status.message */
            /* a message longer than the buffer is cut, at a character boundary */
            struct pb_field cut = f;
            if (cut.len >= cap) {
                cut.len = cap - 1;
                while (cut.len > 0 && (cut.data[cut.len] & 0xc0) == 0x80)
                    cut.len--;
            }
            return pb_string(&cut, out, cap) && out[0];
        }
    return false;
}
