/* GEMM on the cpu backend against a plain reference loop in double precision.
 *
 * Every case runs through adnn_malloc'd buffers laid out exactly as described
 * by the leading dimensions and batch strides. Elements of A and B that are not
 * part of any matrix (row padding, gaps between batch entries) hold NaN, so a
 * GEMM that reads them fails. Elements of C that are not part of any output hold
 * a sentinel that must survive bit for bit; the outputs themselves start as NaN
 * when beta == 0 (C must not be read) and as seeded random values otherwise.
 *
 * Tolerance, per element (i, j):
 *     |got - ref| <= 2 * (k + 4) * eps * (|alpha| * sum_p |a_ip * b_pj| + |beta * c_ij|)
 * where eps is the machine epsilon of the dtype (FLT_EPSILON, DBL_EPSILON) and
 * ref is computed in double from the very values stored in the buffers. The
 * classical bound for a k-term dot product in working precision is
 * gamma_k ~ k * eps / 2 times the sum of absolute products; alpha and beta add
 * two roundings each. 2 * (k + 4) * eps keeps a 4x margin for blocked and FMA
 * kernels, which meet that bound, while a wrong or missing term (error of the
 * order of one |a*b|, i.e. ~ sum / k) is still about 1e3..1e6 times too large
 * to pass. alpha and beta are exactly representable in both dtypes.
 *
 * The backend defaults to "cpu"; ADNN_TEST_GEMM_BACKEND may name another one
 * (the same checks then run on it, e.g. "cuda").
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "t/tap.h"

#define SENTINEL (-31337.5)
#define GUARD 9 /* extra elements after every buffer */

static adnn_context *ctx;
static uint64_t seed_counter = 1;

typedef struct gcase {
  adnn_dtype dtype;
  adnn_transpose ta, tb;
  int64_t m, n, k;
  double alpha, beta;
  int64_t lda, ldb, ldc; /* 0: the minimum (row length) */
  int64_t batch;         /* 0: single adnn_gemm; >= 1: adnn_gemm_batched */
  int64_t sa, sb, sc;    /* batch strides; -1: packed one after another */
  int null_ab;           /* pass NULL for A and B (valid when they span nothing) */
  const char *note;
} gcase;

static int64_t span_of(int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride) {
  if (rows == 0 || cols == 0 || batch == 0) return 0;
  return (batch - 1) * stride + (rows - 1) * ld + cols;
}

/* Host mirror of a device buffer, kept in double; `member` marks the elements
 * that belong to some matrix. */
typedef struct hbuf {
  int64_t len;
  double *v;
  char *member;
} hbuf;

static void hbuf_init(hbuf *h, int64_t len) {
  h->len = len;
  h->v = calloc((size_t)len, sizeof *h->v);
  h->member = calloc((size_t)len, 1);
}

static void hbuf_free(hbuf *h) {
  free(h->v);
  free(h->member);
}

static double rnd(tap_rng *r, adnn_dtype t) {
  double x = tap_rng_uniform(r, -1.0, 1.0);
  return t == ADNN_DTYPE_F32 ? (double)(float)x : x;
}

static void mark(hbuf *h, int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride) {
  for (int64_t b = 0; b < batch; b++)
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) h->member[b * stride + i * ld + j] = 1;
}

static size_t esize(adnn_dtype t) { return t == ADNN_DTYPE_F32 ? 4 : 8; }

static void *to_device(const hbuf *h, adnn_dtype t) {
  void *d = NULL;
  size_t bytes = (size_t)h->len * esize(t);
  if (adnn_malloc(ctx, bytes, &d) != ADNN_STATUS_SUCCESS) return NULL;
  void *tmp = malloc(bytes);
  for (int64_t i = 0; i < h->len; i++) {
    if (t == ADNN_DTYPE_F32) ((float *)tmp)[i] = (float)h->v[i];
    else ((double *)tmp)[i] = h->v[i];
  }
  adnn_status st = adnn_memcpy(ctx, d, tmp, bytes, ADNN_MEMCPY_HOST_TO_DEVICE);
  free(tmp);
  if (st != ADNN_STATUS_SUCCESS) {
    adnn_free(ctx, d);
    return NULL;
  }
  return d;
}

