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
 * Pack space: a plan's caller (adnn_cpu_sgemm_ws) hands in one slice per
 * thread, sized at reshape by adnn_cpu_sgemm_pack_bytes, so that run
 * allocates nothing. Only the plan-less public GEMM (adnn_cpu_sgemm) takes
 * its buffers from a small free list (a mutex, a push and a pop per task):
 * the first calls allocate, later calls of the same or smaller size reuse,
 * and the list is freed when the plugin is unloaded.
 */
#include "config.h"

#include <cblas.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/cpu/blas_threads.h"
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

/* The block sizes (see doc/cpu.md), as data: one row per microkernel.
 *  kc: the B micro-panel (kc x NR floats) fills l1_pct percent of the L1
 *      data cache, so that it stays there while the A micro-panels stream
 *      past it from L2 and the C tile and the A stream still have room;
 *  mc: the packed A block (mc x kc) fills l2_pct percent of L2;
 *  nc: the packed B panel (kc x nc) l3_pct percent of the core's L3 share.
 * AVX-512 (development machine, 48 KiB L1): kc = 384, the whole L1, ran
 * 1024^3 1.05-1.1x faster per CPU-second than kc = 192. AVX2 (Zen3, 32 KiB
 * L1): kc = 512 (the whole L1) against 256 and 384 at 1 thread, issue 15:
 * 512 was as fast or faster on 1024^3, 256^3, 64 x 3136 x 256 and BERT's
 * 128 x 2304 x 768 (doc/performance.md), so the row keeps the whole L1. */
typedef struct blocking_row {
  int mr, nr;            /* the microkernel the row is for */
  int l1_pct, l2_pct, l3_pct;
  int64_t kc_min, kc_max; /* clamps of kc */
  int64_t mc_panels_max;  /* mc at most this many MR panels */
} blocking_row;

static const blocking_row blocking_table[] = {
    {12, 32, 100, 25, 50, 128, 512, 80}, /* AVX-512 */
    {6, 16, 100, 25, 50, 128, 512, 80},  /* AVX2 + FMA */
};

static void blocking_for(const adnn_cpu_gemm_ukr *u, adnn_cpu_gemm_blocking *bl) {
  pthread_once(&caches_once, detect_caches);
  const blocking_row *r = &blocking_table[1];
  for (size_t i = 0; i < sizeof blocking_table / sizeof blocking_table[0]; i++)
    if (blocking_table[i].mr == u->mr && blocking_table[i].nr == u->nr) r = &blocking_table[i];
  bl->mr = u->mr;
  bl->nr = u->nr;
  bl->l1d = caches.l1d;
  bl->l2 = caches.l2;
  bl->l3 = caches.l3;
  int64_t kc = caches.l1d * r->l1_pct / 100 / ((int64_t)u->nr * (int64_t)sizeof(float));
  kc = clamp64(kc / 16 * 16, r->kc_min, r->kc_max);
  int64_t mc = caches.l2 * r->l2_pct / 100 / (kc * (int64_t)sizeof(float));
  mc = clamp64(mc / u->mr * u->mr, u->mr * 4, u->mr * r->mc_panels_max);
  int64_t nc = caches.l3 * r->l3_pct / 100 / (kc * (int64_t)sizeof(float));
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

/* The rows of the packed A block: mc rounded up to panels, but no more
 * panels than op(A) has rows. */
static size_t a_block_floats(int64_t mc, int64_t m, int mr) {
  int64_t rows = mc < m ? mc : m;
  return (size_t)((rows + mr - 1) / mr * mr);
}

/* One thread's pack space for an m x n x k call: the B panel (kc x nb, nb
 * at most nc and at most n rounded up to NR: plan_tiles never makes it
 * wider) and the A block (kc x mc, at most m rows), rounded up to 64 bytes. */
size_t adnn_cpu_sgemm_pack_bytes(int isa, int64_t m, int64_t n, int64_t k) {
  const adnn_cpu_gemm_ukr *u = ukr_for(isa);
  if (!u || m <= 0 || n <= 0 || k <= 0) return 0;
  adnn_cpu_gemm_blocking bl;
  blocking_for(u, &bl);
  const int64_t kmax = k < bl.kc ? k : bl.kc;
  const int64_t npad = (n + u->nr - 1) / u->nr * u->nr;
  const int64_t nb = npad < bl.nc ? npad : bl.nc;
  size_t floats = (size_t)(kmax * nb) + a_block_floats(bl.mc, m, u->mr) * (size_t)kmax;
  return (floats * sizeof(float) + 63) / 64 * 64;
}

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
  const adnn_cpu_gemm_pack *pack; /* NULL: pack buffers from the free list */
  const float *apk;       /* pre-packed op(A) (adnn_cpu_sgemm_pack_a), or NULL */
  int64_t mpad;           /* m rounded up to MR: the packed A's rows */
  int64_t mb, nb;         /* task tile */
  int64_t mtiles, ntiles; /* tasks = mtiles * ntiles */
} gemm_job;

