/* A harness case: an op, a descriptor and the host buffers of its inputs and
 * of y; and the oracle's result for it. */
#include "t/harness/harness.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void harness_case_init(harness_case *c, const harness_op *op, adnn_dtype dtype, const char *fmt,
                       ...) {
  memset(c, 0, sizeof *c);
  c->op = op;
  c->dtype = dtype;
  c->inplace = -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->name, sizeof c->name, fmt, ap);
  va_end(ap);
  if (dtype == ADNN_DTYPE_F64) strncat(c->name, " f64", sizeof c->name - strlen(c->name) - 1);
}

int harness_case_alloc(harness_case *c) {
  harness_tensor in[HARNESS_MAX_INPUTS];
  c->n_in = c->op->traits->inputs(&c->desc, in);
  const adnn_tensor_desc y = c->op->traits->output(&c->desc);
  int failed = harness_buffer_init(&c->out, &y);
  for (int i = 0; i < c->n_in; i++) failed |= harness_buffer_init(&c->in[i], &in[i].desc);
  if (failed) harness_case_free(c);
  return failed ? -1 : 0;
}

void harness_case_fill(harness_case *c) {
  tap_rng r = tap_rng_seed(harness_seed(c->name));
  c->op->traits->fill(&c->desc, c->in, c->n_in, &r);
}

void harness_case_free(harness_case *c) {
  for (int i = 0; i < c->n_in; i++) harness_buffer_free(&c->in[i]);
  harness_buffer_free(&c->out);
}

void harness_submit(harness_suite *s, harness_case *c) {
  s->run(s, c);
  harness_case_free(c);
}

double *harness_oracle(const harness_case *c, char *why, size_t why_len) {
  double *y = malloc((size_t)(c->out.span > 0 ? c->out.span : 1) * sizeof *y);
  if (!y) {
    snprintf(why, why_len, "out of memory for the oracle's y");
    return NULL;
  }
  for (int64_t i = 0; i < c->out.span; i++) y[i] = NAN;
  const double *in[HARNESS_MAX_INPUTS];
  for (int i = 0; i < c->n_in; i++) in[i] = c->in[i].v;
  if (c->op->traits->oracle(&c->desc, in, y, why, why_len) != 0) {
    free(y);
    return NULL;
  }
  return y;
}
