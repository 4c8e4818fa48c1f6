/*
 * matmul with low-precision inputs on the CPU ("lowp"): F16 and BF16 with
 * F32 accumulation, I8 x I8 and U8 x I8 with exact I32 accumulation
 * (adnn/ops.h, doc/ops.md "Matmul dtypes"), on the blocks of gemm_lowp.h.
 *
 * Tasks: every batch matrix's y is cut into tiles of at most
 * ADNN_CPU_LOWP_RM rows x ADNN_CPU_LOWP_NC columns, and the tiles of all
 * batch matrices are the tasks of one adnn_cpu_parallel_for. A task
 * computes its tile's accumulators (F32 or I32) into its thread's slice of
 * the workspace (sized at reshape: no allocation in run), then applies the
 * epilogue while the tile is in cache:
 *   float inputs:  y = act(alpha * acc + bias + residual_scale * r) in F32
 *                  with the F32 matmul's vector epilogue (the residual
 *                  widened first), then rounded once to y's dtype (bit for
 *                  bit kernels/common/float16.h's rounding);
 *   integer inputs: v = acc + bias (exact, 64-bit), then y = v saturated to
 *                  I32, or saturate(rne(v * scale[n]) + y_zero_point) in F64
 *                  for an I8/U8 y, exactly as the reference kernel does.
 * Any strides are accepted (the packers gather what is not contiguous), so
 * the reference is never needed for layout reasons. Deterministic: a tile's
 * sums are formed in the same order whichever thread runs it, and tiles do
 * not depend on the thread count.
 *
 * alpha = 0 reads neither a nor b (doc/ops.md); a residual scaled by 0 is
 * not read. The in-place residual (r is y) is read (a row chunk at a time)
 * right before those elements of y are written, by the one task that owns
 * them.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/common/float16.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/gemm_lowp.h"
#include "kernels/cpu/lowp.h"
#include "kernels/cpu/matmul_epilogue.h"
#include "kernels/ref/ref.h"

#define RM ADNN_CPU_LOWP_RM
#define NC ADNN_CPU_LOWP_NC

typedef struct lowp_state {
  const adnn_cpu_lowp_path *path;
  int64_t tm;               /* rows of a tile: RM, or fewer for small problems */
  int64_t tiles_m, tiles_n; /* per batch matrix */
  size_t slice;             /* workspace bytes per thread (64-byte multiple) */
  adnn_cpu_matmul_epilogue epi; /* the float epilogue's F32 vector code */
} lowp_state;

static int lowp_supports(const void *problem, const adnn_cpu_env *env, char *why,
                         size_t why_size) {
  const adnn_plugin_matmul *p = problem;
  if (adnn_cpu_lowp_choose(p->a.dtype, env->isa, env->features) == NULL) {
    snprintf(why, why_size, "no low-precision GEMM path for %s inputs at this instruction set "
             "(the F16/BF16 path needs AVX2+FMA and F16C)", adnn_plugin_dtype_name(p->a.dtype));
    return 0;
  }
  return 1;
}

static void lowp_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                         size_t *workspace_bytes) {
  const adnn_plugin_matmul *p = problem;
  lowp_state *s = state;
  s->path = adnn_cpu_lowp_choose(p->a.dtype, env->isa, env->features);
  adnn_cpu_matmul_epilogue_init(&s->epi, &p->activation, ADNN_DTYPE_F32, 0, env->isa);
  /* Tiles of RM rows, halved (down to 48, a multiple of every path's
   * microkernel rows) while there are fewer than two per thread: a 256^3
   * product would otherwise be one tile on one thread. Smaller tiles re-pack
   * B more often (once per tile), which costs less than an idle thread. */
  s->tiles_n = (p->N + NC - 1) / NC;
  s->tm = RM;
  const int64_t batch = p->batch0 * p->batch1;
  while (s->tm > 48 && batch * s->tiles_n * ((p->M + s->tm - 1) / s->tm) < 2 * env->threads)
    s->tm /= 2;
  s->tiles_m = (p->M + s->tm - 1) / s->tm;
  /* The C tile (F32 and I32 are both 4 bytes), then the packing scratch. */
  const size_t bytes = (size_t)RM * NC * 4 + adnn_cpu_lowp_thread_bytes(s->path);
  s->slice = (bytes + 63) / 64 * 64;
  *workspace_bytes = s->slice * (size_t)env->threads + 64;
}

