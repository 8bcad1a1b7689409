/*
 * test_read_budget.c - the budget and schema of the objects the clients read
 * (core/kube/read_budget.c): every Kubernetes object in tests/fixtures reads as the same tree
 * less exactly the members cut, and projects the same both ways; a pod with 375,000 empty
 * imagePullSecrets is read within a small fixed peak of memory and projects the same; a pod whose
 * kept part is over the budget is not built, and is counted; in a LIST or a watch it is skipped
 * and the other objects still come.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "gpus.h"
#include "kube/project.h"
#include "kube/list_parser.h"
#include "kube/read_budget.h"
#include "kube/watch.h"
#include "model/dra.h"
#include "model/model.h"
#include "objects.h"
#include "util/buf.h"
#include "util/result.h"

/*
 * A counting allocator: every malloc of this process goes through glibc's own entry points with
 * the usable size added up, so a test can read the peak bytes in use during a call. Not under
 * the sanitizers, which bring their own allocator; under valgrind, which replaces these entry
 * points too, counting_works() finds the counter idle and the figures are not checked.
 */
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) &&       \
    !defined(__has_feature)
#define COUNTING 1
#elif defined(__GLIBC__) && defined(__has_feature)
#if !__has_feature(address_sanitizer) && !__has_feature(thread_sanitizer)
#define COUNTING 1
#endif
#endif

#ifdef COUNTING
#include <malloc.h>
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void __libc_free(void *p);

static int64_t in_use, peak;

static void count(void *p, int64_t sign)
{
    if (!p)
        return;
    int64_t now =
        __atomic_add_fetch(&in_use, sign * (int64_t)malloc_usable_size(p), __ATOMIC_RELAXED);
    if (now > __atomic_load_n(&peak, __ATOMIC_RELAXED))
        __atomic_store_n(&peak, now, __ATOMIC_RELAXED);
}

void *malloc(size_t n)
{
    void *p = __libc_malloc(n);
    count(p, 1);
    return p;
}

void *calloc(size_t n, size_t size)
{
    void *p = __libc_calloc(n, size);
    count(p, 1);
    return p;
}

void *realloc(void *old, size_t n)
{
    count(old, -1);
    void *p = __libc_realloc(old, n);
    count(p ? p : (n ? old : NULL), 1);
    return p;
}

void free(void *p)
{
    count(p, -1);
    __libc_free(p);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    void *p = __libc_memalign(align, n);
    if (!p)
        return 12; /* ENOMEM */
    count(p, 1);
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    void *p = __libc_memalign(align, n);
    count(p, 1);
    return p;
}

/* Start a measurement: the peak from here on, above what is in use now. */
static int64_t peak_start(void)
{
    int64_t now = __atomic_load_n(&in_use, __ATOMIC_RELAXED);
    __atomic_store_n(&peak, now, __ATOMIC_RELAXED);
    return now;
}

static int64_t peak_since(int64_t base)
{
    return __atomic_load_n(&peak, __ATOMIC_RELAXED) - base;
}

/* Whether json-c's allocations reach the counter (not under valgrind, which binds the
 * libraries' malloc to its own). */
static bool counting_works(void)
{
    static char text[1 << 20];
    int64_t base = peak_start();
    json_object *s = json_object_new_string_len(text, sizeof(text));
    bool seen = peak_since(base) >= (int64_t)sizeof(text);
    json_object_put(s);
    return seen;
}
#endif

/* The value at a dotted path, or NULL. */
static json_object *at(json_object *o, const char *a, const char *b)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, a, &v))
        return NULL;
    if (b && (!json_object_is_type(v, json_type_object) || !json_object_object_get_ex(v, b, &v)))
        return NULL;
    return v;
}

