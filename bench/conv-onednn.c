/*
 * conv-onednn: the oneDNN side of the CPU performance comparison
 * (bench/run-cpu-perf.sh, doc/performance.md). Built only when configure finds
 * oneDNN; it links oneDNN and nothing of adnn (it compiles the problem parser
 * of adnn-bench in), so oneDNN never becomes a dependency of the library.
 *
 * For each convolution it creates, in its direction (a "dir=" of its own or
 * the --dir before it: benchdnn's FWD_D, BWD_D, BWD_W, BWD_WB), a
 * forward-inference primitive, or a backward-data / backward-weights
 * primitive (with its forward-training primitive as the hint), with
 * oneDNN's preferred ("any") formats for every tensor, as a framework that
 * keeps activations in oneDNN's layout would; the plain NCHW inputs are
 * reordered once, outside the timed loop. GEMM problems run through dnnl_sgemm
 * (row-major). Other ops are reported as unsupported. It prints the columns of
 * `adnn-bench --mode=perf --csv` (backend "onednn", algorithm = oneDNN's
 * implementation name).
 *
 * --dtype=f32|bf16|u8|s8 (forward only; default f32) gives the forward
 * convolutions the data types of adnn-bench's --dtype: bf16 x, w and y; or
 * the quantized layer, a u8 (s8) x with the zero point 128 (0), an s8 w and
 * a y of x's dtype with one output scale of 1 / (64 sqrt(C/g R S)), as
 * adnn-bench sets up its integer conv (t/ops/conv2d.c, conv2d_set_dtype).
 *
 * usage: conv-onednn [--csv] [--dtype=f32|bf16|u8|s8] [--mb=N] [--runs=N] [--time-ms=T]
 *                    [--warmup=N] [--dir=FWD_D|BWD_D|BWD_W|BWD_WB] [--batch=FILE]
 *                    [PROBLEM...] (bench/peer.h)
 * Threads: oneDNN's own runtime (OMP_NUM_THREADS with Debian's OpenMP build).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

#include "bench/peer.h"

static peer_options options = {"conv-onednn", "onednn", 0, 0, 1, 500, 0, -1};

#define CHECK(call)                                                              \
  do {                                                                           \
    dnnl_status_t st_ = (call);                                                  \
    if (st_ != dnnl_success) {                                                   \
      snprintf(msg, sizeof msg, "%s failed (dnnl status %d)", #call, (int)st_); \
      goto fail;                                                                 \
    }                                                                            \
  } while (0)

typedef struct conv_run {
  dnnl_primitive_t prim;
  dnnl_stream_t stream;
  int nargs;
  dnnl_exec_arg_t args[4];
} conv_run;

static int conv_exec(void *arg) {
  conv_run *r = arg;
  if (dnnl_primitive_execute(r->prim, r->stream, r->nargs, r->args) != dnnl_success) return -1;
  return dnnl_stream_wait(r->stream) == dnnl_success ? 0 : -1;
}

/* The data type of the forward convolutions' x and y (--dtype). */
static dnnl_data_type_t data_type = dnnl_f32;

static void fill(dnnl_memory_t m, size_t count, dnnl_data_type_t dt) {
  void *p = NULL;
  dnnl_memory_get_data_handle(m, &p);
  unsigned s = 12345u;
  for (size_t i = 0; i < count; i++) {
    const float v = (float)((s = s * 1664525u + 1013904223u) >> 8) * 0x1p-24f - 0.5f;
    if (dt == dnnl_f32) {
      ((float *)p)[i] = v;
    } else if (dt == dnnl_bf16) {
      uint32_t b;
      memcpy(&b, &v, sizeof b);
      ((uint16_t *)p)[i] = (uint16_t)(b >> 16); /* a bf16 value near v */
    } else {
      ((uint8_t *)p)[i] = (uint8_t)(s >> 24); /* any byte: u8 or s8 */
    }
  }
}

/* Reorders plain memory `from` into a new memory of descriptor `md`. */
static dnnl_status_t reorder_to(dnnl_engine_t eng, dnnl_stream_t stream, dnnl_memory_t from,
                                const dnnl_memory_desc_t *from_md, const dnnl_memory_desc_t *md,
                                dnnl_memory_t *to) {
  dnnl_status_t s = dnnl_memory_create(to, md, eng, DNNL_MEMORY_ALLOCATE);
  if (s != dnnl_success) return s;
  dnnl_primitive_desc_t rpd;
  dnnl_primitive_t r;
  if ((s = dnnl_reorder_primitive_desc_create(&rpd, from_md, eng, md, eng, NULL)) != dnnl_success)
    return s;
  s = dnnl_primitive_create(&r, rpd);
  dnnl_primitive_desc_destroy(rpd);
  if (s != dnnl_success) return s;
  dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, *to}};
  s = dnnl_primitive_execute(r, stream, 2, a);
  if (s == dnnl_success) s = dnnl_stream_wait(stream);
  dnnl_primitive_destroy(r);
  return s;
}