static void openblas_block(const gemm_job *j, int64_t i0, int64_t j0, int64_t mm, int64_t nn);

/* A block of C from a pre-packed A when no pack buffer could be had (memory
 * exhausted): a plain loop, each sum in k order. */
static void packed_a_block_plain(const gemm_job *j, int64_t i0, int64_t j0, int64_t mm,
                                 int64_t nn) {
  const int64_t MR = j->u->mr, kc = j->bl.kc;
  for (int64_t i = i0; i < i0 + mm; i++)
    for (int64_t x = j0; x < j0 + nn; x++) {
      float sum = 0.0f;
      for (int64_t p = 0; p < j->k; p++) {
        const int64_t pc = p / kc * kc, kk = j->k - pc < kc ? j->k - pc : kc;
        const float av = j->apk[pc * j->mpad + i / MR * MR * kk + (p - pc) * MR + i % MR];
        const float bv = j->tb ? j->b[x * j->ldb + p] : j->b[p * j->ldb + x];
        sum += av * bv;
      }
      float *cv = j->c + i * j->ldc + x;
      *cv = j->beta == 0.0f ? j->alpha * sum : j->alpha * sum + j->beta * *cv;
    }
  if (j->epi)
    for (int64_t i = 0; i < mm; i += ADNN_CPU_GEMM_TILE_MAX)
      for (int64_t x = 0; x < nn; x += ADNN_CPU_GEMM_TILE_MAX) {
        int64_t r = mm - i < ADNN_CPU_GEMM_TILE_MAX ? mm - i : ADNN_CPU_GEMM_TILE_MAX;
        int64_t q = nn - x < ADNN_CPU_GEMM_TILE_MAX ? nn - x : ADNN_CPU_GEMM_TILE_MAX;
        j->epi->fn(j->epi->arg, j->c + (i0 + i) * j->ldc + j0 + x, j->ldc, i0 + i, j0 + x, r, q);
      }
}

/* The widest op(B) (n, the whole call, not one tile, so that the engine's
 * own split does not change the choice; the bits are the same either way)
 * for which the engine reads untransposed A in place instead of packing it
 * (the microkernel's kernel_arows). Packing A costs one copy of each element, repaid by the
 * ceil(n / NR) microkernel calls that then read it from the packed panel.
 * Paired A/B in one process (thread CPU time, 1 thread, Zen3, issue 15):
 * at n = 49 (4 calls) reading A in place ran 2048 x 49 x 512 1.07x,
 * 512 x 49 x 2048 1.06x and 1024 x 49 x 1024 1.14x faster; at n = 196 the
 * two were within 3% either way (256 x 196 x 1024 0.97x, 64 x 196 x 64
 * 1.04x), so the bound stays below that. The tile's B panels (at most 8 of
 * kc x NR floats) are read from L2 while the A strip stays in L1. */
