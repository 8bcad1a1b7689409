/* test_project_event.c - core/kube/project_event.c: a core/v1 Event into model/event.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "kube/project.h"
#include "model/event.h"
#include "objects.h"
#include "util/result.h"

static json_object *parse(const char *text)
{
    json_object *o = json_tokener_parse(text);
    assert_non_null(o);
    return o;
}

/* A Cluster Autoscaler Event as its recorder stores it (tests/fixtures/autoscaler). */
static void test_fixture(void **state)
{
    (void)state;
    json_object *o = test_load_json(FIXTURES_DIR, "autoscaler/ca-not-triggered-combined.json");
    assert_non_null(o);
    struct kevent ev;
    assert_int_equal(project_event(o, &ev), K_OK);
    json_object_put(o);
    assert_string_equal(ev.ns, "ml");
    assert_string_equal(ev.name, "train-0.18ed18ea19b5d515");
    assert_string_equal(ev.obj_kind, "Pod");
    assert_string_equal(ev.obj_ns, "ml");
    assert_string_equal(ev.obj_name, "train-0");
    assert_string_equal(ev.obj_uid, "6f1c2d3e-4b5a-4c6d-8e7f-901a2b3c4d5e");
    assert_string_equal(ev.reason, "NotTriggerScaleUp");
    assert_string_equal(ev.type, "Normal");
    assert_string_equal(ev.component, "cluster-autoscaler");
    assert_string_equal(ev.reporting, "cluster-autoscaler");
    assert_non_null(strstr(ev.message, "(combined from similar events): pod didn't trigger"));
    assert_int_equal(ev.count, 14);
    assert_int_equal(ev.first_timestamp, 1796119220); /* 2026-12-01T10:00:20Z */
    assert_int_equal(ev.last_timestamp, 1796119620);
    assert_int_equal(ev.event_time, 0); /* null */
    assert_int_equal(ev.series_last, 0);
    assert_false(ev.cut);
}

/* An events.k8s.io writer's Event in its core/v1 view: eventTime and series, no source. */
static void test_series(void **state)
{
    (void)state;
    json_object *o = parse(
        "{\"metadata\":{\"name\":\"p.1\",\"namespace\":\"ns\"},\"involvedObject\":{\"kind\":"
        "\"Pod\"},"
        "\"reason\":\"Nominated\",\"source\":{},\"eventTime\":\"2026-12-01T10:00:01.123456Z\","
        "\"series\":{\"count\":3,\"lastObservedTime\":\"2026-12-01T10:05:00.000001Z\"},"
        "\"reportingComponent\":\"karpenter\",\"firstTimestamp\":null,\"lastTimestamp\":null}");
    struct kevent ev;
    assert_int_equal(project_event(o, &ev), K_OK);
    json_object_put(o);
    assert_string_equal(ev.component, "");
    assert_string_equal(ev.reporting, "karpenter");
    assert_int_equal(ev.event_time, 1796119201);
    assert_int_equal(ev.series_last, 1796119500);
    assert_int_equal(ev.count, 3);
    assert_int_equal(ev.first_timestamp, 0);
    assert_int_equal(ev.last_timestamp, 0);
}

/* Lenient: wrong types read as absent; only a non-object fails. */
static void test_malformed(void **state)
{
    (void)state;
    struct kevent ev;
    json_object *o = parse("{\"metadata\":[],\"involvedObject\":\"Pod\",\"reason\":7,\"count\":-4,"
                           "\"message\":{\"a\":1},\"lastTimestamp\":\"yesterday\","
                           "\"source\":{\"component\":false},\"series\":{\"count\":9}}");
    assert_int_equal(project_event(o, &ev), K_OK);
    json_object_put(o);
    assert_string_equal(ev.reason, "");
    assert_string_equal(ev.obj_kind, "");
    assert_string_equal(ev.message, "");
    assert_string_equal(ev.component, "");
    assert_int_equal(ev.count, 9); /* count below 0 reads as 0: series.count then */
    assert_int_equal(ev.last_timestamp, 0);
    o = parse("{\"count\":99999999999}");
    assert_int_equal(project_event(o, &ev), K_OK);
    assert_int_equal(ev.count, INT32_MAX);
    json_object_put(o);
    o = parse("[1]");
    assert_int_equal(project_event(o, &ev), K_EPARSE);
    json_object_put(o);
    assert_int_equal(project_event(NULL, &ev), K_EPARSE);
}

/* Long strings are cut at a character boundary and `cut` says so. */
static void test_cut(void **state)
{
    (void)state;
    char msg[3000], text[3200];
    size_t n = 0;
    while (n + 2 < sizeof(msg) - 1) { /* "é" is 2 bytes: 1023 is not a boundary */
        msg[n++] = (char)0xc3;
        msg[n++] = (char)0xa9;
    }
    msg[n] = '\0';
    snprintf(text, sizeof(text), "{\"message\":\"x%s\",\"reason\":\"R\"}", msg);
    json_object *o = parse(text);
    struct kevent ev;
    assert_int_equal(project_event(o, &ev), K_OK);
    json_object_put(o);
    assert_true(ev.cut);
    assert_int_equal(strlen(ev.message), 1023); /* "x" and 511 whole characters */
    assert_string_equal(ev.reason, "R");
    /* a NUL inside a JSON string ends the copy */
    o = parse("{\"reason\":\"A\\u0000B\"}");
    assert_int_equal(project_event(o, &ev), K_OK);
    json_object_put(o);
    assert_string_equal(ev.reason, "A");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture),
        cmocka_unit_test(test_series),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