typedef struct lowp_job {
  const adnn_plugin_matmul *p;
  const lowp_state *s;
  const void *a, *b, *bias, *r, *scales;
  void *y;
  char *work; /* 64-byte aligned */
} lowp_job;

static size_t elem_size(adnn_dtype t) {
  switch (t) {
    case ADNN_DTYPE_F64: return 8;
    case ADNN_DTYPE_F32:
    case ADNN_DTYPE_I32: return 4;
    case ADNN_DTYPE_F16:
    case ADNN_DTYPE_BF16: return 2;
    default: return 1;
  }
}

/* The float inputs' epilogue on one tile of y: rows x cols F32 accumulators
 * (row stride ldacc, rewritten in place) for the tile at (i0, j0) of batch
 * matrix (b0, b1) become y = act(alpha * acc + bias + residual_scale * r):
 * the F32 matmul's vector epilogue (kernels/cpu/matmul_epilogue.h, the
 * activation op's vector code) on each row in chunks of EPI_CHUNK, the
 * residual widened (or gathered) into a stack buffer first, then each row
 * rounded once into y's dtype with vector code where y's row is contiguous.
 * read_ab = 0 (alpha = 0) ignores acc. Shared by the tiled blocks and
 * widen_sgemm, so that both compute the same function. */
#define EPI_CHUNK 256

static void widen_row(adnn_dtype t, const void *base, int64_t off, int64_t stride, int64_t n,
                      float *dst) {
  if (t == ADNN_DTYPE_F32) {
    const float *src = (const float *)base + off;
    for (int64_t q = 0; q < n; q++) dst[q] = src[q * stride];
  } else {
    adnn_cpu_lowp_to_f32_strided(ADNN_CPU_ISA_AVX2, t, (const uint16_t *)base + off, stride, dst,
                                 (size_t)n);
  }
}

static void float_epilogue(const adnn_plugin_matmul *p, const adnn_cpu_lowp_path *path,
                           const adnn_cpu_matmul_epilogue *e, float *acc, int64_t ldacc,
                           int read_ab, const void *bias, const void *r, void *y, int64_t b0,
                           int64_t b1, int64_t i0, int64_t j0, int64_t rows, int64_t cols) {
  const int64_t *sy = p->y.strides, *sr = p->residual.strides;
  const int64_t oy = b0 * sy[0] + b1 * sy[1] + i0 * sy[2] + j0 * sy[3];
  const int64_t orr = r ? b0 * sr[0] + b1 * sr[1] + i0 * sr[2] + j0 * sr[3] : 0;
  const adnn_dtype yt = p->y.dtype;
  const float alpha = (float)p->alpha;
  const int64_t bs = p->bias.strides[0];
  const int active = bias || r || p->activation.kind != ADNN_ACTIVATION_IDENTITY;
  float bbuf[EPI_CHUNK], rbuf[EPI_CHUNK];
  for (int64_t i = 0; i < rows; i++) {
    float *ai = acc + i * ldacc;
    if (!read_ab)
      memset(ai, 0, (size_t)cols * sizeof(float));
    else if (alpha != 1.0f)
      for (int64_t q = 0; q < cols; q++) ai[q] *= alpha;
    for (int64_t q0 = 0; q0 < cols; q0 += EPI_CHUNK) {
      const int64_t len = cols - q0 < EPI_CHUNK ? cols - q0 : EPI_CHUNK;
      float *aq = ai + q0;
      if (active) {
        const float *bq = NULL, *rq = NULL;
        if (bias && bs == 1) {
          bq = (const float *)bias + j0 + q0;
        } else if (bias) {
          for (int64_t q = 0; q < len; q++) bbuf[q] = ((const float *)bias)[(j0 + q0 + q) * bs];
          bq = bbuf;
        }
        if (r) {
          /* Read before this row of y is written: the in-place residual. */
          widen_row(p->residual.dtype, r, orr + i * sr[2] + q0 * sr[3], sr[3], len, rbuf);
          rq = rbuf;
        }
        e->f32(&p->activation, aq, ldacc, 1, len, bq, NULL, rq, 0, 1, (float)p->residual_scale);
      }
      const int64_t o = oy + i * sy[2] + q0 * sy[3];
      if (yt == ADNN_DTYPE_F32) {
        float *yq = (float *)y + o;
        if (yq == aq) continue; /* widen_sgemm's C is y itself */
        for (int64_t q = 0; q < len; q++) yq[q * sy[3]] = aq[q];
      } else if (sy[3] == 1) {
        adnn_cpu_lowp_narrow(path, yt, aq, len, (uint16_t *)y + o);
      } else {
        /* Rounded with vector code, then scattered (a transposed y, or an
         * NCHW convolution output through conv2d-lowp.c's matmul route). */
        adnn_cpu_lowp_from_f32_strided(ADNN_CPU_ISA_AVX2, yt, aq, (uint16_t *)y + o, sy[3],
                                       (size_t)len);
      }
    }
  }
}