static double *from_device(const void *d, int64_t len, adnn_dtype t) {
  size_t bytes = (size_t)len * esize(t);
  void *tmp = malloc(bytes);
  double *out = malloc((size_t)len * sizeof *out);
  if (adnn_memcpy(ctx, tmp, d, bytes, ADNN_MEMCPY_DEVICE_TO_HOST) != ADNN_STATUS_SUCCESS ||
      adnn_context_synchronize(ctx) != ADNN_STATUS_SUCCESS) {
    free(tmp);
    free(out);
    return NULL;
  }
  for (int64_t i = 0; i < len; i++)
    out[i] = t == ADNN_DTYPE_F32 ? (double)((float *)tmp)[i] : ((double *)tmp)[i];
  free(tmp);
  return out;
}

static void run(const gcase *g0) {
  gcase g = *g0;
  adnn_dtype t = g.dtype;
  int64_t a_rows = g.ta ? g.k : g.m, a_cols = g.ta ? g.m : g.k;
  int64_t b_rows = g.tb ? g.n : g.k, b_cols = g.tb ? g.k : g.n;
  int64_t lda = g.lda ? g.lda : (a_cols > 0 ? a_cols : 1);
  int64_t ldb = g.ldb ? g.ldb : (b_cols > 0 ? b_cols : 1);
  int64_t ldc = g.ldc ? g.ldc : (g.n > 0 ? g.n : 1);
  int64_t batch = g.batch ? g.batch : 1;
  int64_t sa = g.sa >= 0 ? g.sa : span_of(a_rows, a_cols, lda, 1, 0);
  int64_t sb = g.sb >= 0 ? g.sb : span_of(b_rows, b_cols, ldb, 1, 0);
  int64_t sc = g.sc >= 0 ? g.sc : span_of(g.m, g.n, ldc, 1, 0);
  if (g.batch == 0) sa = sb = sc = 0;

  char label[256];
  snprintf(label, sizeof label, "%s %s%s m=%lld n=%lld k=%lld alpha=%g beta=%g lda=%lld ldb=%lld "
           "ldc=%lld%s%s",
           adnn_dtype_name(t), g.ta ? "T" : "N", g.tb ? "T" : "N", (long long)g.m,
           (long long)g.n, (long long)g.k, g.alpha, g.beta, (long long)lda, (long long)ldb,
           (long long)ldc, g.note ? " " : "", g.note ? g.note : "");
  if (g.batch) {
    size_t used = strlen(label);
    snprintf(label + used, sizeof label - used, " batch=%lld strides=%lld/%lld/%lld",
             (long long)g.batch, (long long)sa, (long long)sb, (long long)sc);
  }

  tap_rng r = tap_rng_seed(seed_counter++);
  hbuf A, B, C;
  hbuf_init(&A, span_of(a_rows, a_cols, lda, batch, sa) + GUARD);
  hbuf_init(&B, span_of(b_rows, b_cols, ldb, batch, sb) + GUARD);
  hbuf_init(&C, span_of(g.m, g.n, ldc, batch, sc) + GUARD);
  mark(&A, a_rows, a_cols, lda, batch, sa);
  mark(&B, b_rows, b_cols, ldb, batch, sb);
  mark(&C, g.m, g.n, ldc, batch, sc);
  for (int64_t i = 0; i < A.len; i++) A.v[i] = A.member[i] ? rnd(&r, t) : NAN;
  for (int64_t i = 0; i < B.len; i++) B.v[i] = B.member[i] ? rnd(&r, t) : NAN;
  for (int64_t i = 0; i < C.len; i++)
    C.v[i] = !C.member[i] ? SENTINEL : g.beta == 0.0 ? NAN : rnd(&r, t);

  /* Reference and per-element tolerance. */
  double eps = t == ADNN_DTYPE_F32 ? FLT_EPSILON : DBL_EPSILON;
  double *ref = malloc((size_t)C.len * sizeof *ref), *tol = malloc((size_t)C.len * sizeof *tol);
  for (int64_t i = 0; i < C.len; i++) ref[i] = C.v[i], tol[i] = 0;
  for (int64_t bi = 0; bi < batch; bi++)
    for (int64_t i = 0; i < g.m; i++)
      for (int64_t j = 0; j < g.n; j++) {
        double s = 0, sabs = 0;
        for (int64_t p = 0; p < g.k; p++) {
          double av = A.v[bi * sa + (g.ta ? p * lda + i : i * lda + p)];
          double bv = B.v[bi * sb + (g.tb ? j * ldb + p : p * ldb + j)];
          s += av * bv;
          sabs += fabs(av * bv);
        }
        int64_t ci = bi * sc + i * ldc + j;
        double c0 = g.beta == 0.0 ? 0.0 : C.v[ci];
        ref[ci] = g.alpha * s + g.beta * c0;
        tol[ci] = 2.0 * (double)(g.k + 4) * eps * (fabs(g.alpha) * sabs + fabs(g.beta * c0));
      }

  void *da = to_device(&A, t), *db = to_device(&B, t), *dc = to_device(&C, t);
  if (!da || !db || !dc) {
    ok(0, "%s: allocate and upload buffers (%s)", label, adnn_last_error());
  } else {
    const void *pa = g.null_ab ? NULL : da, *pb = g.null_ab ? NULL : db;
    adnn_status st =
        g.batch ? adnn_gemm_batched(ctx, t, g.ta, g.tb, g.m, g.n, g.k, g.alpha, pa, lda, pb, ldb,
                                    g.beta, dc, ldc, g.batch, sa, sb, sc)
                : adnn_gemm(ctx, t, g.ta, g.tb, g.m, g.n, g.k, g.alpha, pa, lda, pb, ldb, g.beta,
                            dc, ldc);
    if (st != ADNN_STATUS_SUCCESS) {
      is_status(st, ADNN_STATUS_SUCCESS, "%s", label);
    } else {
      double *got = from_device(dc, C.len, t);
      if (got == NULL) {
        ok(0, "%s: read back C (%s)", label, adnn_last_error());
        goto done;
      }
      int64_t bad = 0, first = -1, worst = -1;
      double worst_ratio = 0;
      for (int64_t i = 0; i < C.len; i++) {
        int good;
        if (!C.member[i]) {
          good = memcmp(&got[i], &ref[i], sizeof got[i]) == 0;
        } else {
          double err = fabs(got[i] - ref[i]);
          good = err <= tol[i]; /* false for NaN */
          double ratio = tol[i] > 0 ? err / tol[i] : (err > 0 ? INFINITY : 0);
          if (!(ratio <= worst_ratio)) worst_ratio = ratio, worst = i;
        }
        if (!good) {
          if (first < 0) first = i;
          bad++;
        }
      }
      if (!ok(bad == 0, "%s", label)) {
        int64_t e = first;
        diag("  %lld of %lld elements wrong; first at offset %lld (%s): got %.17g, expected "
             "%.17g, tolerance %.3g", (long long)bad, (long long)C.len, (long long)e,
             C.member[e] ? "output" : "padding, must be untouched", got[e], ref[e], tol[e]);
      } else if (worst >= 0 && worst_ratio > 0.25) {
        diag("  worst error is %.3f of the tolerance", worst_ratio);
      }
      free(got);
    }
  }
done:
  adnn_free(ctx, da);
  adnn_free(ctx, db);
  adnn_free(ctx, dc);
  free(ref);
  free(tol);
  hbuf_free(&A);
  hbuf_free(&B);
  hbuf_free(&C);
}