/* A plain (nchw / oihw) tensor filled with seeded values, reordered once into
 * the layout `pref` the primitive prefers: an input of the timed primitive. */
static dnnl_status_t input_in(dnnl_engine_t eng, dnnl_stream_t stream,
                              const dnnl_memory_desc_t *plain_md, size_t count,
                              const dnnl_memory_desc_t *pref, dnnl_memory_t *out) {
  dnnl_memory_t plain = NULL;
  dnnl_status_t s = dnnl_memory_create(&plain, plain_md, eng, DNNL_MEMORY_ALLOCATE);
  if (s != dnnl_success) return s;
  fill(plain, count, plain_md->data_type);
  s = reorder_to(eng, stream, plain, plain_md, pref, out);
  dnnl_memory_destroy(plain);
  return s;
}

/* One convolution in its direction p->dir (benchdnn's FWD_D / BWD_D / BWD_W /
 * BWD_WB: the problem's "dir=" or the --dir before it). Every direction is set up as a training framework would: the
 * forward primitive (forward_training for the backward ones, whose hint it
 * is), oneDNN's preferred formats for every tensor, the inputs reordered into
 * them once outside the timed loop, the outputs left in them. */
static int run_conv(dnnl_engine_t eng, dnnl_stream_t stream, const bench_problem *p,
                    const char *text) {
  char msg[256] = "";
  const char *impl = "";
  dnnl_memory_t mem[4] = {NULL, NULL, NULL, NULL};
  dnnl_primitive_desc_t fwd_pd = NULL, pd = NULL;
  dnnl_primitive_t prim = NULL;
  const int dir = p->dir;
  const int grouped = p->g > 1;
  dnnl_dims_t src_dims = {p->mb, p->ic, p->ih, p->iw};
  dnnl_dims_t dst_dims = {p->mb, p->oc, p->oh, p->ow};
  dnnl_dims_t wei_dims = {p->oc, p->ic, p->kh, p->kw};
  dnnl_dims_t gwei_dims = {p->g, p->oc / p->g, p->ic / p->g, p->kh, p->kw};
  dnnl_dims_t bia_dims = {p->oc};
  dnnl_dims_t strides = {p->sh, p->sw}, dil = {p->dh - 1, p->dw - 1};
  dnnl_dims_t pad_l = {p->pt, p->pl}, pad_r = {p->pb, p->pr};
  dnnl_memory_desc_t src_any, wei_any, dst_any, bia_any, src_md, wei_md, dst_md;
  dnnl_convolution_desc_t fd, cd;
  const size_t src_n = (size_t)(p->mb * p->ic * p->ih * p->iw);
  const size_t wei_n = (size_t)(p->oc * (p->ic / p->g) * p->kh * p->kw);
  const size_t dst_n = (size_t)(p->mb * p->oc * p->oh * p->ow);
  double t0 = peer_now_ms();
  /* --dtype applies to the forward direction only (checked in main). */
  const dnnl_data_type_t xt = data_type, yt = data_type;
  const int integer = xt == dnnl_u8 || xt == dnnl_s8;
  const dnnl_data_type_t wt = integer ? dnnl_s8 : xt;
  dnnl_primitive_attr_t attr = NULL;
  CHECK(dnnl_memory_desc_init_by_tag(&src_md, 4, src_dims, xt, dnnl_nchw));
  CHECK(dnnl_memory_desc_init_by_tag(&wei_md, grouped ? 5 : 4, grouped ? gwei_dims : wei_dims,
                                     wt, grouped ? dnnl_goihw : dnnl_oihw));
  CHECK(dnnl_memory_desc_init_by_tag(&dst_md, 4, dst_dims, yt, dnnl_nchw));
  CHECK(dnnl_memory_desc_init_by_tag(&src_any, 4, src_dims, xt, dnnl_format_tag_any));
  CHECK(dnnl_memory_desc_init_by_tag(&wei_any, grouped ? 5 : 4, grouped ? gwei_dims : wei_dims,
                                     wt, dnnl_format_tag_any));
  CHECK(dnnl_memory_desc_init_by_tag(&dst_any, 4, dst_dims, yt, dnnl_format_tag_any));
  CHECK(dnnl_memory_desc_init_by_tag(&bia_any, 1, bia_dims, dnnl_f32, dnnl_x));
  CHECK(dnnl_dilated_convolution_forward_desc_init(
      &fd, dir == BENCH_DIR_FWD_D ? dnnl_forward_inference : dnnl_forward_training,
      dnnl_convolution_direct, &src_any, &wei_any, dir == BENCH_DIR_BWD_WB ? &bia_any : NULL,
      &dst_any, strides, dil, pad_l, pad_r));
  if (integer) {
    /* adnn-bench's integer layer: x's zero point, one output scale. */
    const float scale = (float)(1.0 / (64.0 * sqrt((double)(p->ic / p->g * p->kh * p->kw))));
    const int32_t zp = xt == dnnl_u8 ? 128 : 0;
    CHECK(dnnl_primitive_attr_create(&attr));
    CHECK(dnnl_primitive_attr_set_output_scales(attr, 1, 0, &scale));
    if (zp) CHECK(dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &zp));
  }
  CHECK(dnnl_primitive_desc_create(&fwd_pd, &fd, attr, eng, NULL));
  if (attr) dnnl_primitive_attr_destroy(attr);
  attr = NULL;
  if (dir == BENCH_DIR_BWD_D) {
    CHECK(dnnl_dilated_convolution_backward_data_desc_init(&cd, dnnl_convolution_direct,
                                                           &src_any, &wei_any, &dst_any, strides,
                                                           dil, pad_l, pad_r));
    CHECK(dnnl_primitive_desc_create(&pd, &cd, NULL, eng, fwd_pd));
  } else if (dir == BENCH_DIR_BWD_W || dir == BENCH_DIR_BWD_WB) {
    CHECK(dnnl_dilated_convolution_backward_weights_desc_init(
        &cd, dnnl_convolution_direct, &src_any, &wei_any,
        dir == BENCH_DIR_BWD_WB ? &bia_any : NULL, &dst_any, strides, dil, pad_l, pad_r));
    CHECK(dnnl_primitive_desc_create(&pd, &cd, NULL, eng, fwd_pd));
  } else {
    pd = fwd_pd;
    fwd_pd = NULL;
  }
  CHECK(dnnl_primitive_create(&prim, pd));
  double create_ms = peer_now_ms() - t0;
  dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
  conv_run r = {prim, stream, 3, {{0, NULL}}};
  if (dir == BENCH_DIR_BWD_D) {
    /* dy, w -> dx */
    CHECK(input_in(eng, stream, &dst_md, dst_n,
                   dnnl_primitive_desc_query_md(pd, dnnl_query_diff_dst_md, 0), &mem[0]));
    CHECK(input_in(eng, stream, &wei_md, wei_n,
                   dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), &mem[1]));
    CHECK(dnnl_memory_create(&mem[2], dnnl_primitive_desc_query_md(pd, dnnl_query_diff_src_md, 0),
                             eng, DNNL_MEMORY_ALLOCATE));
    r.args[0] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_DST, mem[0]};
    r.args[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, mem[1]};
    r.args[2] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_SRC, mem[2]};
  } else if (dir == BENCH_DIR_BWD_W || dir == BENCH_DIR_BWD_WB) {
    /* x, dy -> dw (, db) */
    CHECK(input_in(eng, stream, &src_md, src_n,
                   dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), &mem[0]));
    CHECK(input_in(eng, stream, &dst_md, dst_n,
                   dnnl_primitive_desc_query_md(pd, dnnl_query_diff_dst_md, 0), &mem[1]));
    CHECK(dnnl_memory_create(&mem[2],
                             dnnl_primitive_desc_query_md(pd, dnnl_query_diff_weights_md, 0), eng,
                             DNNL_MEMORY_ALLOCATE));
    r.args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, mem[0]};
    r.args[1] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_DST, mem[1]};
    r.args[2] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_WEIGHTS, mem[2]};
    if (dir == BENCH_DIR_BWD_WB) {
      CHECK(dnnl_memory_create(&mem[3],
                               dnnl_primitive_desc_query_md(pd, dnnl_query_diff_weights_md, 1),
                               eng, DNNL_MEMORY_ALLOCATE));
      r.args[3] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_BIAS, mem[3]};
      r.nargs = 4;
    }
  } else {
    /* x, w -> y */
    CHECK(input_in(eng, stream, &src_md, src_n,
                   dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), &mem[0]));
    CHECK(input_in(eng, stream, &wei_md, wei_n,
                   dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), &mem[1]));
    CHECK(dnnl_memory_create(&mem[2], dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), eng,
                             DNNL_MEMORY_ALLOCATE));
    r.args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, mem[0]};
    r.args[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, mem[1]};
    r.args[2] = (dnnl_exec_arg_t){DNNL_ARG_DST, mem[2]};
  }
  peer_timing t;
  if (peer_time(conv_exec, &r, &options, &t)) {
    snprintf(msg, sizeof msg, "execution failed");
    goto fail;
  }
  /* Every direction performs the forward's multiply-adds. */
  double gf = bench_problem_flops(p) / (t.median * 1e6);
  double gb = bench_problem_bytes(p, data_type == dnnl_f32 ? 4 : data_type == dnnl_bf16 ? 2 : 1) /
              (t.median * 1e6);
  peer_print_row(&options, text, "ok", impl, create_ms, &t, gf, gb, "");
  for (int i = 0; i < 4; i++)
    if (mem[i]) dnnl_memory_destroy(mem[i]);
  dnnl_primitive_destroy(prim);
  dnnl_primitive_desc_destroy(pd);
  if (fwd_pd) dnnl_primitive_desc_destroy(fwd_pd);
  return 0;
