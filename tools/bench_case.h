/*
 * A parsed adnn-bench problem (bench_problem.h) as a case of the conformance
 * harness (t/harness/harness.h): the op's public descriptor in the requested
 * dtype and layout, its host buffers and the op's default data. From there
 * adnn-bench creates, runs and checks it with the harness, through the op's
 * traits, like t/conformance does; it has no per-op code of its own.
 *
 * GEMM is no op of the manifest (adnn_gemm has no plan): a gemm: problem
 * becomes a case whose op is NULL, with A and B as its inputs and C as y,
 * all packed row-major.
 */
#ifndef ADNN_BENCH_CASE_H
#define ADNN_BENCH_CASE_H

#include <adnn.h>

#include "t/harness/harness.h"
#include "tools/bench_problem.h"

/* Fills c for problem p: `text` (its canonical form) names the case and seeds
 * its data; 4-D tensors of conv, pool and bnorm are NHWC (filters KRSC) when
 * nhwc; a conv runs `algorithm`. A training or backward normalization
 * (dir=FWD_D, dir=BWD_DW) points to a forward descriptor kept here until the
 * next call. Returns 0, or -1 when out of host memory. */
int bench_case_build(const bench_problem *p, const char *text, adnn_dtype dtype, int nhwc,
                     adnn_conv2d_algorithm algorithm, harness_case *c);

#endif
