/*
 * The GEMM engine's framework and adnn_cpu_sgemm's dispatch (gemm.h).
 *
 * Loops (BLIS's, with the M/N macro tiles as tasks):
 *
 *   task (i0, j0): a tile of mb x nb elements of C
 *     for pc over k in steps of kc:            B panel kc x nb   -> L3 / L2
 *       pack op(B)[pc.., j0..] into NR-column panels
 *       for ic over the tile's rows in steps of mc:
 *         pack op(A)[i0+ic.., pc..] into MR-row panels   (mc x kc -> L2)
 *         for jr over the tile's columns in steps of NR:   (kc x NR -> L1)
 *           for ir over the block's rows in steps of MR:
 *             microkernel: the MR x NR tile of C, alpha, beta (pc = 0) or 1;
 *             on the last pc, the epilogue on that tile.
 *
 * Each task packs its own panels into a buffer of its own, so tasks share
 * nothing and need no barrier; every element of C is owned by one task and
 * its k sum is formed in the same order whatever the number of threads. The
 * cost is that a B panel is packed once per row tile rather than once, and
 * an A block once per column tile: one copied element per mb (or nb)
 * multiply-adds, with mb and nb of a few hundred (an estimate; the packing
 * was not timed apart from the whole).
 *
 * Pack buffers come from a small free list (a mutex, a push and a pop per
 * task): the first calls allocate, later calls of the same or smaller size
 * reuse, and the list is freed when the plugin is unloaded.
 */
#include "config.h"

#include <cblas.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/cpu/cpu_parallel.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/gemm_kernel.h"
#include "kernels/cpu/simd_isa.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* ---- Cache hierarchy ------------------------------------------------------ */

typedef struct cache_sizes {
  int64_t l1d, l2, l3; /* bytes; l3 is one core's share */
} cache_sizes;

static cache_sizes caches;
static pthread_once_t caches_once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__) || defined(__i386__)
/* The deterministic cache parameters of CPUID leaf 4 (Intel) or 0x8000001D
 * (AMD, same format): per level, the size and how many logical CPUs share it. */
static void read_cpuid_caches(cache_sizes *cs) {
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return;
  unsigned max_leaf = a;
  unsigned leaf = 0;
  if (b == 0x756e6547u && max_leaf >= 4) /* "Genu" ineIntel */
    leaf = 4;
  else if ((unsigned)__get_cpuid_max(0x80000000u, NULL) >= 0x8000001Du)
    leaf = 0x8000001Du;
  if (leaf == 0) return;
  for (unsigned sub = 0; sub < 16; sub++) {
    __cpuid_count(leaf, sub, a, b, c, d);
    unsigned type = a & 0x1f, level = (a >> 5) & 7;
    if (type == 0) break;
    if (type != 1 && type != 3) continue; /* data or unified */
    int64_t ways = ((b >> 22) & 0x3ff) + 1, parts = ((b >> 12) & 0x3ff) + 1,
            line = (b & 0xfff) + 1, sets = (int64_t)c + 1;
    int64_t size = ways * parts * line * sets;
    int64_t sharing = ((a >> 14) & 0xfff) + 1;
    if (level == 1) cs->l1d = size;
    if (level == 2) cs->l2 = size;
    if (level == 3) {
      /* The share of one core: logical CPUs sharing it, two per core when
       * there are several (SMT); a VM may report odd counts, hence the
       * clamps in blocking_for. */
      int64_t cores = sharing > 1 ? sharing / 2 : 1;
      cs->l3 = size / cores;
    }
  }
}
#endif

