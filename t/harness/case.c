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
  /* The dtype ends the name (and so changes the seed) unless the name says
   * it already (reorder's "f16->f32"): F32 is the default and unnamed. */
  if (dtype == ADNN_DTYPE_F64 || dtype == ADNN_DTYPE_F16 || dtype == ADNN_DTYPE_BF16) {
    char tag[16];
    snprintf(tag, sizeof tag, " %s", adnn_dtype_name(dtype));
    if (dtype == ADNN_DTYPE_F64 || strstr(c->name, tag + 1) == NULL)
      strncat(c->name, tag, sizeof c->name - strlen(c->name) - 1);
  }
}

/* Where outputs start in the concatenated buffer: a multiple of this many
 * elements (64 bytes of F32), so that every output pointer is as aligned as
 * an allocation's start would be for vector loads. */
enum { OUTPUT_ALIGN = 16 };

/* The buffer of every output one after the other, NaN in the gaps. The
 * outputs may differ in dtype (device.c lays them out on the device). */
static int concat_outputs(harness_case *c, const harness_tensor *outs) {
  int64_t span = 0;
  for (int i = 0; i < c->n_out; i++) {
    c->out_desc[i] = outs[i].desc;
    c->out_offset[i] = (span + OUTPUT_ALIGN - 1) / OUTPUT_ALIGN * OUTPUT_ALIGN;
    span = c->out_offset[i] + harness_span(&outs[i].desc);
  }
  harness_buffer *b = &c->out;
  b->desc = outs[0].desc;
  b->span = span;
  const size_t n = span > 0 ? (size_t)span : 1;
  b->v = malloc(n * sizeof *b->v);
  b->member = calloc(n, 1);
  if (!b->v || !b->member) return -1;
  for (int64_t i = 0; i < span; i++) b->v[i] = NAN;
  for (int o = 0; o < c->n_out; o++) {
    harness_index it;
    for (harness_index_first(&it, &outs[o].desc); it.valid; harness_index_next(&it, &outs[o].desc))
      b->member[c->out_offset[o] + it.offset] = 1;
  }
  return 0;
}

int harness_case_alloc(harness_case *c) {
  const harness_op_traits *t = c->op->traits;
  harness_tensor in[HARNESS_MAX_INPUTS];
  c->n_in = t->inputs(&c->desc, in);
  int failed = 0;
  if (t->outputs) {
    harness_tensor outs[HARNESS_MAX_OUTPUTS];
    c->n_out = t->outputs(&c->desc, outs);
    failed = c->n_out < 1 || c->n_out > HARNESS_MAX_OUTPUTS || concat_outputs(c, outs) != 0;
  } else {
    const adnn_tensor_desc y = t->output(&c->desc);
    c->n_out = 1;
    c->out_desc[0] = y;
    c->out_offset[0] = 0;
    failed = harness_buffer_init(&c->out, &y);
  }
  c->inout = t->inout ? t->inout(&c->desc) : 0u;
  for (int i = 0; i < c->n_in; i++) failed |= harness_buffer_init(&c->in[i], &in[i].desc);
  if (failed) harness_case_free(c);
  return failed ? -1 : 0;
}

void harness_case_fill(harness_case *c) {
  const harness_op_traits *t = c->op->traits;
  tap_rng r = tap_rng_seed(harness_seed(c->name));
  t->fill(&c->desc, c->in, c->n_in, &r);
  if (!c->inout || !t->fill_outputs) return;
  /* Each output in a buffer of its own layout, then into its place in out. */
  harness_buffer outs[HARNESS_MAX_OUTPUTS];
  memset(outs, 0, sizeof outs);
  int failed = 0;
  for (int i = 0; i < c->n_out; i++) failed |= harness_buffer_init(&outs[i], &c->out_desc[i]);
  if (!failed) {
    t->fill_outputs(&c->desc, outs, c->n_out, &r);
    for (int o = 0; o < c->n_out; o++) {
      if (!(c->inout & (1u << o))) continue;
      for (int64_t i = 0; i < outs[o].span; i++)
        if (outs[o].member[i]) c->out.v[c->out_offset[o] + i] = outs[o].v[i];
    }
  }
  for (int i = 0; i < c->n_out; i++) harness_buffer_free(&outs[i]);
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
  /* NaN everywhere but the initial values of in-out outputs. */
  for (int64_t i = 0; i < c->out.span; i++) y[i] = c->inout ? c->out.v[i] : NAN;
  const double *in[HARNESS_MAX_INPUTS];
  for (int i = 0; i < c->n_in; i++) in[i] = c->in[i].v;
  const harness_op_traits *t = c->op->traits;
  int rc;
  if (t->outputs) {
    double *out[HARNESS_MAX_OUTPUTS];
    for (int o = 0; o < c->n_out; o++) out[o] = y + c->out_offset[o];
    rc = t->oracle_outputs(&c->desc, in, out, why, why_len);
  } else {
    rc = t->oracle(&c->desc, in, y, why, why_len);
  }
  if (rc != 0) {
    free(y);
    return NULL;
  }
  return y;
}