/* The integer inputs' epilogue on one tile: rows x cols I32 accumulators
 * (row stride NC) become y = saturate(acc + bias) (I32 y), or
 * saturate(rne((acc + bias) * scale[n]) + y_zero_point) in F64 (I8/U8 y),
 * bit for bit the reference kernel's definition (kernels/ref/matmul.c).
 * The common I32 y without bias whose rows are contiguous is a copy. */
static void int_epilogue(const adnn_plugin_matmul *p, const int32_t *acc, const int32_t *bias,
                         const float *scales, void *y, int64_t oy, int64_t j0, int64_t rows,
                         int64_t cols) {
  const adnn_dtype yt = p->y.dtype;
  const int64_t *sy = p->y.strides;
  const int requant = yt == ADNN_DTYPE_I8 || yt == ADNN_DTYPE_U8;
  const int64_t lo = yt == ADNN_DTYPE_I8 ? -128 : requant ? 0 : INT32_MIN;
  const int64_t hi = yt == ADNN_DTYPE_I8 ? 127 : requant ? 255 : INT32_MAX;
  const int64_t bs = p->bias.strides[0], ss = p->requant_scales.strides[0];
  for (int64_t i = 0; i < rows; i++) {
    const int32_t *a = acc + i * NC;
    const int64_t off = oy + i * sy[2];
    if (!requant) {
      int32_t *yr = (int32_t *)y + off;
      if (!bias && sy[3] == 1) {
        memcpy(yr, a, (size_t)cols * sizeof(int32_t));
        continue;
      }
      for (int64_t q = 0; q < cols; q++) {
        int64_t v = (int64_t)a[q] + (bias ? bias[(j0 + q) * bs] : 0);
        yr[q * sy[3]] = (int32_t)(v < lo ? lo : v > hi ? hi : v);
      }
      continue;
    }
    for (int64_t q = 0; q < cols; q++) {
      const int64_t v = (int64_t)a[q] + (bias ? bias[(j0 + q) * bs] : 0);
      const double scale = scales ? (double)scales[(j0 + q) * ss] : p->requant_scale;
      const int64_t r = adnn_cpu_lowp_requant(v, scale, p->y_zero_point, lo, hi);
      if (yt == ADNN_DTYPE_I8)
        ((int8_t *)y)[off + q * sy[3]] = (int8_t)r;
      else
        ((uint8_t *)y)[off + q * sy[3]] = (uint8_t)r;
    }
  }
}

static void run_tile(const lowp_job *j, int64_t t, int thread) {
  const adnn_plugin_matmul *p = j->p;
  const lowp_state *s = j->s;
  const int64_t per = s->tiles_m * s->tiles_n, bt = t / per, tile = t % per;
  const int64_t b0 = bt / p->batch1, b1 = bt % p->batch1;
  const int64_t i0 = tile / s->tiles_n * s->tm, j0 = tile % s->tiles_n * NC;
  const int64_t rows = p->M - i0 < s->tm ? p->M - i0 : s->tm;
  const int64_t cols = p->N - j0 < NC ? p->N - j0 : NC;
  const int64_t *sa = p->a.strides, *sb = p->b.strides, *sy = p->y.strides;
  const int64_t oa = b0 * sa[0] + b1 * sa[1] + i0 * sa[2];
  const int64_t ob = b0 * sb[0] + b1 * sb[1] + j0 * sb[3];
  const int64_t oy = b0 * sy[0] + b1 * sy[1] + i0 * sy[2] + j0 * sy[3];
  char *slice = j->work + s->slice * (size_t)thread;
  void *c = slice, *scratch = slice + (size_t)RM * NC * 4;
  const int integer = s->path->kind == ADNN_CPU_LOWP_INT8;
  const int read_ab = integer || p->alpha != 0.0;
  if (read_ab)
    s->path->block(s->path, p->a.dtype, p->b.dtype,
                   (const char *)j->a + (size_t)oa * elem_size(p->a.dtype), sa[2], sa[3],
                   (const char *)j->b + (size_t)ob * elem_size(p->b.dtype), sb[2], sb[3], rows,
                   cols, p->K, c, NC, scratch);
  if (integer) {
    int_epilogue(p, c, j->bias, j->scales, j->y, oy, j0, rows, cols);
    return;
  }
  float_epilogue(p, s->path, &s->epi, c, NC, read_ab, j->bias, j->r, j->y, b0, b1, i0, j0, rows,
                 cols);
}

