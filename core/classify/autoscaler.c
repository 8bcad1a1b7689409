/*
 * autoscaler.c - the autoscalers' Events about a pod as evidence records (autoscaler.h).
 *
 * The message is read through spans (pointer and length) over the Event's bounded buffer: every
 * search and loop stops at the span's end, so no input makes it read past the message or run
 * longer than a few passes over its KEVENT_MESSAGE_MAX bytes.
 */
#include "classify/autoscaler.h"

#include <stdio.h>
#include <string.h>

#include "util/utf8.h"

/* A piece of the message: p[0..n). */
struct span {
    const char *p;
    size_t n;
};

#define NOT_FOUND ((size_t)-1)

static struct span span_str(const char *s, size_t cap)
{
    struct span sp = {s, strnlen(s, cap)};
    return sp;
}

static struct span span_sub(struct span s, size_t from, size_t to)
{
    if (to > s.n)
        to = s.n;
    if (from > to)
        from = to;
    struct span r = {s.p + from, to - from};
    return r;
}

static bool span_starts(struct span s, const char *lit)
{
    size_t k = strlen(lit);
    return s.n >= k && memcmp(s.p, lit, k) == 0;
}

static bool span_ends(struct span s, const char *lit)
{
    size_t k = strlen(lit);
    return s.n >= k && memcmp(s.p + s.n - k, lit, k) == 0;
}

static bool span_eq(struct span s, const char *lit)
{
    return s.n == strlen(lit) && memcmp(s.p, lit, s.n) == 0;
}

/* Drop the prefix `lit` when s starts with it. */
static bool span_eat(struct span *s, const char *lit)
{
    if (!span_starts(*s, lit))
        return false;
    size_t k = strlen(lit);
    s->p += k;
    s->n -= k;
    return true;
}

/* The first index of `lit` in s at or after `from`, NOT_FOUND when none. */
static size_t span_find(struct span s, const char *lit, size_t from)
{
    size_t k = strlen(lit);
    if (k == 0 || s.n < k)
        return NOT_FOUND;
    for (size_t i = from; i + k <= s.n; i++)
        if (s.p[i] == lit[0] && memcmp(s.p + i, lit, k) == 0)
            return i;
    return NOT_FOUND;
}

/* The last index of `lit` in s, NOT_FOUND when none. */
static size_t span_rfind(struct span s, const char *lit)
{
    size_t k = strlen(lit);
    if (k == 0 || s.n < k)
        return NOT_FOUND;
    for (size_t i = s.n - k + 1; i-- > 0;)
        if (memcmp(s.p + i, lit, k) == 0)
            return i;
    return NOT_FOUND;
}