/* What the schema should leave of an object: the regions null, the container members cut. */
static void expected_cut(json_object *o)
{
    json_object *meta = at(o, "metadata", NULL), *spec = at(o, "spec", NULL);
    if (meta && json_object_is_type(meta, json_type_object) && at(meta, "managedFields", NULL))
        json_object_object_add(meta, "managedFields", NULL);
    if (!spec || !json_object_is_type(spec, json_type_object))
        return;
    static const char *const regions[] = {"imagePullSecrets", "volumes"};
    for (size_t i = 0; i < 2; i++)
        if (json_object_object_get_ex(spec, regions[i], NULL))
            json_object_object_add(spec, regions[i], NULL);
    static const char *const lists[] = {"containers", "initContainers", "ephemeralContainers"};
    static const char *const cut[] = {
        "env",     "envFrom",       "volumeMounts",   "volumeDevices", "ports",    "args",
        "command", "livenessProbe", "readinessProbe", "startupProbe",  "lifecycle"};
    for (size_t l = 0; l < 3; l++) {
        json_object *arr = at(spec, lists[l], NULL);
        if (!arr || !json_object_is_type(arr, json_type_array))
            continue;
        for (size_t i = 0; i < json_object_array_length(arr); i++) {
            json_object *c = json_object_array_get_idx(arr, i);
            if (!json_object_is_type(c, json_type_object))
                continue;
            for (size_t k = 0; k < sizeof(cut) / sizeof(cut[0]); k++)
                json_object_object_del(c, cut[k]);
        }
    }
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The projections of `whole` and `cut` (an object of `kind`) agree; 0 or 1 failure. */
static int same_projection(const char *path, const char *kind, json_object *whole, json_object *cut)
{
    int a, b, bad = 0;
    if (strcmp(kind, "Pod") == 0) {
        struct kpod p = {0}, q = {0};
        a = project_pod(whole, &test_gpus, &p);
        b = project_pod(cut, &test_gpus, &q);
        if (a == K_OK && b == K_OK)
            bad = !same_str(p.ns, q.ns) || !same_str(p.name, q.name) || !same_str(p.uid, q.uid) ||
                  !same_str(p.node_name, q.node_name) ||
                  !same_str(p.scheduler_name, q.scheduler_name) ||
                  !same_str(p.runtime_class, q.runtime_class) || p.phase != q.phase ||
                  p.deleting != q.deleting || p.gpu_requests.n != q.gpu_requests.n ||
                  p.node_selector.n != q.node_selector.n || p.n_tolerations != q.n_tolerations ||
                  !same_str(p.cause, q.cause) || !same_str(p.detail, q.detail) ||
                  p.n_claims != q.n_claims || p.n_claim_statuses != q.n_claim_statuses ||
                  p.created != q.created || !same_str(p.owner_uid, q.owner_uid) ||
                  p.n_scheduling_gates != q.n_scheduling_gates;
        for (size_t i = 0; !bad && a == K_OK && b == K_OK && i < p.gpu_requests.n; i++)
            bad = strcmp(p.gpu_requests.items[i].name, q.gpu_requests.items[i].name) != 0 ||
                  p.gpu_requests.items[i].value != q.gpu_requests.items[i].value;
        pod_cleanup(&p);
        pod_cleanup(&q);
    } else if (strcmp(kind, "Node") == 0) {
        struct knode p = {0}, q = {0};
        a = project_node(whole, &test_gpus, &p);
        b = project_node(cut, &test_gpus, &q);
        if (a == K_OK && b == K_OK)
            bad = !same_str(p.name, q.name) || p.n_taints != q.n_taints ||
                  p.unschedulable != q.unschedulable || p.capacity.n != q.capacity.n ||
                  p.allocatable.n != q.allocatable.n || p.labels.n != q.labels.n;
        node_cleanup(&p);
        node_cleanup(&q);
    } else if (strcmp(kind, "ResourceClaim") == 0) {
        struct dra_claim p = {0}, q = {0};
        a = project_dra_claim(whole, &p);
        b = project_dra_claim(cut, &q);
        dra_claim_cleanup(&p);
        dra_claim_cleanup(&q);
    } else if (strcmp(kind, "ResourceClaimTemplate") == 0) {
        struct dra_template p = {0}, q = {0};
        a = project_dra_template(whole, &p);
        b = project_dra_template(cut, &q);
        dra_template_cleanup(&p);
        dra_template_cleanup(&q);
    } else if (strcmp(kind, "ResourceSlice") == 0) {
        struct dra_slice p = {0}, q = {0};
        a = project_dra_slice(whole, &p);
        b = project_dra_slice(cut, &q);
        dra_slice_cleanup(&p);
        dra_slice_cleanup(&q);
    } else if (strcmp(kind, "DeviceClass") == 0) {
        struct dra_class p = {0}, q = {0};
        a = project_dra_class(whole, &p);
        b = project_dra_class(cut, &q);
        dra_class_cleanup(&p);
        dra_class_cleanup(&q);
    } else {
        return 0;
    }
    if (a != b || bad) {
        print_error("%s: a %s projects differently when cut (%d, %d)\n", path, kind, a, b);
        return 1;
    }
    return 0;
}

struct walk {
    const char *path;
    size_t objects;
    int failures;
};

/* Every Kubernetes object (an object with "kind" and "metadata") anywhere in v. */
static void walk(struct walk *w, json_object *v)
{
    if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++)
            walk(w, json_object_array_get_idx(v, i));
        return;
    }
    if (!json_object_is_type(v, json_type_object))
        return;
    json_object *kind = at(v, "kind", NULL);
    if (kind && json_object_is_type(kind, json_type_string) && at(v, "metadata", NULL)) {
        w->objects++;
        const char *text = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
        struct json_tree t;
        char err[160];
        int rc = kube_read_parse(&t, KUBE_READ_OBJECT, text, strlen(text), err, sizeof(err));
        json_object *want = NULL;
        if (rc != K_OK || json_object_deep_copy(v, &want, NULL) != 0) {
            print_error("%s: %s not read: %d %s\n", w->path, json_object_get_string(kind), rc, err);
            w->failures++;
        } else {
            expected_cut(want);
            if (!json_object_equal(want, t.root)) {
                print_error("%s: a %s reads as %s\n", w->path, json_object_get_string(kind),
                            json_object_to_json_string(t.root));
                w->failures++;
            }
            w->failures += same_projection(w->path, json_object_get_string(kind), v, t.root);
        }
        json_object_put(want);
        json_tree_free(&t);
    }
    json_object_object_foreach(v, key, member)
    {
        (void)key;
        walk(w, member);
    }
}