static void lowp_task(void *arg, int64_t t0, int64_t t1, int thread) {
  for (int64_t t = t0; t < t1; t++) run_tile(arg, t, thread);
}

/* Inputs {a, b[, bias][, r][, requant_scales]}, outputs {y}. */
static void lowp_run(const void *problem, const void *state, const void *const *inputs,
                     void *const *outputs, void *workspace) {
  const adnn_plugin_matmul *p = problem;
  const lowp_state *s = state;
  lowp_job j = {p, s, inputs[0], inputs[1], NULL, NULL, NULL, outputs[0], NULL};
  if (p->has_bias) j.bias = inputs[2];
  if (p->has_residual && p->residual_scale != 0.0) j.r = inputs[2 + p->has_bias];
  if (p->has_requant_scales) j.scales = inputs[2 + p->has_bias + p->has_residual];
  j.work = (char *)(((uintptr_t)workspace + 63) / 64 * 64);
  const int64_t total = p->batch0 * p->batch1 * s->tiles_m * s->tiles_n;
  adnn_cpu_parallel_for(total, 1, lowp_task, &j);
}

const adnn_cpu_impl adnn_cpu_matmul_lowp = {
    .name = "lowp",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F16) | ADNN_OP_DTYPE(ADNN_DTYPE_BF16) |
              ADNN_OP_DTYPE(ADNN_DTYPE_I8) | ADNN_OP_DTYPE(ADNN_DTYPE_U8),
    .supports = lowp_supports,
    .state_size = sizeof(lowp_state),
    .reshape = lowp_reshape,
    .run = lowp_run,
};

/* ---- widen_sgemm: F16/BF16 widened whole, then the plugin's SGEMM ---------
 *
 * The tiled blocks above widen each B element once per 384 rows of y and
 * each A element once per 256 columns, and run the F32 microkernel with
 * their own fixed blocking; on an AVX2-only CPU that cost 13-27 % of the F32
 * path's speed on BERT's shapes (doc/performance.md). widen_sgemm widens
 * each batch matrix's a and b ONCE, whole, into F32 copies in the plan's
 * workspace (exact, vector code on contiguous runs, threaded over rows),
 * then runs the one SGEMM entry point every F32 op uses (adnn_cpu_sgemm_ws:
 * the engine with its cache-derived blocking, or OpenBLAS where the
 * dispatcher measured it faster) on them with alpha = 1, and its per-tile
 * store hook applies float_epilogue to each finished tile of C while it is
 * in cache: the same epilogue (F32 vector code, one rounding into y) as the
 * tiled blocks. The widening is O(MK + KN) against the GEMM's O(MNK).
 *
 * C is an F32 buffer in the workspace, except when y itself is F32 with unit
 * column stride and is not also the residual: then the SGEMM writes y and
 * the hook rewrites each tile in place (or, for the plain product, no hook).
 * The widened copies keep the operand's orientation: a row-contiguous a
 * (unit column stride) is widened row by row into an M x K copy (op = none),
 * a column-contiguous one column by column into K x M (op = transpose),
 * likewise b; any other strides are gathered into the row-major form. A b
 * (or a) that every batch matrix shares (batch strides 0) is widened once.
 *
 * Batch matrices run one after the other, each SGEMM threaded over the pool
 * (the tiled lowp is the better choice for many small matrices: its tasks
 * span the batch, see widen_preferred). Deterministic: the SGEMM forms every
 * sum in the same order whatever the thread count (gemm.h), and widening and
 * the epilogue are elementwise. alpha = 0 reads neither a nor b (the SGEMM's
 * k = 0 case, then the hook); the workspace is sized at reshape, so run
 * allocates nothing. */

