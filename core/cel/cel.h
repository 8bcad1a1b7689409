/*
 * cel.h - the subset of CEL that DRA device selectors use, compiled once and evaluated against
 * many devices.
 *
 * Upstream semantics (kubernetes/kubernetes):
 *   - staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go: the environment. One
 *     variable `device` with `driver` (string), `attributes` (map domain -> map name -> value;
 *     a value is a bool, int, string or semantic version) and `capacity` (map domain -> map
 *     name -> quantity). Names without a domain belong to the driver's domain. Looking up a
 *     domain that the device lacks gives an empty map (newStringInterfaceMapWithDefault);
 *     looking up a name that the domain lacks is a runtime error "no such key: <name>".
 *     The expression must have type bool (or dyn); any other type is a compile error.
 *   - staging/src/k8s.io/apiserver/pkg/cel/library/semverlib.go and ../semver.go: semver(s),
 *     semver(s, normalize), isGreaterThan / isLessThan / compareTo on versions; blang/semver
 *     Parse and Compare (build metadata ignored).
 *   - staging/src/k8s.io/apiserver/pkg/cel/library/quantity.go: quantity(s), isGreaterThan /
 *     isLessThan / compareTo on quantities (exact comparison, Quantity.Cmp).
 *   - staging/src/k8s.io/api/resource/v1/types.go: CELSelectorExpressionMaxLength = 10 * 1024
 *     (bytes); an expression "must evaluate to true or false; any other result is an error".
 *   - staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/
 *     allocator_stable.go (selectorsMatch): a runtime error in a class or request selector is
 *     NOT "device does not match": the allocator returns the error ("class X: selector #i on
 *     device D: CEL runtime error: ...") and the whole allocation attempt for the node fails.
 *     Devices already in use are skipped before any selector is evaluated.
 *
 * The subset: `device.driver`; `device.attributes[D].N` and `device.attributes[D]['N']`
 * (also `.D` for the domain); `device.capacity[D].N`; literals true, false, integers (decimal,
 * hex), strings ('...', "...", triple-quoted, r'raw', all CEL escapes); `quantity('lit')`;
 * `semver('lit')` and `semver('lit', bool)`; methods compareTo, isGreaterThan, isLessThan (on
 * quantities and versions) and startsWith, endsWith, contains (on strings); == != < <= > >=;
 * `x in [list literal]`; `'D' in device.attributes`, `'N' in device.attributes[D]` (and for
 * capacity); `has(device.attributes[D].N)`; `!`, `&&`, `||`, `-` before an integer literal,
 * parentheses, `//` comments. Equality follows cel-go's heterogeneous equality (1 == 'a' is
 * false; a version or quantity == another type is an error, but != is then true, as cel-go's
 * evalNe is "Equal is not true"). && and || are commutative over errors: `false && error` is
 * false, `true || error` is true; operands are evaluated left to right and stop at the first
 * deciding value, as cel-go does. `in` on a list literal follows cel-go's planner (Kubernetes
 * plans with its optimizer): `x in []` is false without evaluating x; a list of literals is a
 * hash-set lookup, so a version on the left makes the Go runtime panic and the whole
 * evaluation fails ("hash of unhashable type"), whatever surrounds it; in other lists an
 * element whose equality is an error does not match. List literals must be homogeneous
 * (HomogeneousAggregateLiterals in apiserver/pkg/cel/environment/base.go).
 *
 * The rules above were checked by evaluating the unit-test expressions, the fuzz corpus and
 * generated expressions with k8s.io/dynamic-resource-allocation v0.34.4 (the scheduler's code
 * in Kubernetes 1.34.4) and comparing results.
 *
 * Everything else (other functions and methods, macros such as exists/all, cel.bind, the
 * ternary operator, arithmetic, doubles, uints, bytes, null, maps, field names of `device`
 * other than the three above, expressions whose types the subset cannot check, quantities
 * finer than milli-units, source bytes that are not UTF-8) is never guessed: cel_compile()
 * returns CEL_UNSUPPORTED and names the construct. Type errors that the upstream checker
 * reports are also CEL_UNSUPPORTED (such expressions never pass API validation).
 *
 * Bounds: the expression is at most CEL_MAX_EXPR_LEN bytes, nesting at most CEL_MAX_DEPTH
 * levels (parser recursion and tree depth; evaluation recursion follows the tree). Evaluation
 * visits each node once (no loops in the subset), so its cost is linear in the expression
 * length times the length of the strings compared.
 *
 * Cost. Kubernetes bounds selector CEL in cost units (kubernetes/kubernetes):
 *   - staging/src/k8s.io/api/resource/v1/types.go: CELSelectorExpressionMaxCost = 1000000.
 *   - pkg/apis/resource/validation/validation.go (validateCELSelector): a selector whose
 *     estimated worst-case cost (CompilationResult.MaxCost) is above it is refused, "too
 *     complex, exceeds cost limit".
 *   - staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go (CompileCELExpression):
 *     the program runs with cel.CostLimit(CELSelectorExpressionMaxCost), a limit on the actual
 *     cost of ONE evaluation; MaxCost comes from env.EstimateCost with the device's declared
 *     sizes (attribute values at most DeviceAttributeMaxValueLength, 64 bytes).
 *   - staging/src/k8s.io/apiserver/pkg/apis/cel/config.go: PerCallLimit = 1000000 ("roughly 0.1
 *     second" per call) and RuntimeCELCostBudget = 10000000 per object.
 * Upstream limits one evaluation; nothing there limits how many devices times selectors one
 * check evaluates, and a selector of ~350 `||` comparisons (10 KiB) stays far below 1000000
 * units per device. gputri adds the missing total: a struct cel_budget of steps, charged by
 * every evaluation (cel_eval_budget) and by compiling (cel_program_size), shared by one
 * classification or one admitted object. A step is, like a cel-go cost unit, one node of the
 * tree visited (a literal, a `device` lookup, an operator, a list element) plus one per
 * CEL_COST_STRING_BYTES bytes that a string comparison or method traverses (cel-go's string
 * traversal factor, 0.1 per byte); comparing versions costs 8 steps more (both are parsed), and
 * `x in [list]` one more per element (the list is walked before it is searched). Measured CPU
 * per step (bench/cel_cost_bench.c: selectors of 120 to 265 `||` terms filling 10 KiB, over a
 * device of 8 attributes; x86-64, gcc -O2, a loaded 2-core machine): 7 to 14 ns, the worst
 * shapes an int comparison and a lookup the device lacks; CEL_NS_PER_STEP rounds it up.
 *
 * No I/O, no global state: programs are immutable after cel_compile() and may be evaluated
 * from several threads at once.
 */