#define DIRECT_A_COLS 128

static void gemm_task(void *arg, int64_t t0, int64_t t1, int thread) {
  const gemm_job *j = arg;
  const adnn_cpu_gemm_ukr *u = j->u;
  const int MR = u->mr, NR = u->nr;
  const int64_t kc = j->bl.kc, mc = j->bl.mc;
  const int64_t nb_pad = (j->nb + NR - 1) / NR * NR;
  const int64_t kmax = j->k < kc ? j->k : kc;
  /* The caller's pack space (one slice per thread), or else a buffer from
   * the free list (the plan-less public GEMM). */
  pack_buf *buf = NULL, slice;
  if (j->pack) {
    slice.data = (float *)((char *)j->pack->base + (size_t)thread * j->pack->slice_bytes);
    buf = &slice;
  } else {
    buf = buf_acquire((size_t)(kmax * nb_pad) + a_block_floats(j->bl.mc, j->m, MR) * (size_t)kmax);
  }
  for (int64_t t = t0; t < t1; t++) {
    /* Row tiles fastest: consecutive tasks read the same columns of B. */
    const int64_t it = t % j->mtiles, jt = t / j->mtiles;
    const int64_t i0 = it * j->mb, j0 = jt * j->nb;
    const int64_t mm = j->m - i0 < j->mb ? j->m - i0 : j->mb;
    const int64_t nn = j->n - j0 < j->nb ? j->n - j0 : j->nb;
    if (!buf) {
      if (j->apk)
        packed_a_block_plain(j, i0, j0, mm, nn);
      else
        openblas_block(j, i0, j0, mm, nn);
      continue;
    }
    /* A read in place (no A panels) for narrow calls of untransposed A. */
    const int direct_a = !j->ta && !j->apk && u->kernel_arows && j->n <= DIRECT_A_COLS;
    float *bp = buf->data, *apbuf = buf->data + kmax * nb_pad;
    const float *ap = apbuf;
    for (int64_t pc = 0; pc < j->k; pc += kc) {
      const int64_t kk = j->k - pc < kc ? j->k - pc : kc;
      const float beta = pc == 0 ? j->beta : 1.0f;
      const int last = pc + kk >= j->k;
      if (!j->tb && u->pack_b_rows)
        u->pack_b_rows(j->b + pc * j->ldb + j0, j->ldb, nn, kk, bp);
      else
        for (int64_t jr = 0; jr < nn; jr += NR) {
          const int cols = nn - jr < NR ? (int)(nn - jr) : NR;
          const float *src = j->tb ? j->b + (j0 + jr) * j->ldb + pc : j->b + pc * j->ldb + j0 + jr;
          u->pack_b(j->tb, src, j->ldb, cols, kk, bp + jr * kk);
        }
      if (direct_a) {
        /* Strip after strip of MR rows of A read in place, each over all
         * the tile's column panels while it is in L1 (the B panels, at
         * most DIRECT_A_COLS columns, stay in L2). */
        for (int64_t ir = 0; ir < mm; ir += MR) {
          const int rows = mm - ir < MR ? (int)(mm - ir) : MR;
          const int64_t row = i0 + ir;
          const float *as = j->a + row * j->lda + pc;
          for (int64_t jr = 0; jr < nn; jr += NR) {
            const int cols = nn - jr < NR ? (int)(nn - jr) : NR;
            const int64_t col = j0 + jr;
            float *ct = j->c + row * j->ldc + col;
            if (cols <= NR / 2 && u->kernel_arows_half)
              u->kernel_arows_half(kk, as, j->lda, bp + jr * kk, ct, j->ldc, rows, cols, j->alpha,
                                   beta);
            else
              u->kernel_arows(kk, as, j->lda, bp + jr * kk, ct, j->ldc, rows, cols, j->alpha,
                              beta);
            if (last && j->epi) j->epi->fn(j->epi->arg, ct, j->ldc, row, col, rows, cols);
          }
        }
        continue;
      }
      for (int64_t ic = 0; ic < mm; ic += mc) {
        const int64_t mi = mm - ic < mc ? mm - ic : mc;
        /* i0 and ic are whole panels (mb and mc are multiples of MR), so a
         * pre-packed A's block is read where it lies. */
        if (j->apk) ap = j->apk + pc * j->mpad + (i0 + ic) * kk;
        for (int64_t ir = 0; ir < mi && !j->apk; ir += MR) {
          const int rows = mi - ir < MR ? (int)(mi - ir) : MR;
          const int64_t row = i0 + ic + ir;
          const float *src = j->ta ? j->a + pc * j->lda + row : j->a + row * j->lda + pc;
          u->pack_a(j->ta, src, j->lda, rows, kk, apbuf + ir * kk);
        }
        for (int64_t jr = 0; jr < nn; jr += NR) {
          const int cols = nn - jr < NR ? (int)(nn - jr) : NR;
          for (int64_t ir = 0; ir < mi; ir += MR) {
            const int rows = mi - ir < MR ? (int)(mi - ir) : MR;
            const int64_t row = i0 + ic + ir, col = j0 + jr;
            float *ct = j->c + row * j->ldc + col;
            if (cols <= NR / 2 && u->kernel_half)
              u->kernel_half(kk, ap + ir * kk, bp + jr * kk, ct, j->ldc, rows, cols, j->alpha,
                             beta);
            else
              u->kernel(kk, ap + ir * kk, bp + jr * kk, ct, j->ldc, rows, cols, j->alpha, beta);
            if (last && j->epi) j->epi->fn(j->epi->arg, ct, j->ldc, row, col, rows, cols);
          }
        }
      }
    }
  }
  if (buf && !j->pack) buf_release(buf);
}

