/* The conformance suite of the forward DNN ops: every op of the op manifest
 * (include/adnn/op_list.h) on every READY backend, against the harness's own
 * oracle, with the tolerances of doc/numerics.md.
 *
 * For every op (in manifest order) it runs the oracle's self-tests (tiny cases
 * with results derived by hand), then every case of the op's table:
 *   1. the case's inputs are seeded random values (seed: the case's name),
 *      F32-representable for F32 cases, with NaN in the gaps of padded
 *      strides so that a kernel that reads them fails;
 *   2. the oracle computes y in long double from the public descriptor alone
 *      (t/ops/<op>.c; it never calls kernels/ref/);
 *   3. on every ready backend, for every variant of the op (conv2d: AUTO,
 *      then every algorithm of ADNN_CONV2D_ALGO_LIST forced in turn): the plan
 *      is created through the public API (ADNN_STATUS_NOT_SUPPORTED gives
 *      "ok N # SKIP backend ...: reason", a gap in coverage), the inputs are
 *      copied to adnn_malloc'd memory, y is poisoned with NaN, the plan runs
 *      twice unless in place, y comes back and is compared with the oracle:
 *      relative L2 and max-abs errors over the finite reference elements,
 *      exact agreement on the non-finite ones, and y's gap elements must
 *      still be NaN;
 *   4. with two or more ready backends, their outputs are compared with each
 *      other (twice the tolerance).
 * Then the bad descriptors of every op on every backend; per op, that its
 * cases follow the manifest (inputs in the order of its `inputs` column, cases
 * in every dtype of its `dtypes` column); and per backend a summary of the
 * forced variants (conv2d algorithms): how many cases each passed and
 * skipped; a backend documented to implement one must pass it somewhere.
 *
 * ADNN_CONFORMANCE_BACKEND=name restricts the run to one backend;
 * ADNN_CONFORMANCE_FILTER=substring runs only the cases whose name (or op
 * name) contains it; several substrings separated by commas run the cases
 * that contain any of them.
 *
 * Adding an op's cases (e.g. a reduction): once the op has its row in
 * ADNN_OP_LIST and its descriptor in adnn/ops.h, nothing that uses the
 * harness links until harness_<name>_traits exists. Write one file,
 * t/ops/<name>.c, modelled on t/ops/softmax.c (an op with one
 * input and an axis), holding:
 *   - inputs(), output(), set_dtype(): the descriptor's execute inputs in
 *     order, y, and the dtype of every tensor;
 *   - the oracle: doc/ops.md's definition transcribed from the public
 *     descriptor alone (its own axis and shape handling; refuse, with a
 *     reason, a y whose dims the definition does not give), accumulating in
 *     long double with harness_sum for long sums;
 *   - tolerance(): the op's row of doc/numerics.md (add the row there);
 *   - fill(): default inputs on which the op is well conditioned (used by
 *     adnn-bench --mode=corr);
 *   - cases(): the case table, each case built with harness_case_init /
 *     harness_case_alloc, filled from a tap_rng seeded with harness_seed of
 *     its name, and handed to harness_submit; include F64 rows, in-place and
 *     padded layouts, and special values where the op defines them;
 *   - oracle_selftests(): tiny inputs whose results are derived by hand in a
 *     comment, never computed by the code under test;
 *   - bad_descriptors() (optional): the statuses of doc/ops.md's error rules;
 *   - variant_count = 1 unless the op has algorithms to force;
 * and add the file to harness_op_files in t/local.mk. adnn-bench picks the op
 * up through the same traits once its grammar (tools/bench_problem.c and
 * tools/bench_case.c) has a form for it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "t/harness/harness.h"
#include "t/tap.h"

/* ------------------------------------------------------------------------ */
/* TAP output for the op files' checks                                       */
/* ------------------------------------------------------------------------ */

static int tap_report_ok(void *self, int cond, const char *text) { return ok(cond, "%s", text); }
static void tap_report_diag(void *self, const char *text) { diag("%s", text); }
static void tap_report_skip(void *self, const char *reason) { tap_skip(reason); }
static const harness_report tap_report = {tap_report_ok, tap_report_diag, tap_report_skip, NULL};

/* ------------------------------------------------------------------------ */
/* Backends                                                                  */
/* ------------------------------------------------------------------------ */

#define MAX_BACKENDS 8
#define MAX_OPS 32
#define MAX_VARIANTS 16

static int n_backends;
static adnn_context *backends[MAX_BACKENDS];
static const char *backend_names[MAX_BACKENDS];
static const char *case_filter;

/* Whether `name` contains one of case_filter's comma-separated substrings. */
static int filter_matches(const char *name) {
  for (const char *f = case_filter; *f;) {
    const char *end = strchr(f, ',');
    const size_t n = end ? (size_t)(end - f) : strlen(f);
    for (const char *h = name; n && *h; h++)
      if (strncmp(h, f, n) == 0) return 1;
    if (!end) break;
    f = end + 1;
  }
  return 0;
}