#ifndef GPUTRI_CEL_H
#define GPUTRI_CEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* resource.k8s.io/v1 CELSelectorExpressionMaxLength (types.go): 10 KiB. */
#define CEL_MAX_EXPR_LEN (10 * 1024)
/* Nesting limit of the parser and of the compiled tree. */
#define CEL_MAX_DEPTH 48

/* cel_compile() results. */
enum cel_status {
    CEL_OK = 0,
    CEL_INVALID,     /* certainly not a valid selector (syntax error, result not bool) */
    CEL_UNSUPPORTED, /* maybe valid CEL, but outside the subset; err names the construct */
    CEL_LIMIT,       /* longer than CEL_MAX_EXPR_LEN or nested deeper than CEL_MAX_DEPTH */
    CEL_NOMEM,
};

/* cel_eval() results. */
enum cel_result {
    CEL_FALSE = 0,
    CEL_TRUE,
    CEL_ERROR,   /* certainly a runtime error upstream ("no such key", "no such overload") */
    CEL_UNKNOWN, /* depends on a value the device view could not supply (CEL_LOOKUP_UNKNOWN) */
};

/* What a device lookup found. */
enum cel_lookup {
    CEL_LOOKUP_MISSING = 0,
    CEL_LOOKUP_FOUND,
    CEL_LOOKUP_UNKNOWN, /* present, but in a form this library does not model (a list
                           attribute, a quantity not exact in milli-units) */
};