static bool span_has(struct span s, const char *lit)
{
    return span_find(s, lit, 0) != NOT_FOUND;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* A decimal number at the start of s (at least one digit), saturated at INT32_MAX. */
static bool span_number(struct span *s, int32_t *out)
{
    size_t i = 0;
    int64_t v = 0;
    while (i < s->n && is_digit(s->p[i])) {
        if (v < INT32_MAX)
            v = v * 10 + (s->p[i] - '0');
        i++;
    }
    if (i == 0)
        return false;
    *out = v > INT32_MAX ? INT32_MAX : (int32_t)v;
    s->p += i;
    s->n -= i;
    return true;
}

/* Whether s is a whole decimal number (into *out). */
static bool span_whole_number(struct span s, int32_t *out)
{
    return span_number(&s, out) && s.n == 0;
}

/* ---- the record ------------------------------------------------------------------------------ */

static uint32_t add_sat(uint32_t a, uint32_t b)
{
    return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

/* The order items are kept in: category bit, reason, text, cut. */
static int item_cmp(const struct autoscaler_item *a, const struct autoscaler_item *b)
{
    if (a->category != b->category)
        return a->category < b->category ? -1 : 1;
    if (a->reason != b->reason)
        return a->reason < b->reason ? -1 : 1;
    int c = strcmp(a->text, b->text);
    if (c)
        return c;
    return (int)a->cut - (int)b->cut;
}

/*
 * One reason of a refusal or failure: merged with an equal item, else inserted in order; when
 * items[] is full the last in order is dropped (it may be the new one).
 */
static void add_item_cut(struct autoscaler_evidence *e, unsigned category,
                         enum autoscaler_reason reason, uint32_t count, struct span text, bool cut)
{
    e->categories |= category;
    if (e->parts_seen < UINT16_MAX)
        e->parts_seen++;
    struct autoscaler_item it;
    memset(&it, 0, sizeof(it));
    it.category = (uint8_t)category;
    it.reason = (uint8_t)reason;
    it.count = count;
    it.parts = 1;
    it.cut = !utf8_copy(it.text, sizeof(it.text), text.p, text.n) || cut;
    size_t pos = 0;
    while (pos < e->n_items) {
        int c = item_cmp(&it, &e->items[pos]);
        if (c == 0) {
            struct autoscaler_item *m = &e->items[pos];
            m->count = add_sat(m->count, count);
            if (m->parts < UINT16_MAX)
                m->parts++;
            return;
        }
        if (c < 0)
            break;
        pos++;
    }
    if (pos == AUTOSCALER_ITEMS_MAX)
        return;
    size_t last = e->n_items < AUTOSCALER_ITEMS_MAX ? e->n_items : AUTOSCALER_ITEMS_MAX - 1;
    memmove(&e->items[pos + 1], &e->items[pos], (last - pos) * sizeof(e->items[0]));
    e->items[pos] = it;
    if (e->n_items < AUTOSCALER_ITEMS_MAX)
        e->n_items++;
}

static void add_item(struct autoscaler_evidence *e, unsigned category,
                     enum autoscaler_reason reason, uint32_t count, struct span text)
{
    add_item_cut(e, category, reason, count, text, false);
}

static void set_name(char *dst, size_t cap, bool *cut, struct span s)
{
    *cut = !utf8_copy(dst, cap, s.p, s.n);
}

/* ---- Cluster Autoscaler ---------------------------------------------------------------------- */

/* The part of a node group id worth showing: a URL (a GCE MIG) by its last path segment. */
static struct span group_shown(struct span id, bool *is_gce)
{
    *is_gce = false;
    if (span_find(id, "://", 0) == NOT_FOUND)
        return id;
    *is_gce = span_has(id, "googleapis.com/");
    size_t slash = span_rfind(id, "/");
    return slash + 1 < id.n ? span_sub(id, slash + 1, id.n) : id;
}

static void add_group(struct autoscaler_evidence *e, struct span id, int32_t cur, int32_t target,
                      int32_t max)
{
    if (e->groups_seen < UINT16_MAX)
        e->groups_seen++;
    bool gce;
    struct span shown = group_shown(id, &gce);
    if (gce)
        e->writer = AUTOSCALER_GKE;
    if (e->n_groups >= AUTOSCALER_GROUPS_MAX)
        return;
    struct autoscaler_group *g = &e->groups[e->n_groups++];
    g->cut = !utf8_copy(g->id, sizeof(g->id), shown.p, shown.n);
    g->current = cur;
    g->target = target;
    g->max = max;
}

/* One "{<id> <cur>-><new> (max: <max>)}" without its braces; an unknown shape keeps it all. */
static void parse_scale_up_info(struct autoscaler_evidence *e, struct span in)
{
    int32_t cur = -1, target = -1, max = -1;
    struct span id = in;
    size_t m = span_rfind(in, " (max: ");
    if (m != NOT_FOUND && span_ends(in, ")")) {
        struct span sizes = span_sub(in, 0, m);
        struct span maxs = span_sub(in, m + strlen(" (max: "), in.n - 1);
        size_t sp = span_rfind(sizes, " ");
        if (sp != NOT_FOUND && span_whole_number(maxs, &max)) {
            struct span arrow = span_sub(sizes, sp + 1, sizes.n);
            size_t a = span_find(arrow, "->", 0);
            if (a != NOT_FOUND && span_whole_number(span_sub(arrow, 0, a), &cur) &&
                span_whole_number(span_sub(arrow, a + 2, arrow.n), &target)) {
                id = span_sub(sizes, 0, sp);
            } else {
                cur = target = max = -1;
            }
        } else {
            max = -1;
        }
    }
    add_group(e, id, cur, target, max);
}

static void parse_triggered(struct autoscaler_evidence *e, struct span msg)
{
    struct span s = msg;
    if (span_eat(&s, "pod triggered scale-up: [")) {
        size_t i = 0;
        while (i < s.n) {
            size_t open = span_find(s, "{", i);
            if (open == NOT_FOUND)
                break;
            size_t close = span_find(s, "}", open + 1);
            if (close == NOT_FOUND)
                close = s.n; /* cut: keep what there is */
            parse_scale_up_info(e, span_sub(s, open + 1, close));
            i = close + 1;
        }
        return;
    }
    /* Before the list: "pod triggered scale-up, group: <id>, sizes (current/new): <c>/<n>" */
    if (span_eat(&s, "pod triggered scale-up, group: ")) {
        size_t k = span_rfind(s, ", sizes (current/new): ");
        int32_t cur = -1, target = -1;
        struct span id = s;
        if (k != NOT_FOUND) {
            struct span sizes = span_sub(s, k + strlen(", sizes (current/new): "), s.n);
            size_t slash = span_find(sizes, "/", 0);
            id = span_sub(s, 0, k);
            if (slash == NOT_FOUND || !span_whole_number(span_sub(sizes, 0, slash), &cur) ||
                !span_whole_number(span_sub(sizes, slash + 1, sizes.n), &target))
                cur = target = -1;
        }
        add_group(e, id, cur, target, -1);
    }
}

/* One CA reason (the text after its count) into an item. */
static void add_ca_reason(struct autoscaler_evidence *e, int32_t count, struct span r)
{
    uint32_t n = count > 0 ? (uint32_t)count : 0;
    struct span t = r;
    if (span_eq(r, "max node group size reached") || span_eq(r, "can't increase node group size"))
        add_item(e, AUTOSCALER_CAT_AT_MAX, AUTOSCALER_R_GROUP_MAX, n, span_sub(r, 0, 0));
    else if (span_eq(r, "max total nodes in cluster reached"))
        add_item(e, AUTOSCALER_CAT_AT_MAX, AUTOSCALER_R_CLUSTER_NODES_MAX, n, span_sub(r, 0, 0));
    else if ((span_starts(r, "max cluster ") && span_ends(r, " limit reached")) ||
             span_starts(r, "exceeded quota: "))
        add_item(e, AUTOSCALER_CAT_AT_MAX, AUTOSCALER_R_RESOURCE_LIMIT, n, r);
    else if (span_eq(r, "in backoff after failed scale-up"))
        add_item(e, AUTOSCALER_CAT_BACKOFF, AUTOSCALER_R_BACKOFF, n, span_sub(r, 0, 0));
    else if (span_eat(&t, "Insufficient "))
        add_item(e, AUTOSCALER_CAT_TEMPLATE, AUTOSCALER_R_INSUFFICIENT, n, t);
    else if (span_has(r, "didn't match Pod's node affinity") ||
             span_has(r, "didn't match node selector"))
        add_item(e, AUTOSCALER_CAT_TEMPLATE, AUTOSCALER_R_SELECTOR, n, span_sub(r, 0, 0));
    else if (span_eat(&t, "node(s) had untolerated taint ") || span_eat(&t, "node(s) had taint "))
        add_item(e, AUTOSCALER_CAT_TEMPLATE, AUTOSCALER_R_TAINT, n, t);
    else if (span_has(r, "didn't tolerate") || span_has(r, "untolerated taint"))
        add_item(e, AUTOSCALER_CAT_TEMPLATE, AUTOSCALER_R_TAINT, n, span_sub(r, 0, 0));
    else if (span_has(r, "cannot allocate all claims") || span_has(r, "resourceclaim"))
        add_item(e, AUTOSCALER_CAT_TEMPLATE, AUTOSCALER_R_CLAIMS, n, r);
    else
        add_item(e, AUTOSCALER_CAT_OTHER, AUTOSCALER_R_OTHER, n, r);
}

/* Whether s[i..] is "<digits> ": where a "<count> <reason>" starts. */
static bool count_at(struct span s, size_t i)
{
    size_t j = i;
    while (j < s.n && is_digit(s.p[j]))
        j++;
    return j > i && j < s.n && s.p[j] == ' ';
}

/*
 * "<n> <reason>, <n> <reason>, ...": split where ", " is followed by "<digits> ", so a reason
 * holding ", " ("max cluster cpu, memory limit reached") stays whole. Each item is read on its
 * own and the record keeps them sorted, so the order of the message does not matter.
 */
static void parse_ca_reasons(struct autoscaler_evidence *e, struct span s)
{
    if (!count_at(s, 0)) {
        add_item(e, AUTOSCALER_CAT_OTHER, AUTOSCALER_R_OTHER, 1, s);
        return;
    }
    size_t start = 0;
    while (start < s.n) {
        size_t end = start;
        for (;;) {
            end = span_find(s, ", ", end);
            if (end == NOT_FOUND || count_at(s, end + 2))
                break;
            end += 2;
        }
        if (end == NOT_FOUND)
            end = s.n;
        struct span item = span_sub(s, start, end);
        int32_t count = 0;
        span_number(&item, &count);
        span_eat(&item, " ");
        add_ca_reason(e, count, item);
        start = end + 2;
    }
}

static void parse_not_triggered(struct autoscaler_evidence *e, struct span msg)
{
    struct span s = msg;
    if (span_eat(&s, "pod didn't trigger scale-up (it wouldn't fit if a new node is added)")) {
        if (span_eat(&s, ": ") && s.n > 0)
            parse_ca_reasons(e, s);
        else
            add_item(e, AUTOSCALER_CAT_TEMPLATE, AUTOSCALER_R_WOULDNT_FIT, 1, span_sub(s, 0, 0));
        return;
    }
    if (!span_eat(&s, "pod didn't trigger scale-up: ")) {
        add_item(e, AUTOSCALER_CAT_OTHER, AUTOSCALER_R_OTHER, 1, msg);
        return;
    }
    if (span_eq(s, "max total nodes in cluster reached"))
        add_item(e, AUTOSCALER_CAT_AT_MAX, AUTOSCALER_R_CLUSTER_NODES_MAX, 1, span_sub(s, 0, 0));
    else
        parse_ca_reasons(e, s);
}

/* ---- GKE ------------------------------------------------------------------------------------- */

/* A reason of FailedScaleUp; `cut`: the message was cut inside it. */
static void add_gke_reason(struct autoscaler_evidence *e, struct span r, bool cut)
{
    if (span_eq(r, "GCE quota exceeded"))
        add_item_cut(e, AUTOSCALER_CAT_QUOTA, AUTOSCALER_R_CLOUD_QUOTA, 1, r, cut);
    else if (span_eq(r, "GCE out of resources"))
        add_item_cut(e, AUTOSCALER_CAT_CAPACITY, AUTOSCALER_R_STOCKOUT, 1, r, cut);
    else if (span_starts(r, "Reservation capacity exceeded") ||
             span_starts(r, "Reservation not ready") ||
             span_starts(r, "Any affinity reservations no capacity") ||
             span_starts(r, "Any affinity reservations not available"))
        add_item_cut(e, AUTOSCALER_CAT_CAPACITY, AUTOSCALER_R_OTHER, 1, r, cut);
    else
        add_item_cut(e, AUTOSCALER_CAT_OTHER, AUTOSCALER_R_OTHER, 1, r, cut);
}

#define GKE_TAIL ". Pod is at risk of not being scheduled."
#define GKE_MESSAGE_MAX 250 /* failed_scale_up_event_logger.go messageLengthLimit */

/* Whether s is a non-empty prefix of GKE_TAIL: what is left of it in a message cut at 250. */
static bool gke_tail_prefix(struct span s)
{
    return s.n > 0 && s.n <= strlen(GKE_TAIL) && memcmp(s.p, GKE_TAIL, s.n) == 0;
}

static void parse_gke_failed(struct autoscaler_evidence *e, struct span msg)
{
    struct span s = msg;
    size_t k;
    if (!span_eat(&s, "Node scale up in zones") ||
        (k = span_find(s, "associated with this pod failed: ", 0)) == NOT_FOUND) {
        add_item(e, AUTOSCALER_CAT_OTHER, AUTOSCALER_R_OTHER, 1, msg);
        return;
    }
    struct span zones = span_sub(s, 0, k);
    span_eat(&zones, " ");
    if (span_ends(zones, " "))
        zones.n--;
    set_name(e->name, sizeof(e->name), &e->name_cut, zones);
    struct span r = span_sub(s, k + strlen("associated with this pod failed: "), s.n);
    /*
     * The tail GKE_TAIL, whole or what is left of it in a message cut at 250 bytes; when there is
     * none and the message is that long, it was cut inside its last reason.
     */
    bool cut = false;
    size_t dot = span_rfind(r, ".");
    if (span_ends(r, GKE_TAIL))
        r.n -= strlen(GKE_TAIL);
    else if (dot != NOT_FOUND && gke_tail_prefix(span_sub(r, dot, r.n)))
        r.n = dot;
    else
        cut = msg.n >= GKE_MESSAGE_MAX;
    size_t start = 0;
    while (start < r.n) {
        size_t end = span_find(r, ", ", start);
        if (end == NOT_FOUND)
            end = r.n;
        add_gke_reason(e, span_sub(r, start, end), cut && end == r.n);
        start = end + 2;
    }
}

/* ---- Karpenter ------------------------------------------------------------------------------- */

static void parse_nominated(struct autoscaler_evidence *e, struct span msg)
{
    struct span s = msg;
    if (!span_eat(&s, "Pod should schedule on: "))
        return;
    size_t start = 0;
    while (start < s.n) {
        size_t end = span_find(s, ", ", start);
        if (end == NOT_FOUND)
            end = s.n;
        struct span part = span_sub(s, start, end);
        if (span_eat(&part, "nodeclaim/") && !e->name[0])
            set_name(e->name, sizeof(e->name), &e->name_cut, part);
        else if (span_eat(&part, "node/") && !e->node[0])
            set_name(e->node, sizeof(e->node), &e->node_cut, part);
        start = end + 2;
    }
}

/* The name in `"<name>"` at the start of s, which then points after it. */
static bool quoted_name(struct span *s, struct span *name)
{
    if (!span_eat(s, "\""))
        return false;
    size_t q = span_find(*s, "\"", 0);
    if (q == NOT_FOUND)
        return false;
    *name = span_sub(*s, 0, q);
    *s = span_sub(*s, q + 1, s->n);
    return true;
}

static void note_nodepool(struct autoscaler_evidence *e, struct span np)
{
    if (!e->name[0] && np.n > 0)
        set_name(e->name, sizeof(e->name), &e->name_cut, np);
}

/* One NodePool's error of a FailedScheduling message into an item. */
static void add_karpenter_error(struct autoscaler_evidence *e, struct span r)
{
    struct span np;
    /* ≤ v1.4: `incompatible with nodepool "<np>", daemonset overhead={...}, <error>` */
    struct span t = r;
    if ((span_eat(&t, "incompatible with nodepool ") ||
         span_eat(&t, "incompatible with provisioner ")) &&
        quoted_name(&t, &np)) {
        note_nodepool(e, np);
        if (span_eat(&t, ", daemonset overhead={")) {
            size_t close = span_find(t, "}", 0);
            t = close == NOT_FOUND ? span_sub(t, t.n, t.n) : span_sub(t, close + 1, t.n);
        }
        span_eat(&t, ", ");
        r = t;
    }
    /* EKS Auto Mode: a " (NodePool=<np>)" suffix */
    size_t suffix = span_rfind(r, " (NodePool=");
    if (suffix != NOT_FOUND && span_ends(r, ")")) {
        note_nodepool(e, span_sub(r, suffix + strlen(" (NodePool="), r.n - 1));
        r = span_sub(r, 0, suffix);
    }
    /* the head of an instance-type error: before its requirements= and resources= lists */
    struct span head = r;
    size_t req = span_find(r, ", requirements=", 0);
    if (req == NOT_FOUND && span_starts(r, "no instance type"))
        req = span_find(r, " {", 0); /* ≤ v1.4: "... satisfied resources {...} and ..." */
    if (req != NOT_FOUND)
        head = span_sub(r, 0, req);
    t = r;
    if (span_starts(r, "all available instance types exceed limits for nodepool")) {
        t = span_sub(r, strlen("all available instance types exceed limits for nodepool"), r.n);
        span_eat(&t, " ");
        if (quoted_name(&t, &np))
            note_nodepool(e, np);
        add_item(e, AUTOSCALER_CAT_AT_MAX, AUTOSCALER_R_NODEPOOL_LIMITS, 1,
                 span_sub(r, 0, strlen("all available instance types exceed limits")));
    } else if (span_starts(r, "node limits have been exhausted for nodepool")) {
        add_item(e, AUTOSCALER_CAT_AT_MAX, AUTOSCALER_R_NODEPOOL_LIMITS, 1,
                 span_sub(r, 0, strlen("node limits have been exhausted")));
    } else if (span_starts(r, "pod has Dynamic Resource Allocation requirements")) {
        add_item(e, AUTOSCALER_CAT_DRA, AUTOSCALER_R_DRA_UNSUPPORTED, 1, span_sub(r, 0, 0));
    } else if (span_has(r, "dynamic resource")) {
        add_item(e, AUTOSCALER_CAT_TEMPLATE, AUTOSCALER_R_CLAIMS, 1, head);
    } else if (span_starts(r, "no instance type has the required offering")) {
        add_item(e, AUTOSCALER_CAT_CAPACITY, AUTOSCALER_R_NO_INSTANCE_TYPE, 1, head);
    } else if (span_starts(r, "no instance type") || span_starts(r, "minValues") ||
               span_starts(r, "nodepool requirements filtered out") ||
               span_starts(r, "incompatible requirements")) {
        /* an offering is a zone and capacity type with capacity: its lack is the cloud's */
        unsigned cat = AUTOSCALER_CAT_TEMPLATE;
        if (span_starts(r, "no instance type") && span_has(head, "offering"))
            cat |= AUTOSCALER_CAT_CAPACITY;
        e->categories |= cat;
        add_item(e, AUTOSCALER_CAT_TEMPLATE, AUTOSCALER_R_NO_INSTANCE_TYPE, 1, head);
    } else if (span_starts(r, "did not tolerate")) {
        t = span_sub(r, strlen("did not tolerate"), r.n);
        span_eat(&t, " ");
        span_eat(&t, "taint");
        span_eat(&t, " ");
        add_item(e, AUTOSCALER_CAT_TEMPLATE, AUTOSCALER_R_TAINT, 1, t);
    } else if (span_has(r, "reserved offering")) {
        add_item(e, AUTOSCALER_CAT_CAPACITY, AUTOSCALER_R_OTHER, 1, r);
    } else {
        add_item(e, AUTOSCALER_CAT_OTHER, AUTOSCALER_R_OTHER, 1, head);
    }
}

static void parse_karpenter_failed_scheduling(struct autoscaler_evidence *e, struct span msg)
{
    struct span s = msg;
    if (!span_eat(&s, "Failed to schedule pod, ")) {
        add_item(e, AUTOSCALER_CAT_OTHER, AUTOSCALER_R_OTHER, 1, msg);
        return;
    }
    /*
     * One error per NodePool, joined by multierr with "; ". An error of requirements that do not
     * intersect is itself such a list, of "key <k>, <incoming> not in <existing>"
     * (pkg/scheduling/requirements.go badKeyError): those stay with the error they belong to.
     */
    size_t start = 0;
    while (start < s.n) {
        size_t end = start;
        for (;;) {
            end = span_find(s, "; ", end);
            if (end == NOT_FOUND || !span_starts(span_sub(s, end + 2, s.n), "key "))
                break;
            end += 2;
        }
        if (end == NOT_FOUND)
            end = s.n;
        struct span part = span_sub(s, start, end);
        if (part.n > 0)
            add_karpenter_error(e, part);
        start = end + 2;
    }
    if (e->parts_seen == 0)
        add_item(e, AUTOSCALER_CAT_OTHER, AUTOSCALER_R_OTHER, 1, msg);
}

/* "NodeClaim <nc> nominated for this pod failed to launch: <error>" */
static void parse_karpenter_launch_failed(struct autoscaler_evidence *e, struct span msg)
{
    struct span s = msg;
    size_t k;
    if (!span_eat(&s, "NodeClaim ") ||
        (k = span_find(s, " nominated for this pod failed to launch: ", 0)) == NOT_FOUND) {
        add_item(e, AUTOSCALER_CAT_CAPACITY, AUTOSCALER_R_LAUNCH_FAILED, 1, msg);
        return;
    }
    set_name(e->name, sizeof(e->name), &e->name_cut, span_sub(s, 0, k));
    struct span err = span_sub(s, k + strlen(" nominated for this pod failed to launch: "), s.n);
    unsigned cat =
        span_has(err, "quota") || span_has(err, "Quota") || span_has(err, "LimitExceeded")
            ? AUTOSCALER_CAT_QUOTA
            : AUTOSCALER_CAT_CAPACITY;
    add_item(e, cat, AUTOSCALER_R_LAUNCH_FAILED, 1, err);
}

const struct autoscaler_event_kind autoscaler_event_kinds[AUTOSCALER_EVENT_KINDS] = {
    {"cluster-autoscaler", "TriggeredScaleUp", "Normal", AUTOSCALER_CA, AUTOSCALER_TRIGGERED},
    {"cluster-autoscaler", "NotTriggerScaleUp", "Normal", AUTOSCALER_CA, AUTOSCALER_REFUSED},
    {"cluster-autoscaler", "FailedScaleUp", "Warning", AUTOSCALER_GKE, AUTOSCALER_FAILED},
    {"karpenter", "Nominated", "Normal", AUTOSCALER_KARPENTER, AUTOSCALER_NOMINATED},
    {"karpenter", "FailedScheduling", "Warning", AUTOSCALER_KARPENTER, AUTOSCALER_REFUSED},
    {"karpenter", "InsufficientCapacityError", "Warning", AUTOSCALER_KARPENTER, AUTOSCALER_FAILED},
};

/* ---- the entry points ------------------------------------------------------------------------ */

bool autoscaler_parse(const struct kevent *ev, struct autoscaler_evidence *out)
{
    memset(out, 0, sizeof(*out));
    struct span kind = span_str(ev->obj_kind, sizeof(ev->obj_kind));
    struct span comp = span_str(ev->component, sizeof(ev->component));
    if (comp.n == 0)
        comp = span_str(ev->reporting, sizeof(ev->reporting));
    struct span reason = span_str(ev->reason, sizeof(ev->reason));
    if (!span_eq(kind, "Pod"))
        return false;
    const struct autoscaler_event_kind *known = NULL;
    for (size_t i = 0; i < AUTOSCALER_EVENT_KINDS && !known; i++)
        if (span_eq(comp, autoscaler_event_kinds[i].component) &&
            span_eq(reason, autoscaler_event_kinds[i].reason))
            known = &autoscaler_event_kinds[i];
    if (!known)
        return false;
    enum autoscaler_writer writer = known->writer;
    enum autoscaler_kind k = known->kind;
    out->writer = writer;
    out->kind = k;
    out->at = ev->last_timestamp ? ev->last_timestamp
              : ev->series_last  ? ev->series_last
              : ev->event_time   ? ev->event_time
                                 : ev->first_timestamp;
    if (out->at < 0)
        out->at = 0;
    out->count = ev->count > 0 ? ev->count : 1;

    struct span msg = span_str(ev->message, sizeof(ev->message));
    span_eat(&msg, "(combined from similar events): ");
    switch (k) {
    case AUTOSCALER_TRIGGERED:
        parse_triggered(out, msg);
        break;
    case AUTOSCALER_NOMINATED:
        parse_nominated(out, msg);
        break;
    case AUTOSCALER_REFUSED:
        if (writer == AUTOSCALER_CA)
            parse_not_triggered(out, msg);
        else
            parse_karpenter_failed_scheduling(out, msg);
        break;
    case AUTOSCALER_FAILED:
        if (writer == AUTOSCALER_GKE)
            parse_gke_failed(out, msg);
        else
            parse_karpenter_launch_failed(out, msg);
        break;
    case AUTOSCALER_KIND_NONE:
        break;
    }
    return true;
}

bool autoscaler_blocking(enum autoscaler_kind kind)
{
    return kind == AUTOSCALER_REFUSED || kind == AUTOSCALER_FAILED;
}

/* ---- the detail ------------------------------------------------------------------------------ */

static const char *writer_name(enum autoscaler_writer w)
{
    switch (w) {
    case AUTOSCALER_CA:
        return "Cluster Autoscaler";
    case AUTOSCALER_GKE:
        return "GKE's cluster autoscaler";
    case AUTOSCALER_KARPENTER:
        return "Karpenter";
    case AUTOSCALER_NONE:
        break;
    }
    return "the autoscaler";
}

static void put_text(struct line *l, const char *text, bool cut)
{
    line_printf(l, "%s%s", text, cut ? "..." : "");
}

/* " (2m ago, 14 times, <note>)", any of the three left out; nothing when none is there. */
static void put_when(struct line *l, const struct autoscaler_evidence *e, int64_t now,
                     const char *note, bool note_cut)
{
    bool age = now > 0 && e->at > 0;
    bool has_note = note && note[0];
    if (!age && e->count <= 1 && !has_note)
        return;
    line_printf(l, " (");
    if (age) {
        int64_t d = now > e->at ? now - e->at : 0;
        if (d < 120)
            line_printf(l, "%llds ago", (long long)d);
        else if (d < 2 * 3600)
            line_printf(l, "%lldm ago", (long long)(d / 60));
        else if (d < 2 * 86400)
            line_printf(l, "%lldh%02lldm ago", (long long)(d / 3600), (long long)(d % 3600 / 60));
        else
            line_printf(l, "%lldd ago", (long long)(d / 86400));
    }
    if (e->count > 1)
        line_printf(l, "%s%ld times", age ? ", " : "", (long)e->count);
    if (has_note) {
        line_printf(l, "%s", age || e->count > 1 ? ", " : "");
        put_text(l, note, note_cut);
    }
    line_printf(l, ")");
}

static void put_groups(struct line *l, const struct autoscaler_evidence *e)
{
    for (size_t i = 0; i < e->n_groups && i < AUTOSCALER_GROUPS_MAX; i++) {
        const struct autoscaler_group *g = &e->groups[i];
        line_printf(l, "%s", i ? ", " : ": ");
        put_text(l, g->id, g->cut);
        if (g->current >= 0 && g->target >= 0)
            line_printf(l, " %ld->%ld", (long)g->current, (long)g->target);
        if (g->max >= 0)
            line_printf(l, " (max: %ld)", (long)g->max);
    }
    if (e->groups_seen > e->n_groups)
        line_printf(l, " and %u more", (unsigned)(e->groups_seen - e->n_groups));
}

/* "1 node group" / "3 node groups" (Cluster Autoscaler counts node groups per reason). */
static void put_groups_count(struct line *l, const struct autoscaler_item *it)
{
    line_printf(l, "%lu node group%s", (unsigned long)it->count, it->count == 1 ? "" : "s");
}

static void put_item(struct line *l, const struct autoscaler_evidence *e,
                     const struct autoscaler_item *it)
{
    bool ca = e->writer == AUTOSCALER_CA || e->writer == AUTOSCALER_GKE;
    switch ((enum autoscaler_reason)it->reason) {
    case AUTOSCALER_R_GROUP_MAX:
        put_groups_count(l, it);
        line_printf(l, " at %s max size", it->count == 1 ? "its" : "their");
        return;
    case AUTOSCALER_R_CLUSTER_NODES_MAX:
        line_printf(l, "the cluster at its maximum node count (--max-nodes-total)");
        return;
    case AUTOSCALER_R_BACKOFF:
        put_groups_count(l, it);
        line_printf(l, " in backoff after a failed scale-up");
        return;
    case AUTOSCALER_R_INSUFFICIENT:
        put_groups_count(l, it);
        line_printf(l, " whose template has insufficient ");
        put_text(l, it->text, it->cut);
        return;
    case AUTOSCALER_R_RESOURCE_LIMIT:
        put_groups_count(l, it);
        line_printf(l, " over the autoscaler's resource limits (");
        put_text(l, it->text, it->cut);
        line_printf(l, ")");
        return;
    case AUTOSCALER_R_SELECTOR:
        put_groups_count(l, it);
        line_printf(l, " whose template does not match the pod's node selector or affinity");
        return;
    case AUTOSCALER_R_TAINT:
        if (ca)
            put_groups_count(l, it);
        else
            line_printf(l, "a NodePool");
        line_printf(l, " %s a taint the pod does not tolerate",
                    ca ? (it->count == 1 ? "whose template has" : "whose templates have") : "has");
        if (it->text[0]) {
            line_printf(l, " ");
            put_text(l, it->text, it->cut);
        }
        return;
    case AUTOSCALER_R_CLAIMS:
        if (ca) {
            put_groups_count(l, it);
            line_printf(l, " whose template cannot allocate the pod's claims");
            if (!strcmp(it->text, "cannot allocate all claims"))
                return;
            line_printf(l, " (\"");
        } else {
            line_printf(l, "no instance type serves the pod's claims (\"");
        }
        put_text(l, it->text, it->cut);
        line_printf(l, "\")");
        return;
    case AUTOSCALER_R_WOULDNT_FIT:
        line_printf(l, "the pod would not fit on a new node of any node group");
        return;
    case AUTOSCALER_R_DRA_UNSUPPORTED:
        line_printf(l, "the pod has resource claims (DRA), which Karpenter does not provision for");
        return;
    case AUTOSCALER_R_LAUNCH_FAILED:
        line_printf(l, "\"");
        put_text(l, it->text, it->cut);
        line_printf(l, "\"");
        return;
    case AUTOSCALER_R_CLOUD_QUOTA:
    case AUTOSCALER_R_STOCKOUT:
    case AUTOSCALER_R_NODEPOOL_LIMITS:
    case AUTOSCALER_R_NO_INSTANCE_TYPE:
    case AUTOSCALER_R_OTHER:
        break;
    }
    /* the autoscaler's own words */
    if (e->writer == AUTOSCALER_CA && it->count > 0) {
        put_groups_count(l, it);
        line_printf(l, ": ");
    }
    line_printf(l, "\"");
    put_text(l, it->text, it->cut);
    line_printf(l, "\"");
    if (e->writer == AUTOSCALER_KARPENTER && it->parts > 1)
        line_printf(l, " (%u NodePools)", (unsigned)it->parts);
}

/* What to do about a category, for the writer. */
static const char *advice(unsigned category, enum autoscaler_writer w)
{
    bool karpenter = w == AUTOSCALER_KARPENTER;
    switch (category) {
    case AUTOSCALER_CAT_AT_MAX:
        return karpenter ? "raise the NodePool's limits"
                         : "raise the max size or the autoscaler's limits";
    case AUTOSCALER_CAT_QUOTA:
        return "request more cloud quota";
    case AUTOSCALER_CAT_CAPACITY:
        return "no cloud capacity: try another zone, instance type or a reservation";
    case AUTOSCALER_CAT_TEMPLATE:
        return karpenter ? "fix the NodePool's requirements, taints or instance types"
                         : "fix the node group template's resources, labels or taints; from zero: "
                           "its node-template tags";
    case AUTOSCALER_CAT_DRA:
        return "Karpenter skips pods with resource claims unless --ignore-dra-requests=false";
    case AUTOSCALER_CAT_BACKOFF:
        return "see the ConfigMap kube-system/cluster-autoscaler-status";
    default:
        return NULL;
    }
}

static void put_items(struct line *l, const struct autoscaler_evidence *e)
{
    size_t n = e->n_items < AUTOSCALER_ITEMS_MAX ? e->n_items : AUTOSCALER_ITEMS_MAX;
    uint32_t parts = 0;
    unsigned covered = 0;
    for (size_t i = 0; i < n; i++) {
        const struct autoscaler_item *it = &e->items[i];
        bool first = i == 0 || e->items[i - 1].category != it->category;
        bool last = i + 1 == n || e->items[i + 1].category != it->category;
        line_printf(l, "%s", i == 0 ? ": " : first ? "; " : ", ");
        put_item(l, e, it);
        const char *a = last ? advice(it->category, e->writer) : NULL;
        if (a)
            line_printf(l, " (%s)", a);
        parts += it->parts;
        covered |= it->category;
    }
    if (e->parts_seen > parts)
        line_printf(l, "; and %lu more reason%s", (unsigned long)(e->parts_seen - parts),
                    e->parts_seen - parts == 1 ? "" : "s");
    /* categories of the reasons not kept, or of a reason that has two */
    for (unsigned bit = 1; bit <= AUTOSCALER_CAT_ALL; bit <<= 1) {
        const char *a = (e->categories & ~covered & bit) ? advice(bit, e->writer) : NULL;
        if (a)
            line_printf(l, "; %s", a);
    }
}

/* The detail, unbounded but for `l`'s room. */
static void put_detail(const struct autoscaler_evidence *e, int64_t now, struct line *l)
{
    const char *who = writer_name(e->writer);
    switch (e->kind) {
    case AUTOSCALER_TRIGGERED:
        line_printf(l, "%s is adding nodes", who);
        put_when(l, e, now, NULL, false);
        put_groups(l, e);
        return;
    case AUTOSCALER_NOMINATED:
        line_printf(l, "%s is ", who);
        if (e->name[0]) {
            line_printf(l, "launching nodeclaim ");
            put_text(l, e->name, e->name_cut);
            if (e->node[0]) {
                line_printf(l, " (node ");
                put_text(l, e->node, e->node_cut);
                line_printf(l, ")");
            }
        } else if (e->node[0]) {
            line_printf(l, "placing it on node ");
            put_text(l, e->node, e->node_cut);
        } else {
            line_printf(l, "launching a node");
        }
        line_printf(l, " for the pod");
        put_when(l, e, now, NULL, false);
        return;
    case AUTOSCALER_REFUSED:
        line_printf(l, "%s %s", who,
                    e->writer == AUTOSCALER_KARPENTER ? "cannot launch a node for the pod"
                                                      : "did not scale up");
        if (e->writer == AUTOSCALER_KARPENTER && e->name[0]) {
            char note[AUTOSCALER_NAME_MAX + 16];
            snprintf(note, sizeof(note), "NodePool %s", e->name);
            put_when(l, e, now, note, e->name_cut);
        } else {
            put_when(l, e, now, NULL, false);
        }
        put_items(l, e);
        return;
    case AUTOSCALER_FAILED:
        if (e->writer == AUTOSCALER_KARPENTER) {
            line_printf(l, "%s's nodeclaim ", who);
            put_text(l, e->name[0] ? e->name : "for the pod", e->name_cut);
            line_printf(l, " failed to launch");
        } else {
            line_printf(l, "%s failed to add a node", who);
            if (e->name[0]) {
                line_printf(l, " in ");
                put_text(l, e->name, e->name_cut);
            }
        }
        put_when(l, e, now, NULL, false);
        put_items(l, e);
        return;
    case AUTOSCALER_KIND_NONE:
        return;
    }
}

void autoscaler_detail(const struct autoscaler_evidence *e, int64_t now, struct line *l)
{
    if (e->kind == AUTOSCALER_KIND_NONE)
        return;
    char buf[AUTOSCALER_DETAIL_MAX + 1];
    struct line own = {buf, sizeof(buf), 0, false};
    put_detail(e, now, &own);
    line_finish(&own);
    line_printf(l, "%s", buf);
}

/* ---- which record counts --------------------------------------------------------------------- */

int autoscaler_cmp(const struct autoscaler_evidence *a, const struct autoscaler_evidence *b)
{
    bool an = a->kind == AUTOSCALER_KIND_NONE, bn = b->kind == AUTOSCALER_KIND_NONE;
    if (an || bn)
        return an == bn ? 0 : an ? -1 : 1;
    if (a->at != b->at)
        return a->at > b->at ? 1 : -1;
    bool ab = autoscaler_blocking(a->kind), bb = autoscaler_blocking(b->kind);
    if (ab != bb)
        return ab ? 1 : -1;
    if (a->count != b->count)
        return a->count > b->count ? 1 : -1;
    return 0;
}

bool autoscaler_stale(const struct autoscaler_evidence *e, int64_t now, int64_t window,
                      int64_t scheduled_at)
{
    if (e->kind == AUTOSCALER_KIND_NONE || e->at <= 0)
        return true;
    if (now > 0) {
        if (window > 0 && e->at < now && now - e->at > window)
            return true;
        if (e->at > now && e->at - now > AUTOSCALER_CLOCK_SKEW)
            return true;
    }
    return scheduled_at > 0 && e->at < scheduled_at;
}

size_t autoscaler_pick(const struct autoscaler_evidence *ev, size_t n, int64_t now, int64_t window,
                       int64_t scheduled_at)
{
    size_t best = n;
    for (size_t i = 0; i < n; i++) {
        if (autoscaler_stale(&ev[i], now, window, scheduled_at))
            continue;
        if (best == n || autoscaler_cmp(&ev[i], &ev[best]) > 0)
            best = i;
    }
    return best;
}