/* The most workspace widen_sgemm asks for: the tuner's default workspace
 * limit (adnn/tuning.h), 256 MiB, enough for a 4096^3 product (three 64 MiB
 * copies). Larger problems are left to the tiled blocks, whose workspace
 * does not grow with the operands. */
#define WIDEN_MAX_BYTES ((size_t)256 << 20)

typedef struct widen_operand {
  int trans;          /* the copy is the transpose (K x M for a, N x K for b) */
  int64_t ld;         /* its row stride in floats */
  int64_t lines, len; /* rows of the copy and their length */
  int64_t line_stride, elem_stride; /* in the source, in elements */
  int shared;         /* batch strides 0: widened once for every batch matrix */
  size_t off;         /* its offset in the workspace */
} widen_operand;

typedef struct widen_state {
  const adnn_cpu_lowp_path *path;
  int isa;
  int c_is_y; /* the SGEMM writes y directly */
  widen_operand a, b;
  size_t c_off, pack_off, pack_bytes;
  int threads;
  int64_t bytes; /* the whole workspace, for supports() */
  adnn_cpu_matmul_epilogue epi;
} widen_state;

/* The copy of an R x S operand (rows R, columns S, element strides rs, cs):
 * row by row when its columns are contiguous (or nothing is), else column by
 * column. */
static void widen_layout(widen_operand *o, int64_t R, int64_t S, int64_t rs, int64_t cs,
                         const int64_t *batch_strides) {
  o->trans = cs != 1 && rs == 1 && R > 1;
  o->lines = o->trans ? S : R;
  o->len = o->trans ? R : S;
  o->ld = o->len;
  o->line_stride = o->trans ? cs : rs;
  o->elem_stride = o->trans ? rs : cs;
  o->shared = batch_strides[0] == 0 && batch_strides[1] == 0;
}

static size_t round64(size_t n) { return (n + 63) / 64 * 64; }

static void widen_plan(const adnn_plugin_matmul *p, const adnn_cpu_env *env, widen_state *s) {
  memset(s, 0, sizeof *s);
  s->path = adnn_cpu_lowp_choose(p->a.dtype, env->isa, env->features);
  s->isa = env->isa;
  s->threads = env->threads;
  adnn_cpu_matmul_epilogue_init(&s->epi, &p->activation, ADNN_DTYPE_F32, 0, env->isa);
  widen_layout(&s->a, p->M, p->K, p->a.strides[2], p->a.strides[3], p->a.strides);
  widen_layout(&s->b, p->K, p->N, p->b.strides[2], p->b.strides[3], p->b.strides);
  const int r_is_y = p->has_residual && p->residual.dtype == p->y.dtype &&
                     memcmp(p->residual.strides, p->y.strides, sizeof p->y.strides) == 0;
  /* r may be y only when it has y's dtype and strides (the core refuses a
   * partial overlap); such a plan gets its own C whether or not the caller
   * passes y as r, so that the residual is read before y is written. */
  s->c_is_y = p->y.dtype == ADNN_DTYPE_F32 && p->y.strides[3] == 1 && !r_is_y &&
              (p->M == 1 || p->y.strides[2] >= p->N);
  size_t off = 0;
  s->a.off = off;
  off += round64((size_t)p->M * (size_t)p->K * sizeof(float));
  s->b.off = off;
  off += round64((size_t)p->K * (size_t)p->N * sizeof(float));
  s->c_off = off;
  if (!s->c_is_y) off += round64((size_t)p->M * (size_t)p->N * sizeof(float));
  s->pack_off = off;
  s->pack_bytes = adnn_cpu_sgemm_pack_bytes(env->isa, p->M, p->N, p->K);
  off += s->pack_bytes * (size_t)env->threads;
  s->bytes = (int64_t)off;
}

