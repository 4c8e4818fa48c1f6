/* The plan-less GEMM's per-shape measured choice (doc/tuning.md, "The
 * plan-less GEMM") on the cpu backend, whose F32 GEMM has two implementations
 * (adnn's engine and OpenBLAS) on a CPU with AVX2 or AVX-512.
 *
 * What is checked, through the public API only (the performance database file
 * and adnn_perfdb_export):
 *   - a new shape is measured once: the database gains one "gemm ..." entry
 *     naming one of the two implementations, the result is within the GEMM
 *     bound of a double-precision reference on seeded data (C poisoned with
 *     NaN first, beta = 0), and calling it again, or from a second context,
 *     adds nothing (the context's memory, then the database);
 *   - a small product (m * n * k below the threshold), F64 (one
 *     implementation), tuning mode off and a product whose scratch operands
 *     exceed the workspace limit add no entry;
 *   - a database entry naming an implementation the backend does not have is
 *     ignored: the shape is measured and the result is still right;
 *   - an entry naming either implementation is used as it is, and both give
 *     results within the bound (so the measured choice cannot change what a
 *     program computes beyond the numerics contract).
 *   - a log callback that calls adnn_gemm on the same context while the
 *     tuner is measuring (it logs with its lock held) gets its own shape
 *     measured and a right result instead of a deadlock (an alarm turns a
 *     hang into a failure).
 * The bound is t/cpu-gemm.c's: |got - ref| <= 2 (k + 4) eps sum_p |a_ip b_pj|.
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <adnn.h>

#include "t/tap.h"
#include "t/tmpdir.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static float next_value(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)((double)(rng >> 40) / (double)(1u << 24) - 0.5);
}

/* The number of lines of the exported database that contain `part`. */
static int db_count(const char *dir, const char *part) {
  char path[600];
  snprintf(path, sizeof path, "%s/export.txt", dir);
  if (adnn_perfdb_export(path) != ADNN_STATUS_SUCCESS) return -1;
  FILE *f = fopen(path, "r");
  if (f == NULL) return -1;
  char line[4096];
  int n = 0;
  while (fgets(line, sizeof line, f))
    if (line[0] != '#' && strstr(line, part) != NULL) n++;
  fclose(f);
  return n;
}

/* The algorithm field of the exported entry whose problem is `key` (or ""),
 * and its time in ms (-1 when none). */
static double db_time;
static void db_algorithm(const char *dir, const char *key, char *out, size_t size) {
  db_time = -1;
  char path[600];
  out[0] = '\0';
  snprintf(path, sizeof path, "%s/export.txt", dir);
  if (adnn_perfdb_export(path) != ADNN_STATUS_SUCCESS) return;
  FILE *f = fopen(path, "r");
  if (f == NULL) return;
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, key, strlen(key)) != 0 || line[strlen(key)] != '\t') continue;
    /* key \t backend \t device \t version \t algorithm \t time \t workspace */
    char *field = line;
    for (int i = 0; i < 4 && field; i++) {
      field = strchr(field, '\t');
      if (field) field++;
    }
    if (field) {
      size_t len = strcspn(field, "\t\n");
      if (len >= size) len = size - 1;
      memcpy(out, field, len);
      out[len] = '\0';
      char *t = strchr(field, '\t');
      if (t) db_time = strtod(t + 1, NULL);
    }
  }
  fclose(f);
}

/* Runs C = A B (F32, or F64 when f64) on seeded data with C poisoned, and
 * returns 1 when every element is within the bound of the double reference. */