fail:
  if (attr) dnnl_primitive_attr_destroy(attr);
  peer_print_row(&options, text, "error", impl, NAN, NULL, 0, 0, msg);
  for (int i = 0; i < 4; i++)
    if (mem[i]) dnnl_memory_destroy(mem[i]);
  if (prim) dnnl_primitive_destroy(prim);
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (fwd_pd) dnnl_primitive_desc_destroy(fwd_pd);
  return 1;
}

static int gemm_exec(void *arg) {
  const peer_gemm *g = arg;
  const bench_problem *p = g->p;
  return dnnl_sgemm(p->ta ? 'T' : 'N', p->tb ? 'T' : 'N', p->m, p->n, p->k, 1.0f, g->a,
                    p->ta ? p->m : p->k, g->b, p->tb ? p->k : p->n, 0.0f, g->c, p->n) == dnnl_success
             ? 0
             : -1;
}

int main(int argc, char **argv) {
  bench_problem *list;
  size_t n;
  /* --dtype is this program's own option: taken out before the shared ones. */
  int kept = 0;
  for (int i = 0; i < argc; i++) {
    if (i > 0 && strncmp(argv[i], "--dtype=", 8) == 0) {
      const char *v = argv[i] + 8;
      if (!strcmp(v, "f32")) data_type = dnnl_f32;
      else if (!strcmp(v, "bf16")) data_type = dnnl_bf16;
      else if (!strcmp(v, "u8")) data_type = dnnl_u8;
      else if (!strcmp(v, "s8") || !strcmp(v, "i8")) data_type = dnnl_s8;
      else {
        fprintf(stderr, "conv-onednn: --dtype is f32, bf16, u8 or s8, not '%s'\n", v);
        return 2;
      }
      continue;
    }
    argv[kept++] = argv[i];
  }
  argc = kept;
  int rc = peer_read_command_line(argc, argv, &options, &list, &n);
  if (rc) return rc;
  dnnl_engine_t eng;
  dnnl_stream_t stream;
  if (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success ||
      dnnl_stream_create(&stream, eng, dnnl_stream_default_flags) != dnnl_success) {
    fprintf(stderr, "conv-onednn: cannot create a oneDNN CPU engine\n");
    return 1;
  }
  peer_print_header(&options);
  for (size_t i = 0; i < n; i++) {
    const bench_problem *p = &list[i];
    char text[512];
    bench_problem_format(p, text, sizeof text);
    if (p->op == BENCH_OP_CONV && data_type != dnnl_f32 && p->dir != BENCH_DIR_FWD_D)
      peer_print_row(&options, text, "unsupported", "", NAN, NULL, 0, 0,
                     "--dtype other than f32 is for forward convolutions");
    else if (p->op == BENCH_OP_GEMM && data_type != dnnl_f32)
      peer_print_row(&options, text, "unsupported", "", NAN, NULL, 0, 0,
                     "--dtype other than f32 is for forward convolutions");
    else if (p->op == BENCH_OP_CONV && p->beta != 0.0)
      peer_print_row(&options, text, "unsupported", "", NAN, NULL, 0, 0,
                     "oneDNN's backward convolutions do not accumulate (beta)");
    else if (p->op == BENCH_OP_CONV)
      rc |= run_conv(eng, stream, p, text);
    else if (p->op == BENCH_OP_GEMM)
      rc |= peer_run_gemm(&options, p, text, "dnnl_sgemm", gemm_exec);
    else
      peer_print_row(&options, text, "unsupported", "", NAN, NULL, 0, 0,
                     "conv-onednn runs conv and gemm only");
  }
  dnnl_stream_destroy(stream);
  dnnl_engine_destroy(eng);
  free(list);
  return rc;
}
