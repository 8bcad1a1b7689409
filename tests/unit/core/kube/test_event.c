/* Tests for core/kube/event.c: the core/v1 Event body as client-go's recorder writes it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kube/event.h"
#include "kube/json.h"

/* o.a.b (b NULL: o.a) as a string, or NULL. */
static const char *str(json_object *o, const char *a, const char *b)
{
    return b ? kube_json_str(kube_json_field(o, a), b) : kube_json_str(o, a);
}

static void test_body(void **state)
{
    (void)state;
    struct kube_event_spec e = {
        .ns = "team",
        .kind = "Deployment",
        .api_version = "apps/v1",
        .name = "train",
        .uid = "uid-1",
        .type = "Warning",
        .reason = "GPUUntoleratedTaint",
        .message = "taint gpu=true:NoSchedule",
        .component = "gputri-webhook",
        .instance = "host-1",
    };
    json_object *ev = kube_event_body(&e, "train.18ed7201173b6c40", "2026-11-30T14:00:00Z");
    assert_non_null(ev);
    assert_string_equal(str(ev, "metadata", "name"), "train.18ed7201173b6c40");
    assert_null(str(ev, "metadata", "generateName"));
    assert_string_equal(str(ev, "metadata", "namespace"), "team");
    assert_string_equal(str(ev, "involvedObject", "apiVersion"), "apps/v1");
    assert_string_equal(str(ev, "involvedObject", "kind"), "Deployment");
    assert_string_equal(str(ev, "involvedObject", "namespace"), "team");
    assert_string_equal(str(ev, "involvedObject", "name"), "train");
    assert_string_equal(str(ev, "involvedObject", "uid"), "uid-1");
    assert_string_equal(str(ev, "type", NULL), "Warning");
    assert_string_equal(str(ev, "reason", NULL), "GPUUntoleratedTaint");
    assert_string_equal(str(ev, "message", NULL), "taint gpu=true:NoSchedule");
    assert_string_equal(str(ev, "source", "component"), "gputri-webhook");
    assert_string_equal(str(ev, "reportingComponent", NULL), "gputri-webhook");
    assert_string_equal(str(ev, "reportingInstance", NULL), "host-1");
    assert_string_equal(str(ev, "firstTimestamp", NULL), "2026-11-30T14:00:00Z");
    assert_string_equal(str(ev, "lastTimestamp", NULL), "2026-11-30T14:00:00Z");
    assert_int_equal(kube_json_int(ev, "count", 0), 1);
    json_object_put(ev);
}

/* No name: generateName "<object>."; no uid, no instance: left out; the message cut at 1024. */
static void test_generate_name_and_limits(void **state)
{
    (void)state;
    char long_msg[2000];
    memset(long_msg, 'x', sizeof(long_msg) - 1);
    long_msg[sizeof(long_msg) - 1] = '\0';
    struct kube_event_spec e = {
        .ns = "team",
        .kind = "Pod",
        .api_version = "v1",
        .name = "train-0",
        .type = "Normal",
        .reason = "GPUPreempting",
        .message = long_msg,
        .component = "gputri",
    };
    json_object *ev = kube_event_body(&e, NULL, "2026-11-30T14:00:00Z");
    assert_non_null(ev);
    assert_null(str(ev, "metadata", "name"));
    assert_string_equal(str(ev, "metadata", "generateName"), "train-0.");
    assert_null(str(ev, "involvedObject", "uid"));
    assert_null(str(ev, "reportingInstance", NULL));
    assert_int_equal(strlen(str(ev, "message", NULL)), 1024);
    json_object_put(ev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_body),
        cmocka_unit_test(test_generate_name_and_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