static int widen_supports(const void *problem, const adnn_cpu_env *env, char *why,
                          size_t why_size) {
  const adnn_plugin_matmul *p = problem;
  if (p->a.dtype != ADNN_DTYPE_F16 && p->a.dtype != ADNN_DTYPE_BF16) {
    snprintf(why, why_size, "widens F16/BF16 inputs only");
    return 0;
  }
  if (!lowp_supports(problem, env, why, why_size)) return 0;
  if (!adnn_cpu_sgemm_engine_isa(env->isa)) {
    snprintf(why, why_size, "needs the GEMM engine's AVX2+FMA or AVX-512 microkernel");
    return 0;
  }
  /* Sizes below 2^31 (the SGEMM's contract); the workspace bounded. */
  if (p->M >= INT32_MAX || p->N >= INT32_MAX || p->K >= INT32_MAX) {
    snprintf(why, why_size, "a side of 2^31 or more");
    return 0;
  }
  widen_state s;
  widen_plan(p, env, &s);
  if ((size_t)s.bytes > WIDEN_MAX_BYTES) {
    snprintf(why, why_size, "its F32 copies would need %lld bytes of workspace (at most %zu)",
             (long long)s.bytes, WIDEN_MAX_BYTES);
    return 0;
  }
  return 1;
}

/* Without the tuner: widen_sgemm where the SGEMM dispatcher would hand the
 * F32 product to OpenBLAS (its AVX kernels on the large shapes, gemm.c), the
 * tiled blocks everywhere else. Measured on an AVX2 EPYC (doc/performance.md,
 * 2026-12-03, the tuner's candidate times): from 1024^3 up widen_sgemm was
 * faster (1024^3 BF16 15.1 ms against 18.4 ms; BERT's FFN-up 65.0 against
 * 72.8), at 256^3-512^3 the two were within noise, and on many small batch
 * matrices the tiled blocks were 2-5x faster (12 x 128 x 128 x 64: 0.26-0.34
 * ms against 0.80-1.32; one SGEMM per matrix cannot fill the pool). Never
 * where `lowp` multiplies the 16-bit values themselves (avx512_bf16):
 * measured 2026-12-03 on a Zen 4 EPYC with AVX-512-BF16, 2048^3 BF16 ran in
 * 51 ms there against 91 ms through widen_sgemm. */
static int widen_preferred(const void *problem, const adnn_cpu_env *env) {
  const adnn_plugin_matmul *p = problem;
  widen_state s;
  widen_plan(p, env, &s);
  /* A path that multiplies the 16-bit values themselves (avx512_bf16: twice
   * the F32 kernel's multiply-adds per instruction) beats any F32 SGEMM. */
  if (s.path == NULL || !adnn_cpu_lowp_widens(s.path)) return 0;
  return adnn_cpu_sgemm_choose(env->isa, s.a.trans, s.b.trans, p->M, p->N, p->K) ==
         ADNN_CPU_SGEMM_OPENBLAS;
}

static void widen_reshape(const void *problem, const adnn_cpu_env *env, void *state,
                          size_t *workspace_bytes) {
  widen_state *s = state;
  widen_plan(problem, env, s);
  *workspace_bytes = (size_t)s->bytes;
}

typedef struct widen_job {
  const widen_operand *o;
  adnn_dtype t;
  int isa;
  const uint16_t *src; /* this batch matrix's first element */
  float *dst;
} widen_job;

static void widen_task(void *arg, int64_t l0, int64_t l1, int thread) {
  const widen_job *w = arg;
  const widen_operand *o = w->o;
  (void)thread;
  for (int64_t l = l0; l < l1; l++) {
    const uint16_t *src = w->src + l * o->line_stride;
    float *dst = w->dst + l * o->ld;
    adnn_cpu_lowp_to_f32_strided(w->isa, w->t, src, o->elem_stride, dst, (size_t)o->len);
  }
}

static void widen_operand_run(const widen_state *s, const widen_operand *o, adnn_dtype t,
                              const uint16_t *src, float *dst) {
  widen_job w = {o, t, s->isa, src, dst};
  /* About 16 K elements a task: enough to amortize the pool's hand-off. */
  const int64_t grain = o->len >= 16384 ? 1 : 16384 / o->len;
  adnn_cpu_parallel_for(o->lines, grain, widen_task, &w);
}

typedef struct widen_hook_arg {
  const adnn_plugin_matmul *p;
  const adnn_cpu_lowp_path *path;
  const adnn_cpu_matmul_epilogue *epi;
  int read_ab;
  const void *bias, *r;
  void *y;
  int64_t b0, b1;
  float *c; /* C and its row stride, for widen_epilogue_task */
  int64_t ldc;
} widen_hook_arg;