static int gemm_checked(adnn_context *ctx, int f64, adnn_transpose ta, int64_t m, int64_t n,
                        int64_t k) {
  const size_t es = f64 ? sizeof(double) : sizeof(float);
  const int64_t na = m * k, nb = k * n, nc = m * n;
  double *ha = malloc(sizeof(double) * (size_t)na), *hb = malloc(sizeof(double) * (size_t)nb);
  void *hbuf = malloc(es * (size_t)(na > nb ? (na > nc ? na : nc) : (nb > nc ? nb : nc)));
  void *da = NULL, *db = NULL, *dc = NULL;
  int good = ha && hb && hbuf && adnn_malloc(ctx, es * (size_t)na, &da) == ADNN_STATUS_SUCCESS &&
             adnn_malloc(ctx, es * (size_t)nb, &db) == ADNN_STATUS_SUCCESS &&
             adnn_malloc(ctx, es * (size_t)nc, &dc) == ADNN_STATUS_SUCCESS;
  if (good) {
    for (int64_t i = 0; i < na; i++) ha[i] = next_value();
    for (int64_t i = 0; i < nb; i++) hb[i] = next_value();
    for (int64_t i = 0; i < na; i++)
      f64 ? (void)(((double *)hbuf)[i] = ha[i]) : (void)(((float *)hbuf)[i] = (float)ha[i]);
    adnn_memcpy(ctx, da, hbuf, es * (size_t)na, ADNN_MEMCPY_HOST_TO_DEVICE);
    for (int64_t i = 0; i < nb; i++)
      f64 ? (void)(((double *)hbuf)[i] = hb[i]) : (void)(((float *)hbuf)[i] = (float)hb[i]);
    adnn_memcpy(ctx, db, hbuf, es * (size_t)nb, ADNN_MEMCPY_HOST_TO_DEVICE);
    adnn_memset(ctx, dc, 0xFF, es * (size_t)nc); /* NaN in both dtypes */
    const int64_t lda = ta == ADNN_TRANS ? m : k;
    adnn_status st = adnn_gemm(ctx, f64 ? ADNN_DTYPE_F64 : ADNN_DTYPE_F32, ta, ADNN_NO_TRANS, m, n,
                               k, 1.0, da, lda, db, n, 0.0, dc, n);
    if (st != ADNN_STATUS_SUCCESS) {
      diag("adnn_gemm: %s", adnn_last_error());
      good = 0;
    }
    if (good) adnn_memcpy(ctx, hbuf, dc, es * (size_t)nc, ADNN_MEMCPY_DEVICE_TO_HOST);
    const double eps = f64 ? DBL_EPSILON : FLT_EPSILON;
    for (int64_t i = 0; good && i < m; i++)
      for (int64_t j = 0; good && j < n; j++) {
        double ref = 0, mag = 0;
        for (int64_t p = 0; p < k; p++) {
          const double a = ta == ADNN_TRANS ? ha[p * m + i] : ha[i * k + p];
          ref += a * hb[p * n + j];
          mag += fabs(a * hb[p * n + j]);
        }
        const double got = f64 ? ((double *)hbuf)[i * n + j] : ((float *)hbuf)[i * n + j];
        if (!(fabs(got - ref) <= 2.0 * (double)(k + 4) * eps * mag)) {
          diag("C[%lld][%lld] = %.9g, reference %.9g (bound %.3g)", (long long)i, (long long)j,
               got, ref, 2.0 * (double)(k + 4) * eps * mag);
          good = 0;
        }
      }
  }
  if (da) adnn_free(ctx, da);
  if (db) adnn_free(ctx, db);
  if (dc) adnn_free(ctx, dc);
  free(ha);
  free(hb);
  free(hbuf);
  return good;
}

static void set_mode(adnn_context *ctx, adnn_tune_mode mode) {
  adnn_tune_options o;
  adnn_tune_options_init(&o);
  o.mode = mode;
  if (adnn_context_set_tune_options(ctx, &o) != ADNN_STATUS_SUCCESS)
    diag("set_tune_options: %s", adnn_last_error());
}

/* 4.'s log callback: on the first tuner message of the outer shape, one
 * nested adnn_gemm of another new shape on the same context. */
static adnn_context *nested_ctx;
static int nested_calls, nested_right;
static void nested_gemm_logger(adnn_log_level level, const char *source, const char *message,
                               void *user) {
  (void)level;
  (void)source;
  (void)user;
  if (nested_calls == 0 && strstr(message, "tuner: gemm") != NULL) {
    nested_calls++;
    nested_right = gemm_checked(nested_ctx, 0, ADNN_NO_TRANS, 120, 72, 64);
  }
}

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "not ok - a GEMM called from a log callback during tuning hung "
                            "(deadlock on the context's tuning lock)\n";
  ssize_t w = write(1, msg, sizeof msg - 1);
  (void)w;
  _exit(1);
}