static int check_fixture(const char *path, void *ctx)
{
    size_t *objects = ctx;
    json_object *root = json_object_from_file(path);
    if (!root)
        return 0; /* not JSON: the fixtures of malformed input */
    struct walk w = {path, 0, 0};
    walk(&w, root);
    *objects += w.objects;
    json_object_put(root);
    return w.failures;
}

static void test_fixtures_read_the_same(void **state)
{
    (void)state;
    static const char *const subs[] = {"admission", "classify", "dra", "mirror", "watch"};
    size_t objects = 0;
    int failures = 0;
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
        size_t n = 0;
        failures += test_fixtures_each(FIXTURES_DIR, subs[i], check_fixture, &objects, &n);
    }
    assert_true(objects >= 100);
    if (failures)
        fail_msg("%d object(s) read differently", failures);
}

/* A pod with `n` empty imagePullSecrets, `n_env` env entries in its one container. */
static void hostile_pod(struct buf *b, size_t n_secrets, size_t n_env)
{
    buf_init(b, 64u << 20);
    assert_int_equal(buf_printf(b, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
                                   "{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u1\"},"
                                   "\"spec\":{\"imagePullSecrets\":["),
                     K_OK);
    for (size_t i = 0; i < n_secrets; i++)
        assert_int_equal(buf_append(b, i ? ",{}" : "{}", i ? 3 : 2), K_OK);
    assert_int_equal(buf_printf(b, "],\"containers\":[{\"name\":\"c\",\"env\":["), K_OK);
    for (size_t i = 0; i < n_env; i++)
        assert_int_equal(buf_append(b, i ? ",{}" : "{}", i ? 3 : 2), K_OK);
    assert_int_equal(buf_printf(b, "],\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\"}}}]},"
                                   "\"status\":{\"phase\":\"Pending\"}}"),
                     K_OK);
}

static void test_hostile_pull_secrets(void **state)
{
    (void)state;
    struct buf b;
    hostile_pod(&b, 375000, 0);
    assert_true(b.len > 1000000);
#ifdef COUNTING
    bool counting = counting_works();
    int64_t base = peak_start();
#endif
    struct json_tree t;
    char err[160];
    assert_int_equal(kube_read_parse(&t, KUBE_READ_OBJECT, b.data, b.len, err, sizeof(err)), K_OK);
    struct kpod p = {0};
    assert_int_equal(project_pod(t.root, &test_gpus, &p), K_OK);
#ifdef COUNTING
    int64_t used = peak_since(base);
    if (!counting)
        print_message(
            "the counting allocator is not in effect here (valgrind?): figures not checked\n");
    else {
        /* the copy of the text (1.1 MB) and a small tree; json-c on the whole text: ~300 MB */
        print_message("peak %.2f MiB for %zu bytes of pod\n", (double)used / (1 << 20), b.len);
        assert_true(used < (4 << 20));
        /* the counter sees json-c: the whole text of a pod with 10,000 of them is ~8 MB of tree */
        struct buf small;
        hostile_pod(&small, 10000, 0);
        base = peak_start();
        json_object *whole = json_tokener_parse(small.data);
        assert_non_null(whole);
        int64_t whole_used = peak_since(base);
        print_message("json-c on the whole text: peak %.2f MiB for %zu bytes\n",
                      (double)whole_used / (1 << 20), small.len);
        assert_true(whole_used > 10000 * 500);
        json_object_put(whole);
        buf_cleanup(&small);
    }
#endif
    assert_string_equal(p.name, "p");
    assert_int_equal(p.gpu_requests.n, 1);
    assert_int_equal(p.gpu_requests.items[0].value, 2);
    assert_true(json_object_is_type(at(t.root, "spec", "imagePullSecrets"), json_type_null));
    pod_cleanup(&p);
    json_tree_free(&t);
    buf_cleanup(&b);
}