static void widen_hook(const void *arg, float *c, int64_t ldc, int64_t row0, int64_t col0,
                       int64_t rows, int64_t cols) {
  const widen_hook_arg *h = arg;
  float_epilogue(h->p, h->path, h->epi, c, ldc, h->read_ab, h->bias, h->r, h->y, h->b0, h->b1, row0,
                 col0, rows, cols);
}

/* The epilogue as its own pass, rows [i0, i1) of C. */
static void widen_epilogue_task(void *arg, int64_t i0, int64_t i1, int thread) {
  const widen_hook_arg *h = arg;
  (void)thread;
  float_epilogue(h->p, h->path, h->epi, h->c + i0 * h->ldc, h->ldc, h->read_ab, h->bias, h->r, h->y,
                 h->b0, h->b1, i0, 0, i1 - i0, h->p->N);
}

/* Inputs {a, b[, bias][, r]}, outputs {y}. */
static void widen_run(const void *problem, const void *state, const void *const *inputs,
                      void *const *outputs, void *workspace) {
  const adnn_plugin_matmul *p = problem;
  const widen_state *s = state;
  const void *bias = p->has_bias ? inputs[2] : NULL;
  const void *r = p->has_residual && p->residual_scale != 0.0 ? inputs[2 + p->has_bias] : NULL;
  char *ws = workspace;
  float *A = (float *)(ws + s->a.off), *B = (float *)(ws + s->b.off);
  const int read_ab = p->alpha != 0.0;
  const int plain = read_ab && p->alpha == 1.0 && !bias && !r &&
                    p->activation.kind == ADNN_ACTIVATION_IDENTITY;
  const adnn_cpu_gemm_pack pack = {ws + s->pack_off, s->pack_bytes, s->threads};
  const int64_t *sa = p->a.strides, *sb = p->b.strides, *sy = p->y.strides;
  for (int64_t bt = 0; bt < p->batch0 * p->batch1; bt++) {
    const int64_t b0 = bt / p->batch1, b1 = bt % p->batch1;
    if (read_ab) {
      if (bt == 0 || !s->a.shared)
        widen_operand_run(s, &s->a, p->a.dtype,
                          (const uint16_t *)inputs[0] + b0 * sa[0] + b1 * sa[1], A);
      if (bt == 0 || !s->b.shared)
        widen_operand_run(s, &s->b, p->b.dtype,
                          (const uint16_t *)inputs[1] + b0 * sb[0] + b1 * sb[1], B);
    }
    float *C;
    int64_t ldc;
    if (s->c_is_y) {
      C = (float *)outputs[0] + b0 * sy[0] + b1 * sy[1];
      ldc = p->M == 1 ? p->N : sy[2];
    } else {
      C = (float *)(ws + s->c_off);
      ldc = p->N;
    }
    const widen_hook_arg h = {p, s->path, &s->epi, read_ab, bias, r, outputs[0], b0, b1, C, ldc};
    const adnn_cpu_gemm_epilogue hook = {widen_hook, &h};
    const int64_t k = read_ab ? p->K : 0;
    const int need_epilogue = !(s->c_is_y && plain);
    const adnn_cpu_sgemm_impl impl =
        adnn_cpu_sgemm_choose(s->isa, s->a.trans, s->b.trans, p->M, p->N, k);
    /* OpenBLAS runs a hook on the calling thread after the whole product
     * (gemm.c): the epilogue is then one pass over C on the pool instead. */
    const int hooked = need_epilogue && impl == ADNN_CPU_SGEMM_ENGINE;
    adnn_cpu_sgemm_with(impl, s->isa, s->a.trans, s->b.trans, p->M, p->N, k, 1.0f, A, s->a.ld,
                        B, s->b.ld, 0.0f, C, ldc, hooked ? &hook : NULL, &pack);
    if (need_epilogue && !hooked) adnn_cpu_parallel_for(p->M, 8, widen_epilogue_task, (void *)&h);
  }
}

const adnn_cpu_impl adnn_cpu_matmul_widen_sgemm = {
    .name = "widen_sgemm",
    .flags = ADNN_CPU_IMPL_DETERMINISTIC,
    .dtypes = ADNN_OP_DTYPE(ADNN_DTYPE_F16) | ADNN_OP_DTYPE(ADNN_DTYPE_BF16),
    .supports = widen_supports,
    .preferred = widen_preferred,
    .state_size = sizeof(widen_state),
    .reshape = widen_reshape,
    .run = widen_run,
};