enum cel_attr_kind {
    CEL_ATTR_BOOL,
    CEL_ATTR_INT,
    CEL_ATTR_STRING,
    CEL_ATTR_VERSION, /* the API's versionValue text; parsed as semver when used */
};

/* One attribute value. Strings are borrowed (not copied) and need not be NUL-terminated. */
struct cel_attr_value {
    enum cel_attr_kind kind;
    bool b;
    int64_t i;
    const char *s; /* CEL_ATTR_STRING and CEL_ATTR_VERSION */
    size_t len;
};

/*
 * The device an expression is evaluated against, supplied through callbacks so that the caller
 * keeps its own compact device records. Names are (pointer, length), not NUL-terminated, and
 * may contain any byte. Domains are fully qualified: the caller files a name without a domain
 * under the driver's domain (compile.go parseQualifiedName).
 *
 * attribute(ctx, domain, dlen, name, nlen, out): with name == NULL, whether the device has any
 *   attribute in that domain (FOUND or MISSING); otherwise the attribute's value in *out.
 * capacity(ctx, domain, dlen, name, nlen, milli): with name == NULL, whether the device has any
 *   capacity in that domain; otherwise the value in milli-units (cel_quantity_milli()). A
 *   quantity not exactly representable in int64 milli-units must be reported as UNKNOWN.
 * Either callback may be NULL: the device then has no attributes / capacities.
 * Callbacks must not call back into this library with the same program; they may be called
 * any number of times (at most once per node of the expression) during one cel_eval().
 */
struct cel_device {
    const char *driver;
    size_t driver_len;
    const void *ctx;
    enum cel_lookup (*attribute)(const void *ctx, const char *domain, size_t dlen, const char *name,
                                 size_t nlen, struct cel_attr_value *out);
    enum cel_lookup (*capacity)(const void *ctx, const char *domain, size_t dlen, const char *name,
                                size_t nlen, int64_t *milli);
};

struct cel_program;

/* Bytes of a string traversed per step (cel-go's StringTraversalCostFactor, 0.1). */
#define CEL_COST_STRING_BYTES 10
/* Measured CPU per step, ns (above; rounded up). For stating bounds, not used at run time. */
#define CEL_NS_PER_STEP 15

/*
 * A budget of steps (above) that evaluations and compilations charge. Not thread-safe: one
 * budget is charged by one thread at a time. `left` counts down; once a charge does not fit,
 * `exhausted` is set and stays set (every later evaluation answers CEL_UNKNOWN at once, so an
 * exhausted budget costs a few ns per device).
 */
struct cel_budget {
    uint64_t left;  /* steps still allowed */
    uint64_t spent; /* steps charged so far (for tests and benchmarks) */
    bool exhausted; /* a charge did not fit: what it was for was not done */
    bool late;      /* exhausted by the deadline, not by the steps */
    /* private */
    int64_t deadline_ns; /* clock_mono_ns (util/clock.h); 0: none */
    uint64_t next_check; /* `spent` at which the clock is read next */
};

/* Steps between two readings of the clock when a budget has a deadline (~0.5-1 ms of CPU). */
#define CEL_DEADLINE_CHECK_STEPS 65536

/* cel_budget_init() - a budget of `steps` steps, not exhausted, without a deadline. */
void cel_budget_init(struct cel_budget *b, uint64_t steps);