int main(void) {
  char cache[512];
  if (!tmpdir_make(cache, sizeof cache, "adnn-gemm-tune")) return tap_skip_all("no temporary directory");
  setenv("ADNN_CACHE_DIR", cache, 1);
  setenv("ADNN_TUNE", "default", 1);
  unsetenv("ADNN_TUNE_BUDGET_MS");
  adnn_context *ctx = NULL, *ctx2 = NULL;
  if (adnn_context_create("cpu", &ctx) != ADNN_STATUS_SUCCESS) {
    tmpdir_remove(cache);
    return tap_skip_all("no cpu backend");
  }

  /* 1. A new shape: measured once, stored once, right. */
  const char *key = "gemm f32 ta=0 tb=0 m=96 n=160 k=80";
  ok(db_count(cache, "gemm ") == 0, "the database starts without GEMM entries");
  ok(gemm_checked(ctx, 0, ADNN_NO_TRANS, 96, 160, 80), "96x160x80: within the bound");
  char algo[64];
  db_algorithm(cache, key, algo, sizeof algo);
  const int two = strcmp(algo, "engine") == 0 || strcmp(algo, "openblas") == 0;
  const double first_time = db_time; /* a second measurement would store another time */
  if (algo[0] == '\0') {
    /* Only a CPU without AVX2 has a single F32 implementation: no entry. */
    ok(db_count(cache, "gemm ") == 0, "no GEMM entry: this CPU has one F32 GEMM (no AVX2)");
  } else {
    ok(two, "the shape's entry names an implementation: %s", algo);
  }
  ok(gemm_checked(ctx, 0, ADNN_NO_TRANS, 96, 160, 80) && db_count(cache, "gemm ") == (two ? 1 : 0),
     "the same shape again: right, and no second entry");
  db_algorithm(cache, key, algo, sizeof algo);
  ok(db_time == first_time, "and not measured again (%g ms stored, %g before)", db_time, first_time);
  if (adnn_context_create("cpu", &ctx2) == ADNN_STATUS_SUCCESS) {
    ok(gemm_checked(ctx2, 0, ADNN_NO_TRANS, 96, 160, 80) &&
           db_count(cache, "gemm ") == (two ? 1 : 0),
       "a second context: the database's entry, no new one");
    db_algorithm(cache, key, algo, sizeof algo);
    ok(db_time == first_time, "the second context did not measure it either (%g ms)", db_time);
    adnn_context_destroy(ctx2);
  } else {
    ok(0, "second context: %s", adnn_last_error());
  }

  /* 2. What is not tuned. */
  ok(gemm_checked(ctx, 0, ADNN_NO_TRANS, 16, 16, 16) && db_count(cache, "m=16 n=16 k=16") == 0,
     "16x16x16 (below the threshold): right, no entry");
  ok(gemm_checked(ctx, 1, ADNN_NO_TRANS, 96, 96, 64) && db_count(cache, "gemm f64") == 0,
     "F64 (one implementation): right, no entry");
  set_mode(ctx, ADNN_TUNE_OFF);
  ok(gemm_checked(ctx, 0, ADNN_TRANS, 100, 120, 70) && db_count(cache, "m=100 n=120 k=70") == 0,
     "tuning off: right, no entry");
  set_mode(ctx, ADNN_TUNE_DEFAULT);
  {
    /* 112x80x64 needs (112*64 + 64*80 + 112*80) * 4 = 84,992 bytes of scratch. */
    adnn_tune_options o;
    adnn_tune_options_init(&o);
    if (adnn_context_get_tune_options(ctx, &o) != ADNN_STATUS_SUCCESS)
      diag("get_tune_options: %s", adnn_last_error());
    const size_t old_limit = o.workspace_limit;
    o.workspace_limit = 84991;
    adnn_context_set_tune_options(ctx, &o);
    ok(gemm_checked(ctx, 0, ADNN_NO_TRANS, 112, 80, 64) && db_count(cache, "m=112 n=80 k=64") == 0,
       "scratch one byte above the workspace limit: right, not measured, no entry");
    o.workspace_limit = 84992;
    adnn_context_set_tune_options(ctx, &o);
    /* 80x112x64: the same 84,992 bytes, exactly the limit. */
    ok(gemm_checked(ctx, 0, ADNN_NO_TRANS, 80, 112, 64) &&
           db_count(cache, "m=80 n=112 k=64") == (two ? 1 : 0),
       "a shape whose scratch is exactly the limit is measured");
    o.workspace_limit = old_limit;
    adnn_context_set_tune_options(ctx, &o);
  }

  if (two) {
    /* 3. Imported entries: a foreign name is ignored; each real one is used. */
    const char *names[3] = {"no-such-gemm", "engine", "openblas"};
    const int64_t ms[3] = {72, 88, 104};
    char ident[2048] = "";
    {
      /* The device part of the key, copied from the entry measured above. */
      char path[600], line[4096];
      snprintf(path, sizeof path, "%s/export.txt", cache);
      FILE *f = fopen(path, "r");
      while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, strlen(key)) == 0) {
          char *rest = line + strlen(key); /* \t backend \t device \t version \t ... */
          char *p = rest;
          for (int i = 0; i < 3 && p; i++) p = strchr(p + 1, '\t');
          if (p) {
            size_t len = (size_t)(p - rest);
            if (len < sizeof ident) {
              memcpy(ident, rest, len);
              ident[len] = '\0';
            }
          }
        }
      if (f) fclose(f);
    }
    for (int i = 0; i < 3; i++) {
      char path[600], k2[128];
      snprintf(k2, sizeof k2, "gemm f32 ta=0 tb=0 m=%lld n=64 k=64", (long long)ms[i]);
      snprintf(path, sizeof path, "%s/import-%d.txt", cache, i);
      FILE *f = fopen(path, "w");
      if (f) {
        fprintf(f, "adnn-perfdb 1\n%s%s\t%s\t1.0\t0\n", k2, ident, names[i]);
        fclose(f);
      }
      size_t imported = 0;
      adnn_status st = adnn_perfdb_import(path, &imported);
      ok(st == ADNN_STATUS_SUCCESS && imported == 1, "imported an entry naming %s (%s)", names[i],
         st ? adnn_last_error() : "ok");
      adnn_context *c3 = NULL;
      if (adnn_context_create("cpu", &c3) != ADNN_STATUS_SUCCESS) continue;
      ok(gemm_checked(c3, 0, ADNN_NO_TRANS, ms[i], 64, 64), "%lldx64x64 with the entry %s: right",
         (long long)ms[i], names[i]);
      db_algorithm(cache, k2, algo, sizeof algo);
      if (i == 0)
        ok((strcmp(algo, "engine") == 0 || strcmp(algo, "openblas") == 0) && db_time != 1.0,
           "the foreign name was ignored and the shape measured: now %s, %g ms", algo, db_time);
      else
        ok(strcmp(algo, names[i]) == 0 && db_time == 1.0,
           "the entry is used as it is, not measured again (still %s, %g ms)", algo, db_time);
      adnn_context_destroy(c3);
    }
  }

  /* 4. Re-entry from a log callback while the tuner holds its lock. */
  if (two) {
    signal(SIGALRM, on_alarm);
    alarm(120);
    nested_ctx = ctx;
    adnn_log_level old_level = adnn_log_get_level();
    adnn_log_set_callback(nested_gemm_logger, NULL);
    adnn_log_set_level(ADNN_LOG_DEBUG);
    const int outer = gemm_checked(ctx, 0, ADNN_NO_TRANS, 136, 96, 64);
    adnn_log_set_level(old_level);
    adnn_log_set_callback(NULL, NULL);
    alarm(0);
    ok(outer && nested_calls == 1 && nested_right,
       "a GEMM from a log callback during tuning: no deadlock, both results right (%d nested)",
       nested_calls);
    ok(db_count(cache, "m=136 n=96 k=64") == 1 && db_count(cache, "m=120 n=72 k=64") == 1,
       "both shapes were measured and stored");
  }

  adnn_context_destroy(ctx);
  tmpdir_remove(cache);
  return tap_done();
}