static void test_over_budget_not_built(void **state)
{
    (void)state;
    struct buf b;
    hostile_pod(&b, 0, 375000); /* env is cut, but priced: ~390 MB estimated */
    uint64_t before = kube_read_over_budget_total();
#ifdef COUNTING
    bool counting = counting_works();
    int64_t base = peak_start();
#endif
    struct json_tree t;
    char err[160];
    assert_int_equal(kube_read_parse(&t, KUBE_READ_OBJECT, b.data, b.len, err, sizeof(err)),
                     K_ETOOBIG);
    assert_null(t.root);
    assert_true(t.cost[0] > KUBE_READ_MAX_COST);
    kube_read_over_budget("a test pod", t.cost[0], b.len);
    kube_read_over_budget("a test pod", t.cost[0], b.len); /* counted, not logged again */
    assert_int_equal(kube_read_over_budget_total(), before + 2);
#ifdef COUNTING
    if (counting)
        assert_true(peak_since(base) < (1 << 20));
#endif
    json_tree_free(&t);
    buf_cleanup(&b);
}

static int count_item(void *ctx, json_object *item)
{
    (void)item;
    ++*(size_t *)ctx;
    return 0;
}

static int count_event(void *ctx, enum kube_event_type type, json_object *object)
{
    (void)type;
    (void)object;
    ++*(size_t *)ctx;
    return 0;
}

/* In a LIST and a watch, an object over the budget is skipped and the others still come. */
static void test_skipped_in_list_and_watch(void **state)
{
    (void)state;
    struct buf pod, text;
    hostile_pod(&pod, 0, 100000);
    buf_init(&text, 64u << 20);
    const char *small = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"q\"}}";
    assert_int_equal(
        buf_printf(&text, "{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[%s,", small), K_OK);
    assert_int_equal(buf_append(&text, pod.data, pod.len), K_OK);
    assert_int_equal(buf_printf(&text, ",%s]}", small), K_OK);
    size_t n = 0;
    struct kube_list_parser *lp = kube_list_parser_new(16u << 20, count_item, &n);
    assert_non_null(lp);
    assert_int_equal(kube_list_parser_feed(lp, text.data, text.len), K_OK);
    assert_int_equal(kube_list_parser_finish(lp), K_OK);
    assert_int_equal(n, 2);
    assert_int_equal(kube_list_parser_over_budget(lp), 1);
    assert_string_equal(kube_list_parser_resource_version(lp), "7");
    kube_list_parser_free(lp);

    buf_reset(&text);
    assert_int_equal(buf_printf(&text, "{\"type\":\"ADDED\",\"object\":"), K_OK);
    assert_int_equal(buf_append(&text, pod.data, pod.len), K_OK);
    assert_int_equal(buf_printf(&text, "}\n{\"type\":\"ADDED\",\"object\":%s}\n", small), K_OK);
    n = 0;
    struct kube_watch_parser *wp = kube_watch_parser_new(16u << 20, count_event, &n);
    assert_non_null(wp);
    assert_int_equal(kube_watch_parser_feed(wp, text.data, text.len), K_OK);
    assert_int_equal(kube_watch_parser_finish(wp), K_OK);
    assert_int_equal(n, 1);
    assert_int_equal(kube_watch_parser_over_budget(wp), 1);
    kube_watch_parser_free(wp);
    buf_cleanup(&text);
    buf_cleanup(&pod);
}

/* A watch event: the same schema under "object". */
static void test_event(void **state)
{
    (void)state;
    const char *ev =
        "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
        "\"managedFields\":[{}]},\"spec\":{\"volumes\":[{}],\"containers\":[{\"name\":"
        "\"c\",\"env\":[{}]}]}}}";
    struct json_tree t;
    char err[160];
    assert_int_equal(kube_read_parse(&t, KUBE_READ_EVENT, ev, strlen(ev), err, sizeof(err)), K_OK);
    assert_string_equal(json_object_to_json_string_ext(t.root, JSON_C_TO_STRING_PLAIN),
                        "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":"
                        "\"p\",\"managedFields\":null},\"spec\":{\"volumes\":null,\"containers\":"
                        "[{\"name\":\"c\"}]}}}");
    json_tree_free(&t);
    /* not an object; "spec" twice */
    assert_int_equal(kube_read_parse(&t, KUBE_READ_OBJECT, "[]", 2, err, sizeof(err)), K_EPARSE);
    json_tree_free(&t);
    const char *twice = "{\"spec\":{},\"spec\":{}}";
    assert_int_equal(kube_read_parse(&t, KUBE_READ_OBJECT, twice, strlen(twice), err, sizeof(err)),
                     K_EPARSE);
    json_tree_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures_read_the_same),
        cmocka_unit_test(test_hostile_pull_secrets),
        cmocka_unit_test(test_over_budget_not_built),
        cmocka_unit_test(test_event),
        cmocka_unit_test(test_skipped_in_list_and_watch),
    };
    return cmocka_run_group_tests(tests, test_gpus_setup, test_gpus_teardown);
}