/*
 * cel_budget_set_deadline() - also exhaust b (setting b->late) once the system's monotonic
 * clock (clock_mono_ns(NULL), ns) passes deadline_ns: checked when a charge brings the steps
 * spent past each multiple of CEL_DEADLINE_CHECK_STEPS, so the work done past the deadline is
 * at most that many steps. For a caller whose answer is useless after a time (the API server
 * gives up on a webhook after its timeout), whatever else the machine is doing. 0: none.
 */
void cel_budget_set_deadline(struct cel_budget *b, int64_t deadline_ns);

/*
 * cel_budget_charge() - take `steps` from b. Returns true when they fit (left >= steps);
 * otherwise takes what is left, sets b->exhausted and returns false. b == NULL: unbounded
 * (always true).
 */
bool cel_budget_charge(struct cel_budget *b, uint64_t steps);

/* The text that says why an evaluation did not happen (cel_eval_budget's err, callers' detail). */
#define CEL_TOO_COSTLY "selectors too costly to check"

/*
 * cel_compile() - parse and check `expr` (len bytes, need not be NUL-terminated; may contain
 * any bytes). On CEL_OK *out is a new program the caller frees with cel_program_free(). On
 * any other status *out is NULL and err (errlen bytes, may be NULL) says why, with the byte
 * offset: "unsupported: method lowerAscii() at offset 40". Thread-safe.
 */
int cel_compile(const char *expr, size_t len, struct cel_program **out, char *err, size_t errlen);

/* cel_program_free() - free a program; NULL is allowed. */
void cel_program_free(struct cel_program *prog);

/*
 * cel_eval() - evaluate a compiled program against one device. Returns CEL_TRUE / CEL_FALSE,
 * CEL_ERROR (upstream would fail with a runtime error, which aborts the allocation; see
 * allocator_stable.go above) or CEL_UNKNOWN (the result depends on a lookup that returned
 * CEL_LOOKUP_UNKNOWN and could be anything). On CEL_ERROR and CEL_UNKNOWN err (may be NULL)
 * says why ("no such key: productName at offset 30"). Allocates nothing. Thread-safe for a
 * shared program when the callbacks are.
 */
enum cel_result cel_eval(const struct cel_program *prog, const struct cel_device *dev, char *err,
                         size_t errlen);

/*
 * cel_eval_budget() - cel_eval() charging `budget` (may be NULL: unbounded, as cel_eval) one
 * step per node visited and one per CEL_COST_STRING_BYTES bytes of strings traversed. When the
 * budget is already exhausted, or runs out part-way, the evaluation stops there and the result
 * is CEL_UNKNOWN with err CEL_TOO_COSTLY (the budget is then exhausted); otherwise the result
 * is cel_eval()'s and budget->spent grows by the steps taken. One evaluation takes at most
 * cel_program_size() steps (each node is visited once at most) plus its string traversals.
 * Thread-safe for a shared program when each thread has its own
 * budget.
 */
enum cel_result cel_eval_budget(const struct cel_program *prog, const struct cel_device *dev,
                                struct cel_budget *budget, char *err, size_t errlen);

/*
 * cel_program_size() - the nodes of the compiled tree: the steps a caller charges for
 * compiling it (parsing is linear in the source, the tree in its nodes). Pure.
 */
size_t cel_program_size(const struct cel_program *prog);

/* cel_program_source() - the expression the program was compiled from (NUL-terminated copy). */
const char *cel_program_source(const struct cel_program *prog);

/*
 * cel_quantity_milli() - parse a Kubernetes quantity (core/model/quantity.h) into milli-units
 * for the capacity callback. Returns CEL_LOOKUP_FOUND with *milli set when the value is exactly
 * a whole number of milli-units inside the int64 range, CEL_LOOKUP_UNKNOWN when it is a valid
 * quantity that is not (e.g. "1n", "10E"), and CEL_LOOKUP_MISSING when `s` is not a quantity
 * or on allocation failure. Thread-safe.
 */
enum cel_lookup cel_quantity_milli(const char *s, int64_t *milli);

#endif