static void detect_caches(void) {
  cache_sizes cs = {0, 0, 0};
#if defined(__x86_64__) || defined(__i386__)
  read_cpuid_caches(&cs);
#endif
#ifdef _SC_LEVEL1_DCACHE_SIZE
  if (cs.l1d <= 0) cs.l1d = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  if (cs.l2 <= 0) cs.l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (cs.l3 <= 0) cs.l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  /* Conservative defaults where nothing answers (32 KiB, 256 KiB, 2 MiB). */
  if (cs.l1d <= 0) cs.l1d = 32 << 10;
  if (cs.l2 <= 0) cs.l2 = 256 << 10;
  if (cs.l3 <= 0) cs.l3 = cs.l2 > (2 << 20) ? cs.l2 : 2 << 20;
  /* A KVM guest may report a host-wide L3 shared by "1" CPU (480 MiB was
   * seen); a core's share is taken as at most 16 times its L2. */
  if (cs.l3 > 16 * cs.l2) cs.l3 = 16 * cs.l2;
  caches = cs;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static const adnn_cpu_gemm_ukr *ukr_for(int isa) {
  if (isa == ADNN_CPU_ISA_AVX512 && adnn_cpu_gemm_ukr_avx512.kernel) return &adnn_cpu_gemm_ukr_avx512;
  if (isa >= ADNN_CPU_ISA_AVX2 && adnn_cpu_gemm_ukr_avx2.kernel) return &adnn_cpu_gemm_ukr_avx2;
  return NULL;
}

/* The block sizes (see doc/cpu.md):
 *  kc: the B micro-panel (kc x NR floats) fills about the L1 data cache, so
 *      that it stays there while the A micro-panels stream past it from L2
 *      (on the development machine's 48 KiB L1, kc = 384 for AVX-512 ran
 *      1024^3 1.05-1.1x faster per CPU-second than kc = 192, half of L1);
 *  mc: the packed A block (mc x kc) fills about a quarter of L2;
 *  nc: the packed B panel (kc x nc) about half of the core's L3 share. */
static void blocking_for(const adnn_cpu_gemm_ukr *u, adnn_cpu_gemm_blocking *bl) {
  pthread_once(&caches_once, detect_caches);
  bl->mr = u->mr;
  bl->nr = u->nr;
  bl->l1d = caches.l1d;
  bl->l2 = caches.l2;
  bl->l3 = caches.l3;
  int64_t kc = caches.l1d / ((int64_t)u->nr * (int64_t)sizeof(float));
  kc = clamp64(kc / 16 * 16, 128, 512);
  int64_t mc = caches.l2 / 4 / (kc * (int64_t)sizeof(float));
  mc = clamp64(mc / u->mr * u->mr, u->mr * 4, u->mr * 80);
  int64_t nc = caches.l3 / 2 / (kc * (int64_t)sizeof(float));
  nc = clamp64(nc / u->nr * u->nr, u->nr * 8, 4096 / u->nr * u->nr);
  bl->kc = kc;
  bl->mc = mc;
  bl->nc = nc;
}

int adnn_cpu_sgemm_blocking(int isa, adnn_cpu_gemm_blocking *out) {
  const adnn_cpu_gemm_ukr *u = ukr_for(isa);
  if (!u) return 0;
  blocking_for(u, out);
  return 1;
}

int adnn_cpu_sgemm_engine_isa(int isa) { return ukr_for(isa) != NULL; }

/* ---- Pack buffers ---------------------------------------------------------- */

typedef struct pack_buf {
  struct pack_buf *next;
  size_t floats;
  float *data; /* 64-byte aligned */
} pack_buf;

static pthread_mutex_t bufs_lock = PTHREAD_MUTEX_INITIALIZER;
static pack_buf *free_bufs;

/* A buffer of at least `floats` floats, or NULL when memory is exhausted. */
static pack_buf *buf_acquire(size_t floats) {
  pthread_mutex_lock(&bufs_lock);
  pack_buf *p = free_bufs;
  if (p) free_bufs = p->next;
  pthread_mutex_unlock(&bufs_lock);
  if (!p) {
    p = calloc(1, sizeof *p);
    if (!p) return NULL;
  }
  if (p->floats < floats) {
    free(p->data);
    size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
    p->data = aligned_alloc(64, bytes);
    p->floats = p->data ? floats : 0;
    if (!p->data) {
      free(p);
      return NULL;
    }
  }
  return p;
}

static void buf_release(pack_buf *p) {
  pthread_mutex_lock(&bufs_lock);
  p->next = free_bufs;
  free_bufs = p;
  pthread_mutex_unlock(&bufs_lock);
}

/* The buffers live until the plugin is unloaded (or the process exits). */
__attribute__((destructor)) static void free_all_bufs(void) {
  pthread_mutex_lock(&bufs_lock);
  while (free_bufs) {
    pack_buf *p = free_bufs;
    free_bufs = p->next;
    free(p->data);
    free(p);
  }
  pthread_mutex_unlock(&bufs_lock);
}

/* ---- The engine -------------------------------------------------------------- */

typedef struct gemm_job {
  const adnn_cpu_gemm_ukr *u;
  adnn_cpu_gemm_blocking bl;
  int ta, tb;
  int64_t m, n, k;
  float alpha, beta;
  const float *a, *b;
  int64_t lda, ldb, ldc;
  float *c;
  const adnn_cpu_gemm_epilogue *epi;
  int64_t mb, nb;         /* task tile */
  int64_t mtiles, ntiles; /* tasks = mtiles * ntiles */
} gemm_job;

static void openblas_block(const gemm_job *j, int64_t i0, int64_t j0, int64_t mm, int64_t nn);

static void gemm_task(void *arg, int64_t t0, int64_t t1, int thread) {
  (void)thread;
  const gemm_job *j = arg;
  const adnn_cpu_gemm_ukr *u = j->u;
  const int MR = u->mr, NR = u->nr;
  const int64_t kc = j->bl.kc, mc = j->bl.mc;
  const int64_t nb_pad = (j->nb + NR - 1) / NR * NR;
  const int64_t mc_pad = (mc + MR - 1) / MR * MR;
  const int64_t kmax = j->k < kc ? j->k : kc;
  pack_buf *buf = buf_acquire((size_t)(kmax * (nb_pad + mc_pad)));
  for (int64_t t = t0; t < t1; t++) {
    /* Row tiles fastest: consecutive tasks read the same columns of B. */
    const int64_t it = t % j->mtiles, jt = t / j->mtiles;
    const int64_t i0 = it * j->mb, j0 = jt * j->nb;
    const int64_t mm = j->m - i0 < j->mb ? j->m - i0 : j->mb;
    const int64_t nn = j->n - j0 < j->nb ? j->n - j0 : j->nb;
    if (!buf) {
      openblas_block(j, i0, j0, mm, nn);
      continue;
    }
    float *bp = buf->data, *ap = buf->data + kmax * nb_pad;
    for (int64_t pc = 0; pc < j->k; pc += kc) {
      const int64_t kk = j->k - pc < kc ? j->k - pc : kc;
      const float beta = pc == 0 ? j->beta : 1.0f;
      const int last = pc + kk >= j->k;
      for (int64_t jr = 0; jr < nn; jr += NR) {
        const int cols = nn - jr < NR ? (int)(nn - jr) : NR;
        const float *src = j->tb ? j->b + (j0 + jr) * j->ldb + pc : j->b + pc * j->ldb + j0 + jr;
        u->pack_b(j->tb, src, j->ldb, cols, kk, bp + jr * kk);
      }
      for (int64_t ic = 0; ic < mm; ic += mc) {
        const int64_t mi = mm - ic < mc ? mm - ic : mc;
        for (int64_t ir = 0; ir < mi; ir += MR) {
          const int rows = mi - ir < MR ? (int)(mi - ir) : MR;
          const int64_t row = i0 + ic + ir;
          const float *src = j->ta ? j->a + pc * j->lda + row : j->a + row * j->lda + pc;
          u->pack_a(j->ta, src, j->lda, rows, kk, ap + ir * kk);
        }
        for (int64_t jr = 0; jr < nn; jr += NR) {
          const int cols = nn - jr < NR ? (int)(nn - jr) : NR;
          for (int64_t ir = 0; ir < mi; ir += MR) {
            const int rows = mi - ir < MR ? (int)(mi - ir) : MR;
            const int64_t row = i0 + ic + ir, col = j0 + jr;
            float *ct = j->c + row * j->ldc + col;
            u->kernel(kk, ap + ir * kk, bp + jr * kk, ct, j->ldc, rows, cols, j->alpha, beta);
            if (last && j->epi) j->epi->fn(j->epi->arg, ct, j->ldc, row, col, rows, cols);
          }
        }
      }
    }
  }
  if (buf) buf_release(buf);
}

/* The task tiles: the cache blocks, split further until there are about
 * four tasks per thread (the pool balances uneven tasks), but never below
 * 4 panels a side, where packing would start to cost. */
static void plan_tiles(gemm_job *j) {
  const int threads = adnn_cpu_parallel_in_task() ? 1 : adnn_cpu_parallel_threads();
  const int64_t MR = j->u->mr, NR = j->u->nr;
  int64_t mb = j->bl.mc, nb = j->bl.nc;
  if (mb > j->m) mb = (j->m + MR - 1) / MR * MR;
  if (nb > j->n) nb = (j->n + NR - 1) / NR * NR;
  const int64_t target = threads > 1 ? 4 * (int64_t)threads : 1;
  for (;;) {
    int64_t tasks = ((j->m + mb - 1) / mb) * ((j->n + nb - 1) / nb);
    if (tasks >= target) break;
    if (nb >= mb && nb > 4 * NR)
      nb = (nb / 2 + NR - 1) / NR * NR;
    else if (mb > 4 * MR)
      mb = (mb / 2 + MR - 1) / MR * MR;
    else if (nb > 4 * NR)
      nb = (nb / 2 + NR - 1) / NR * NR;
    else
      break;
  }
  j->mb = mb;
  j->nb = nb;
  j->mtiles = (j->m + mb - 1) / mb;
  j->ntiles = (j->n + nb - 1) / nb;
}

/* C = beta * C (beta = 0: zeros, C not read), then the epilogue: k = 0. */
static void scale_only(int64_t m, int64_t n, float beta, float *c, int64_t ldc,
                       const adnn_cpu_gemm_epilogue *epi) {
  for (int64_t i = 0; i < m; i++) {
    float *ci = c + i * ldc;
    if (beta == 0.0f)
      memset(ci, 0, (size_t)n * sizeof(float));
    else if (beta != 1.0f)
      for (int64_t x = 0; x < n; x++) ci[x] *= beta;
  }
  if (epi && epi->fn)
    for (int64_t i = 0; i < m; i += ADNN_CPU_GEMM_TILE_MAX)
      for (int64_t x = 0; x < n; x += ADNN_CPU_GEMM_TILE_MAX) {
        int64_t r = m - i < ADNN_CPU_GEMM_TILE_MAX ? m - i : ADNN_CPU_GEMM_TILE_MAX;
        int64_t q = n - x < ADNN_CPU_GEMM_TILE_MAX ? n - x : ADNN_CPU_GEMM_TILE_MAX;
        epi->fn(epi->arg, c + i * ldc + x, ldc, i, x, r, q);
      }
}

/* One block of C through OpenBLAS, then the epilogue on it in tiles. */
static void openblas_block(const gemm_job *j, int64_t i0, int64_t j0, int64_t mm, int64_t nn) {
  const float *a = j->ta ? j->a + i0 : j->a + i0 * j->lda;
  const float *b = j->tb ? j->b + j0 * j->ldb : j->b + j0;
  float *c = j->c + i0 * j->ldc + j0;
  cblas_sgemm(CblasRowMajor, j->ta ? CblasTrans : CblasNoTrans, j->tb ? CblasTrans : CblasNoTrans,
              (int)mm, (int)nn, (int)j->k, j->alpha, a, (int)j->lda, b, (int)j->ldb, j->beta, c,
              (int)j->ldc);
  if (j->epi)
    for (int64_t i = 0; i < mm; i += ADNN_CPU_GEMM_TILE_MAX)
      for (int64_t x = 0; x < nn; x += ADNN_CPU_GEMM_TILE_MAX) {
        int64_t r = mm - i < ADNN_CPU_GEMM_TILE_MAX ? mm - i : ADNN_CPU_GEMM_TILE_MAX;
        int64_t q = nn - x < ADNN_CPU_GEMM_TILE_MAX ? nn - x : ADNN_CPU_GEMM_TILE_MAX;
        j->epi->fn(j->epi->arg, c + i * j->ldc + x, j->ldc, i0 + i, j0 + x, r, q);
      }
}

/* ---- Dispatch ------------------------------------------------------------------ */

static int openblas_fast;

void adnn_cpu_sgemm_set_openblas_fast(int fast) { openblas_fast = fast != 0; }

adnn_cpu_sgemm_impl adnn_cpu_sgemm_choose(int isa, int ta, int tb, int64_t m, int64_t n,
                                          int64_t k) {
  (void)ta;
  (void)tb;
  if (!ukr_for(isa)) return ADNN_CPU_SGEMM_OPENBLAS;
  /* Inside a pool task OpenBLAS would start its own threads next to ours:
   * the engine runs there whatever the shape. */
  if (adnn_cpu_parallel_in_task() || !openblas_fast) return ADNN_CPU_SGEMM_ENGINE;
  /* OpenBLAS with AVX kernels, outside our tasks: measured on the
   * development machine (AVX-512 Xeon, 2 threads, doc/performance.md), its
   * SkylakeX kernels ran the large GEMMs (every side >= 512) 1.4-1.6x faster
   * than the engine, while the engine won below that (1.4x at 256^3). */
  if (m >= 512 && n >= 512 && k >= 512) return ADNN_CPU_SGEMM_OPENBLAS;
  return ADNN_CPU_SGEMM_ENGINE;
}

void adnn_cpu_sgemm_with(adnn_cpu_sgemm_impl impl, int isa, int ta, int tb, int64_t m, int64_t n,
                         int64_t k, float alpha, const float *a, int64_t lda, const float *b,
                         int64_t ldb, float beta, float *c, int64_t ldc,
                         const adnn_cpu_gemm_epilogue *epilogue) {
  if (m <= 0 || n <= 0) return;
  if (epilogue && !epilogue->fn) epilogue = NULL;
  if (k <= 0 || alpha == 0.0f) {
    /* BLAS: alpha = 0 or k = 0 leaves beta * C (A and B are not read). */
    scale_only(m, n, beta, c, ldc, epilogue);
    return;
  }
  gemm_job j = {.ta = ta != 0, .tb = tb != 0, .m = m, .n = n, .k = k, .alpha = alpha,
                .beta = beta, .a = a, .b = b, .lda = lda, .ldb = ldb, .ldc = ldc, .c = c,
                .epi = epilogue};
  j.u = impl == ADNN_CPU_SGEMM_ENGINE ? ukr_for(isa) : NULL;
  if (!j.u) {
    j.mb = m;
    j.nb = n;
    openblas_block(&j, 0, 0, m, n);
    return;
  }
  blocking_for(j.u, &j.bl);
  plan_tiles(&j);
  adnn_cpu_parallel_for(j.mtiles * j.ntiles, 1, gemm_task, &j);
}

void adnn_cpu_sgemm(int isa, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                    const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                    int64_t ldc, const adnn_cpu_gemm_epilogue *epilogue) {
  adnn_cpu_sgemm_with(adnn_cpu_sgemm_choose(isa, ta, tb, m, n, k), isa, ta, tb, m, n, k, alpha, a,
                      lda, b, ldb, beta, c, ldc, epilogue);
}