/* The task tiles. Each task packs its own panels, so a split of C into
 * mtiles x ntiles tiles copies op(A) ntiles times and op(B) mtiles times:
 * m * k * ntiles + k * n * mtiles elements. Among the splits with at least
 * four tasks per thread (the pool balances uneven tasks; one task on the
 * calling thread alone), tiles at least 4 panels a side where the matrix
 * allows, and column tiles no wider than nc (the packed B panel kc x nb must
 * stay in the core's share of L3), the one that copies least wins; the row
 * tiles may exceed mc (the task loops over mc blocks inside). For BERT's
 * m = 128 shapes on 2 threads that is 1 x 8 tiles, B packed once, where the
 * former rule (mc x nc blocks halved until there were enough) made 3 x 4 and
 * packed B three times. */
static void plan_tiles(gemm_job *j, int threads) {
  const int64_t MR = j->u->mr, NR = j->u->nr;
  const int64_t mpanels = (j->m + MR - 1) / MR, npanels = (j->n + NR - 1) / NR;
  const int64_t ncp = j->bl.nc / NR; /* most panels of one column tile */
  const int64_t target = threads > 1 ? 4 * (int64_t)threads : 1;
  int64_t best_mt = 1, best_nt = (npanels + ncp - 1) / ncp;
  double best_cost = -1.0;
  int64_t best_reach = 0;
  /* mtiles x ntiles over the divisors' range: at most a few hundred pairs. */
  for (int64_t mt = 1; mt <= mpanels && mt <= 4 * target; mt++) {
    const int64_t mbp = (mpanels + mt - 1) / mt; /* panels per row tile */
    if (mt > 1 && mbp < 4) break;
    int64_t nt = (target + mt - 1) / mt;
    const int64_t nt_cache = (npanels + ncp - 1) / ncp;
    if (nt < nt_cache) nt = nt_cache;
    if (nt > npanels) nt = npanels;
    int64_t nbp = (npanels + nt - 1) / nt;
    if (nbp < 4 && nt > nt_cache) {
      /* Columns too thin: fewer, wider tiles (fewer tasks than the target). */
      nbp = npanels < 4 ? npanels : 4;
      if (nbp > ncp) nbp = ncp;
    }
    const int64_t real_mt = (mpanels + mbp - 1) / mbp, real_nt = (npanels + nbp - 1) / nbp;
    const int64_t tasks = real_mt * real_nt, reach = tasks < target ? tasks : target;
    const double cost = (double)j->m * (double)real_nt + (double)j->n * (double)real_mt;
    /* Reaching the target first (an idle thread costs more than any copy),
     * then the fewest copies. */
    if (reach > best_reach || (reach == best_reach && cost < best_cost)) {
      best_reach = reach;
      best_cost = cost;
      best_mt = real_mt;
      best_nt = real_nt;
    }
  }
  const int64_t mbp = (mpanels + best_mt - 1) / best_mt, nbp = (npanels + best_nt - 1) / best_nt;
  j->mb = mbp * MR;
  j->nb = nbp * NR;
  j->mtiles = (j->m + j->mb - 1) / j->mb;
  j->ntiles = (j->n + j->nb - 1) / j->nb;
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
  /* Inside one of our pool's tasks (the fallbacks: no pack buffer, or a pack
   * space too small), OpenBLAS runs single-threaded: its own threads would
   * oversubscribe the cores our pool already uses (blas_threads.h). */
  const int serial = adnn_cpu_parallel_in_task();
  if (serial) adnn_cpu_blas_serial_begin();
  cblas_sgemm(CblasRowMajor, j->ta ? CblasTrans : CblasNoTrans, j->tb ? CblasTrans : CblasNoTrans,
              (int)mm, (int)nn, (int)j->k, j->alpha, a, (int)j->lda, b, (int)j->ldb, j->beta, c,
              (int)j->ldc);
  if (serial) adnn_cpu_blas_serial_end();
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

/* Runs the call with impl; pack NULL takes the engine's pack buffers from
 * the free list. */
static void sgemm_run(adnn_cpu_sgemm_impl impl, int isa, int ta, int tb, int64_t m, int64_t n,
                      int64_t k, float alpha, const float *a, int64_t lda, const float *b,
                      int64_t ldb, float beta, float *c, int64_t ldc,
                      const adnn_cpu_gemm_epilogue *epilogue, const adnn_cpu_gemm_pack *pack,
                      const float *apk) {
  if (m <= 0 || n <= 0) return;
  if (epilogue && !epilogue->fn) epilogue = NULL;
  if (k <= 0 || alpha == 0.0f) {
    /* BLAS: alpha = 0 or k = 0 leaves beta * C (A and B are not read). */
    scale_only(m, n, beta, c, ldc, epilogue);
    return;
  }
  gemm_job j = {.ta = ta != 0, .tb = tb != 0, .m = m, .n = n, .k = k, .alpha = alpha,
                .beta = beta, .a = a, .b = b, .lda = lda, .ldb = ldb, .ldc = ldc, .c = c,
                .epi = epilogue, .pack = pack};
  j.u = impl == ADNN_CPU_SGEMM_ENGINE ? ukr_for(isa) : NULL;
  const int small_pack = pack && (!pack->base || pack->slices < 1 ||
                                  pack->slice_bytes < adnn_cpu_sgemm_pack_bytes(isa, m, n, k));
  if (apk) {
    /* A pre-packed A needs the engine; too small a pack space (a caller's
     * bug) takes the free list's buffers instead. */
    if (!j.u) return; /* no microkernel: no packed form exists (packed_a_bytes was 0) */
    j.apk = apk;
    j.mpad = (m + j.u->mr - 1) / j.u->mr * j.u->mr;
    if (small_pack) j.pack = pack = NULL;
  } else if (j.u && small_pack) {
    j.u = NULL; /* too small a pack space (a caller's bug): OpenBLAS, which needs none */
  }
  if (!j.u) {
    j.mb = m;
    j.nb = n;
    openblas_block(&j, 0, 0, m, n);
    return;
  }
  blocking_for(j.u, &j.bl);
  /* Inside a pool task, or with fewer slices than pool threads, the tiles
   * run on the calling thread with slice 0. */
  int threads = adnn_cpu_parallel_in_task() ? 1 : adnn_cpu_parallel_threads();
  if (pack && pack->slices < threads) threads = 1;
  plan_tiles(&j, threads);
  if (threads == 1)
    gemm_task(&j, 0, j.mtiles * j.ntiles, 0);
  else
    adnn_cpu_parallel_for(j.mtiles * j.ntiles, 1, gemm_task, &j);
}

void adnn_cpu_sgemm_with(adnn_cpu_sgemm_impl impl, int isa, int ta, int tb, int64_t m, int64_t n,
                         int64_t k, float alpha, const float *a, int64_t lda, const float *b,
                         int64_t ldb, float beta, float *c, int64_t ldc,
                         const adnn_cpu_gemm_epilogue *epilogue, const adnn_cpu_gemm_pack *pack) {
  sgemm_run(impl, isa, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue, pack, NULL);
}

void adnn_cpu_sgemm(int isa, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                    const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                    int64_t ldc, const adnn_cpu_gemm_epilogue *epilogue) {
  sgemm_run(adnn_cpu_sgemm_choose(isa, ta, tb, m, n, k), isa, ta, tb, m, n, k, alpha, a, lda, b,
            ldb, beta, c, ldc, epilogue, NULL, NULL);
}

void adnn_cpu_sgemm_ws(int isa, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                       const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                       float *c, int64_t ldc, const adnn_cpu_gemm_epilogue *epilogue,
                       const adnn_cpu_gemm_pack *pack) {
  sgemm_run(adnn_cpu_sgemm_choose(isa, ta, tb, m, n, k), isa, ta, tb, m, n, k, alpha, a, lda, b,
            ldb, beta, c, ldc, epilogue, pack, NULL);
}

/* ---- Pre-packed A ------------------------------------------------------------ */

size_t adnn_cpu_sgemm_packed_a_bytes(int isa, int64_t m, int64_t k) {
  const adnn_cpu_gemm_ukr *u = ukr_for(isa);
  if (!u || m <= 0 || k <= 0) return 0;
  const int64_t mpad = (m + u->mr - 1) / u->mr * u->mr;
  return ((size_t)(mpad * k) * sizeof(float) + 63) / 64 * 64;
}

void adnn_cpu_sgemm_pack_a(int isa, int ta, int64_t m, int64_t k, const float *a, int64_t lda,
                           float *packed) {
  const adnn_cpu_gemm_ukr *u = ukr_for(isa);
  if (!u || m <= 0 || k <= 0) return;
  adnn_cpu_gemm_blocking bl;
  blocking_for(u, &bl);
  const int64_t MR = u->mr, mpad = (m + MR - 1) / MR * MR;
  for (int64_t pc = 0; pc < k; pc += bl.kc) {
    const int64_t kk = k - pc < bl.kc ? k - pc : bl.kc;
    for (int64_t i = 0; i < m; i += MR) {
      const int rows = m - i < MR ? (int)(m - i) : (int)MR;
      const float *src = ta ? a + pc * lda + i : a + i * lda + pc;
      u->pack_a(ta != 0, src, lda, rows, kk, packed + pc * mpad + i * kk);
    }
  }
}

void adnn_cpu_sgemm_ws_packed_a(int isa, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                                const float *apacked, const float *b, int64_t ldb, float beta,
                                float *c, int64_t ldc, const adnn_cpu_gemm_epilogue *epilogue,
                                const adnn_cpu_gemm_pack *pack) {
  sgemm_run(ADNN_CPU_SGEMM_ENGINE, isa, 0, tb, m, n, k, alpha, NULL, 0, b, ldb, beta, c, ldc,
            epilogue, pack, apacked);
}