/* Outcomes of the forced variants: [backend][op][variant]. */
static int variant_pass[MAX_BACKENDS][MAX_OPS][MAX_VARIANTS];
static int variant_skip[MAX_BACKENDS][MAX_OPS][MAX_VARIANTS];
static int n_pass, n_skip, n_fail;
/* Per op: the dtypes its cases used (ADNN_OP_DTYPE bits), and the first case
 * whose inputs do not follow the manifest's order. */
static unsigned dtypes_seen[MAX_OPS];
static char inputs_out_of_order[MAX_OPS][300];

static void open_backends(void) {
  size_t count = 0;
  const char *only = getenv("ADNN_CONFORMANCE_BACKEND");
  if (adnn_backend_count(&count) != ADNN_STATUS_SUCCESS) tap_bail("adnn_backend_count failed");
  for (size_t i = 0; i < count && n_backends < MAX_BACKENDS; i++) {
    const adnn_backend_info *info = NULL;
    if (adnn_backend_get(i, &info) != ADNN_STATUS_SUCCESS) continue;
    if (info->state != ADNN_BACKEND_READY) {
      diag("backend %s is not ready (%s): not tested", info->name, info->reason);
      continue;
    }
    if (only && *only && strcmp(only, info->name) != 0) continue;
    adnn_context *ctx = NULL;
    adnn_status st = adnn_context_create(info->name, &ctx);
    if (!ok(st == ADNN_STATUS_SUCCESS, "context on ready backend %s", info->name)) {
      diag("  %s: %s", adnn_status_name(st), adnn_last_error());
      continue;
    }
    backends[n_backends] = ctx;
    backend_names[n_backends] = info->name;
    n_backends++;
  }
}

/* ------------------------------------------------------------------------ */
/* Running one case                                                          */
/* ------------------------------------------------------------------------ */

/* Case c in variant v (label NULL: the op has none) on backend b. Returns y,
 * or NULL when skipped or failed. */
static double *run_on_backend(const harness_case *c, int op_index, int v, const char *label,
                              int b, const double *oracle) {
  char what[512];
  if (label)
    snprintf(what, sizeof what, "%s %s %s [%s]", backend_names[b], c->op->name, c->name, label);
  else
    snprintf(what, sizeof what, "%s %s %s", backend_names[b], c->op->name, c->name);
  harness_run r;
  harness_run_case(backends[b], c, &r);
  if (r.outcome == HARNESS_NOT_SUPPORTED) {
    char why[1400];
    snprintf(why, sizeof why, "%s: %s", what, r.message);
    tap_skip(why);
    n_skip++;
    if (v > 0) variant_skip[b][op_index][v]++;
    return NULL;
  }
  if (r.outcome == HARNESS_FAILED) {
    ok(0, "%s%s%s: %s", what, r.algorithm[0] ? " " : "", r.algorithm, r.message);
    n_fail++;
    return NULL;
  }
  const harness_tolerance t = c->op->traits->tolerance(&c->desc, c->dtype);
  const harness_comparison cmp = harness_compare(r.y, oracle, &c->out, 1);
  const int good = harness_within(&cmp, t);
  ok(good, "%s (%s) rel_l2 %.2g max_abs %.2g", what, r.algorithm, cmp.rel_l2, cmp.max_abs);
  if (!good) {
    char text[512];
    harness_describe(&cmp, t, text, sizeof text);
    diag("  %s", text);
    n_fail++;
    free(r.y);
    return NULL;
  }
  n_pass++;
  if (v > 0) {
    variant_pass[b][op_index][v]++;
    if (!strstr(r.algorithm, label))
      diag("  note: forced %s but the plan reports \"%s\"", label, r.algorithm);
  }
  return r.y;
}

/* Whether the traits list a case's execute inputs in the manifest's order:
 * each name appears in its `inputs` column ("x, w[, bias]") after the
 * previous one. Consecutive inputs of one name are one repeated input of
 * the column (the optimizer's "grad_0..grad_{T-1}", named "grad"). */
static int inputs_in_manifest_order(const harness_case *c) {
  harness_tensor in[HARNESS_MAX_INPUTS];
  const int n = c->op->traits->inputs(&c->desc, in);
  const char *rest = c->op->input_names;
  for (int i = 0; i < n; i++) {
    if (i > 0 && strcmp(in[i].name, in[i - 1].name) == 0) continue;
    const char *at = strstr(rest, in[i].name);
    if (!at) return 0;
    rest = at + strlen(in[i].name);
  }
  return 1;
}

typedef struct conformance_suite {
  harness_suite base;
  int op_index;
} conformance_suite;