static const adnn_dtype dtypes[2] = {ADNN_DTYPE_F32, ADNN_DTYPE_F64};

int main(void) {
  const char *backend = getenv("ADNN_TEST_GEMM_BACKEND");
  if (backend == NULL || *backend == '\0') backend = "cpu";
  adnn_status st = adnn_context_create(backend, &ctx);
  if (st != ADNN_STATUS_SUCCESS) {
    if (strcmp(backend, "cpu") != 0) {
      char why[1200];
      snprintf(why, sizeof why, "backend %s: %s", backend, adnn_last_error());
      return tap_skip_all(why);
    }
    is_status(st, ADNN_STATUS_SUCCESS, "create a cpu context");
    return tap_done();
  }
  is_str(adnn_context_get_backend(ctx), backend, "context runs on %s", backend);

  /* Shapes x all four transpose combinations x both dtypes, packed. */
  static const int64_t shapes[][3] = {
      {1, 1, 1}, {1, 9, 4}, {6, 1, 5}, {3, 4, 1}, {7, 13, 5}, {33, 17, 65},
      {2, 64, 31}, {64, 3, 2}, {17, 17, 17}, {45, 70, 38}, {128, 96, 80}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int d = 0; d < 2; d++)
      for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
          gcase g = {.dtype = dtypes[d], .ta = ta, .tb = tb, .m = shapes[s][0],
                     .n = shapes[s][1], .k = shapes[s][2], .alpha = 1.0, .beta = 0.0,
                     .sa = -1, .sb = -1, .sc = -1};
          run(&g);
          g.alpha = -0.75;
          g.beta = 1.25;
          run(&g);
        }

  /* alpha/beta combinations, including alpha 0 (C = beta*C) and both 0. */
  static const double ab[][2] = {{1, 1},    {2, -1},   {0.5, 0.25}, {0, 0.5},
                                 {0, 0},    {0, 1},    {-3, 0},     {1.5, -2.5}};
  for (size_t i = 0; i < sizeof ab / sizeof ab[0]; i++)
    for (int d = 0; d < 2; d++)
      for (int tr = 0; tr < 4; tr++) {
        gcase g = {.dtype = dtypes[d], .ta = tr & 1, .tb = tr >> 1, .m = 11, .n = 6, .k = 9,
                   .alpha = ab[i][0], .beta = ab[i][1], .sa = -1, .sb = -1, .sc = -1};
        run(&g);
      }

  /* Leading dimensions larger than the rows: padding of A/B is NaN (must not be
   * read), padding of C is a sentinel (must not be written). */
  for (int d = 0; d < 2; d++)
    for (int tr = 0; tr < 4; tr++)
      for (int withbeta = 0; withbeta < 2; withbeta++) {
        int ta = tr & 1, tb = tr >> 1;
        int64_t m = 13, n = 7, k = 10;
        gcase g = {.dtype = dtypes[d], .ta = ta, .tb = tb, .m = m, .n = n, .k = k,
                   .alpha = 1.5, .beta = withbeta ? -0.5 : 0.0,
                   .lda = (ta ? m : k) + 3, .ldb = (tb ? k : n) + 5, .ldc = n + 4,
                   .sa = -1, .sb = -1, .sc = -1, .note = "(padded)"};
        run(&g);
      }
  /* Single column/row matrices with big leading dimensions. */
  for (int d = 0; d < 2; d++) {
    gcase g = {.dtype = dtypes[d], .m = 5, .n = 1, .k = 3, .alpha = 1, .beta = 0.5,
               .lda = 8, .ldb = 4, .ldc = 6, .sa = -1, .sb = -1, .sc = -1};
    run(&g);
    g.ta = ADNN_TRANS;
    g.tb = ADNN_TRANS;
    g.lda = 9;
    run(&g);
  }

  /* Degenerate sizes. k = 0: C = beta*C (NaN in C vanishes with beta 0); m or n
   * = 0: nothing happens, C keeps its sentinel. A and B may be NULL then. */
  for (int d = 0; d < 2; d++)
    for (int tr = 0; tr < 4; tr++) {
      gcase g = {.dtype = dtypes[d], .ta = tr & 1, .tb = tr >> 1, .m = 5, .n = 4, .k = 0,
                 .alpha = 1, .beta = 0.5, .ldc = 6, .sa = -1, .sb = -1, .sc = -1,
                 .note = "(k = 0)"};
      run(&g);
      g.beta = 0.0;
      run(&g);
      g.null_ab = 1;
      g.note = "(k = 0, A and B NULL)";
      run(&g);
      gcase z = {.dtype = dtypes[d], .ta = tr & 1, .tb = tr >> 1, .m = 0, .n = 4, .k = 3,
                 .alpha = 1, .beta = 0.5, .sa = -1, .sb = -1, .sc = -1, .note = "(m = 0)"};
      run(&z);
      z.m = 3, z.n = 0, z.note = "(n = 0)";
      run(&z);
      z.m = 0, z.n = 0, z.k = 0, z.null_ab = 1, z.note = "(all 0, A and B NULL)";
      run(&z);
    }
  /* m = 0 with C NULL as well. */
  is_status(adnn_gemm(ctx, ADNN_DTYPE_F32, ADNN_NO_TRANS, ADNN_NO_TRANS, 0, 4, 3, 1.0, NULL, 3,
                      NULL, 4, 0.0, NULL, 4),
            ADNN_STATUS_SUCCESS, "m = 0 with A, B and C NULL is a no-op");

  /* Batched. */
  for (int d = 0; d < 2; d++)
    for (int tr = 0; tr < 4; tr++) {
      int ta = tr & 1, tb = tr >> 1;
      gcase g = {.dtype = dtypes[d], .ta = ta, .tb = tb, .m = 7, .n = 5, .k = 6, .alpha = 0.5,
                 .beta = 0.0, .batch = 4, .sa = -1, .sb = -1, .sc = -1, .note = "(packed)"};
      run(&g);
      g.beta = 2.0;
      run(&g);
      /* Gaps between the matrices: strides larger than the spans. */
      g.sa = 7 * 6 + 5, g.sb = 6 * 5 + 3, g.sc = 7 * 5 + 11, g.note = "(gaps)";
      run(&g);
      /* Shared A (stride 0), then shared B. */
      g.sa = 0, g.sb = -1, g.sc = -1, g.note = "(shared A)";
      run(&g);
      g.sa = -1, g.sb = 0, g.note = "(shared B)";
      run(&g);
      /* Padded leading dimensions inside a batch. */
      g.lda = (ta ? 7 : 6) + 2, g.ldb = (tb ? 6 : 5) + 1, g.ldc = 5 + 3, g.sb = -1;
      g.note = "(padded)";
      run(&g);
      /* C interleaved as an [m, batch, n] tensor: ldc = batch*n, stride_c = n. */
      gcase il = {.dtype = dtypes[d], .ta = ta, .tb = tb, .m = 6, .n = 5, .k = 4, .alpha = 1,
                  .beta = -1.0, .batch = 3, .ldc = 3 * 5, .sa = -1, .sb = -1, .sc = 5,
                  .note = "(interleaved C)"};
      run(&il);
      il.ldc = 3 * 5 + 2, il.beta = 0, il.note = "(interleaved C, padded rows)";
      run(&il);
      /* batch 1 and batch 0. */
      gcase one = {.dtype = dtypes[d], .ta = ta, .tb = tb, .m = 3, .n = 8, .k = 5, .alpha = 1,
                   .beta = 0.5, .batch = 1, .sa = 0, .sb = 0, .sc = 0, .note = "(batch 1)"};
      run(&one);
      one.batch = 0;
      is_status(adnn_gemm_batched(ctx, dtypes[d], ta, tb, 3, 8, 5, 1.0, NULL, ta ? 3 : 5, NULL,
                                  tb ? 5 : 8, 0.0, NULL, 8, 0, 0, 0, 0),
                ADNN_STATUS_SUCCESS, "%s batch 0 with NULL pointers is a no-op",
                adnn_dtype_name(dtypes[d]));
    }
  /* A larger batch of small odd matrices. */
  for (int d = 0; d < 2; d++) {
    gcase g = {.dtype = dtypes[d], .ta = ADNN_TRANS, .m = 3, .n = 2, .k = 7, .alpha = -1,
               .beta = 0.75, .batch = 37, .sa = -1, .sb = -1, .sc = -1};
    run(&g);
  }

  adnn_context_destroy(ctx);
  return tap_done();
}
