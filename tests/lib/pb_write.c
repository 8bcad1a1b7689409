/* pb_write.c - protobuf by hand for unit tests (pb_write.h). */
#include "pb_write.h"

#include <setjmp.h>
#include <stdarg.h>
#include <string.h>

#include <cmocka.h>

#include "kube/proto.h"
#include "util/result.h"

#define INNER_MAX (1u << 24)

void pb_put_varint(struct buf *b, uint64_t v)
{
    char tmp[10];
    size_t n = 0;
    do {
        tmp[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    assert_int_equal(buf_append(b, tmp, n), K_OK);
}

void pb_put_bytes(struct buf *b, unsigned field, const void *data, size_t len)
{
    pb_put_varint(b, (uint64_t)field << 3 | PB_LEN);
    pb_put_varint(b, len);
    assert_int_equal(buf_append(b, len ? data : "", len), K_OK);
}

void pb_put_text(struct buf *b, unsigned field, const char *s)
{
    pb_put_bytes(b, field, s, strlen(s));
}

void pb_put_msg(struct buf *b, unsigned field, struct buf *inner)
{
    pb_put_bytes(b, field, inner->data, inner->len);
    buf_reset(inner);
}

void pb_put_quantity(struct buf *b, unsigned field, const char *name, const char *value)
{
    struct buf e, q;
    buf_init(&e, INNER_MAX);
    buf_init(&q, INNER_MAX);
    pb_put_text(&e, 1, name);
    if (value) {
        pb_put_text(&q, 1, value);
        pb_put_msg(&e, 2, &q);
    }
    pb_put_msg(b, field, &e);
    buf_cleanup(&e);
    buf_cleanup(&q);
}

void pb_put_pod(struct buf *b, unsigned field, const char *ns, const char *name, const char *node,
                const char *gpus, const char *phase)
{
    struct buf pod, meta, spec, c, res, st;
    buf_init(&pod, INNER_MAX), buf_init(&meta, INNER_MAX), buf_init(&spec, INNER_MAX);
    buf_init(&c, INNER_MAX), buf_init(&res, INNER_MAX), buf_init(&st, INNER_MAX);
    pb_put_text(&meta, 1, name);                      /* ObjectMeta.name */
    pb_put_text(&meta, 3, ns);                        /* ObjectMeta.namespace */
    pb_put_msg(&pod, 1, &meta);                       /* Pod.metadata */
    pb_put_quantity(&res, 2, "nvidia.com/gpu", gpus); /* ResourceRequirements.requests */
    pb_put_msg(&c, 8, &res);                          /* Container.resources */
    pb_put_msg(&spec, 2, &c);                         /* PodSpec.containers */
    if (node)
        pb_put_text(&spec, 10, node); /* PodSpec.nodeName */
    pb_put_msg(&pod, 2, &spec);       /* Pod.spec */
    pb_put_text(&st, 1, phase);       /* PodStatus.phase */
    pb_put_msg(&pod, 3, &st);         /* Pod.status */
    pb_put_msg(b, field, &pod);
    buf_cleanup(&pod), buf_cleanup(&meta), buf_cleanup(&spec);
    buf_cleanup(&c), buf_cleanup(&res), buf_cleanup(&st);
}

void pb_put_list(struct buf *b, const char *rv, struct buf *items)
{
    struct buf list, meta, unknown;
    buf_init(&list, INNER_MAX), buf_init(&meta, INNER_MAX), buf_init(&unknown, INNER_MAX);
    pb_put_text(&meta, 2, rv);   /* ListMeta.resourceVersion */
    pb_put_msg(&list, 1, &meta); /* List.metadata */
    assert_int_equal(buf_append(&list, items->data ? items->data : "", items->len), K_OK);
    buf_reset(items);
    pb_put_msg(&unknown, 2, &list); /* Unknown.raw */
    assert_int_equal(buf_append(b, KUBE_PROTO_MAGIC, KUBE_PROTO_MAGIC_LEN), K_OK);
    assert_int_equal(buf_append(b, unknown.data, unknown.len), K_OK);
    buf_cleanup(&list), buf_cleanup(&meta), buf_cleanup(&unknown);
}