static void run_case(harness_suite *s, harness_case *c) {
  const int op_index = ((conformance_suite *)s)->op_index;
  dtypes_seen[op_index] |= ADNN_OP_DTYPE(c->dtype);
  if (!inputs_out_of_order[op_index][0] && !inputs_in_manifest_order(c))
    snprintf(inputs_out_of_order[op_index], sizeof inputs_out_of_order[op_index], "%s", c->name);
  if (case_filter && !filter_matches(c->name) && !filter_matches(c->op->name)) return;
  char why[256] = "";
  double *oracle = harness_oracle(c, why, sizeof why);
  if (!oracle) {
    ok(0, "%s %s: the oracle refuses the case: %s", c->op->name, c->name, why);
    n_fail++;
    return;
  }
  const harness_op_traits *traits = c->op->traits;
  for (int v = 0; v < traits->variant_count; v++) {
    harness_case cv = *c; /* the same buffers, another descriptor */
    const char *label = traits->set_variant ? traits->set_variant(&cv.desc, v) : NULL;
    double *outs[MAX_BACKENDS] = {0};
    for (int b = 0; b < n_backends; b++) outs[b] = run_on_backend(&cv, op_index, v, label, b, oracle);
    /* Backends against each other, with twice the tolerance. */
    const harness_tolerance t2 = harness_scale_tolerance(traits->tolerance(&c->desc, c->dtype), 2);
    for (int b1 = 0; b1 < n_backends; b1++)
      for (int b2 = b1 + 1; b2 < n_backends; b2++) {
        if (!outs[b1] || !outs[b2]) continue;
        const harness_comparison cmp = harness_compare(outs[b2], outs[b1], &c->out, 0);
        const int good = harness_within(&cmp, t2);
        ok(good, "%s vs %s: %s %s%s%s agree", backend_names[b1], backend_names[b2], c->op->name,
           c->name, label ? " " : "", label ? label : "");
        if (!good) {
          char text[512];
          harness_describe(&cmp, t2, text, sizeof text);
          diag("  %s", text);
        }
      }
    for (int b = 0; b < n_backends; b++) free(outs[b]);
  }
  free(oracle);
}

/* ------------------------------------------------------------------------ */

/* Every forced variant must pass somewhere on a backend documented to have
 * it; the others are reported. */
static void variant_summary(void) {
  for (size_t o = 0; o < harness_op_count; o++) {
    const harness_op *op = &harness_ops[o];
    const harness_op_traits *traits = op->traits;
    if (traits->variant_count < 2) continue;
    for (int b = 0; b < n_backends; b++)
      for (int v = 1; v < traits->variant_count; v++) {
        harness_desc scratch;
        memset(&scratch, 0, sizeof scratch);
        const char *label = traits->set_variant(&scratch, v);
        const int pass = variant_pass[b][o][v], skip = variant_skip[b][o][v];
        if (traits->variant_expected && traits->variant_expected(backend_names[b], v))
          ok(pass > 0, "%s: %s forced %s passed on %d cases (%d skipped)", backend_names[b],
             op->name, label, pass, skip);
        else
          diag("%s: %s forced %s passed on %d cases (%d skipped)", backend_names[b], op->name,
               label, pass, skip);
      }
  }
}

int main(void) {
  case_filter = getenv("ADNN_CONFORMANCE_FILTER");
  if (case_filter && !*case_filter) case_filter = NULL;
  if (harness_op_count > MAX_OPS) tap_bail("more ops in the manifest than MAX_OPS");
  for (size_t o = 0; o < harness_op_count; o++) {
    if (harness_ops[o].traits->variant_count > MAX_VARIANTS)
      tap_bail("an op has more variants than MAX_VARIANTS");
    harness_ops[o].traits->oracle_selftests(&tap_report);
  }
  open_backends();
  if (n_backends == 0) diag("no ready backend: only the oracle is checked");
  for (int b = 0; b < n_backends; b++) diag("backend under test: %s", backend_names[b]);

  for (size_t o = 0; o < harness_op_count; o++) {
    conformance_suite suite = {{run_case}, (int)o};
    harness_ops[o].traits->cases(&suite.base);
  }
  for (int b = 0; b < n_backends; b++)
    for (size_t o = 0; o < harness_op_count; o++)
      if (harness_ops[o].traits->bad_descriptors)
        harness_ops[o].traits->bad_descriptors(&tap_report, backends[b], backend_names[b]);

  /* What the manifest says of each op holds for its cases: the inputs in its
   * order, and cases in every dtype it lists (F64 included, so the CPU
   * plugin's F64 path always meets the oracle). */
  for (size_t o = 0; o < harness_op_count; o++) {
    const harness_op *op = &harness_ops[o];
    ok(!inputs_out_of_order[o][0], "%s: every case's inputs follow the manifest's \"%s\"%s%s",
       op->name, op->input_names, inputs_out_of_order[o][0] ? "; not: " : "",
       inputs_out_of_order[o]);
    ok((dtypes_seen[o] & op->dtypes) == op->dtypes,
       "%s: cases in every dtype of the manifest (mask 0x%x, cases 0x%x)", op->name, op->dtypes,
       dtypes_seen[o]);
  }
  if (!case_filter) variant_summary();
  diag("backend cases: %d passed, %d skipped (gaps), %d failed", n_pass, n_skip, n_fail);
  for (int b = 0; b < n_backends; b++) adnn_context_destroy(backends[b]);
  return tap_done();
}
