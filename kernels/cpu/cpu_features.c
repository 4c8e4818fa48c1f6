/* CPU feature detection through CPUID and XGETBV (see cpu_features.h). */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernels/cpu/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static unsigned long long read_xcr0(void) {
  unsigned eax, edx;
  /* xgetbv with ecx = 0; encoded as bytes so that no -mxsave is needed. */
  __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(eax), "=d"(edx) : "c"(0));
  return ((unsigned long long)edx << 32) | eax;
}

static void detect_x86(adnn_cpu_features *f) {
  unsigned a = 0, b = 0, c = 0, d = 0, max_leaf = 0;
  if (!__get_cpuid(0, &max_leaf, &b, &c, &d)) return;
  memcpy(f->vendor, &b, 4);
  memcpy(f->vendor + 4, &d, 4);
  memcpy(f->vendor + 8, &c, 4);
  f->vendor[12] = '\0';

  unsigned max_ext = __get_cpuid_max(0x80000000u, NULL);
  if (max_ext >= 0x80000004u) {
    unsigned regs[12];
    for (unsigned i = 0; i < 3; i++)
      __get_cpuid(0x80000002u + i, &regs[4 * i], &regs[4 * i + 1], &regs[4 * i + 2], &regs[4 * i + 3]);
    char brand[49];
    memcpy(brand, regs, 48);
    brand[48] = '\0';
    const char *s = brand;
    while (*s == ' ') s++;
    snprintf(f->model, sizeof f->model, "%s", s);
    size_t n = strlen(f->model);
    while (n > 0 && f->model[n - 1] == ' ') f->model[--n] = '\0';
  }

  __get_cpuid(1, &a, &b, &c, &d);
  unsigned base_family = (a >> 8) & 0xf, ext_family = (a >> 20) & 0xff;
  unsigned base_model = (a >> 4) & 0xf, ext_model = (a >> 16) & 0xf;
  f->family = (int)(base_family == 0xf ? base_family + ext_family : base_family);
  f->model_number = (int)((base_family == 0x6 || base_family == 0xf) ? (ext_model << 4) | base_model : base_model);
  int osxsave = (c >> 27) & 1;
  int cpu_avx = (c >> 28) & 1, cpu_fma = (c >> 12) & 1, cpu_f16c = (c >> 29) & 1;
  f->sse42 = (c >> 20) & 1;

  unsigned long long xcr0 = osxsave ? read_xcr0() : 0;
  f->os_saves_ymm = (xcr0 & 0x6) == 0x6;            /* SSE and AVX state */
  f->os_saves_zmm = f->os_saves_ymm && (xcr0 & 0xe0) == 0xe0; /* opmask, ZMM_Hi256, Hi16_ZMM */

  f->avx = cpu_avx && f->os_saves_ymm;
  f->fma = cpu_fma && f->avx;
  f->f16c = cpu_f16c && f->avx;
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    f->avx2 = ((b >> 5) & 1) && f->avx;
    f->cpu_has_avx512f = (b >> 16) & 1;
    f->avx512f = f->cpu_has_avx512f && f->os_saves_zmm;
    f->avx512dq = ((b >> 17) & 1) && f->avx512f;
    f->avx512bw = ((b >> 30) & 1) && f->avx512f;
    f->avx512vl = ((b >> 31) & 1) && f->avx512f;
    f->avx512_vnni = ((c >> 11) & 1) && f->avx512f;
    unsigned max_sub = a;
    if (max_sub >= 1) {
      __cpuid_count(7, 1, a, b, c, d);
      f->avx512_bf16 = ((a >> 5) & 1) && f->avx512f;
    }
  }
}
#endif

static adnn_cpu_features features;
static pthread_once_t features_once = PTHREAD_ONCE_INIT;

static void detect(void) {
  memset(&features, 0, sizeof features);
  snprintf(features.model, sizeof features.model, "unknown CPU");
#if defined(__x86_64__) || defined(__i386__)
  detect_x86(&features);
#endif
}

const adnn_cpu_features *adnn_cpu_features_get(void) {
  pthread_once(&features_once, detect);
  return &features;
}

void adnn_cpu_features_describe(const adnn_cpu_features *f, char *buf, unsigned long size) {
  static const struct {
    const char *name;
    size_t offset;
  } list[] = {
      {"sse4.2", offsetof(adnn_cpu_features, sse42)},
      {"avx", offsetof(adnn_cpu_features, avx)},
      {"fma", offsetof(adnn_cpu_features, fma)},
      {"f16c", offsetof(adnn_cpu_features, f16c)},
      {"avx2", offsetof(adnn_cpu_features, avx2)},
      {"avx512f", offsetof(adnn_cpu_features, avx512f)},
      {"avx512dq", offsetof(adnn_cpu_features, avx512dq)},
      {"avx512bw", offsetof(adnn_cpu_features, avx512bw)},
      {"avx512vl", offsetof(adnn_cpu_features, avx512vl)},
      {"avx512_vnni", offsetof(adnn_cpu_features, avx512_vnni)},
      {"avx512_bf16", offsetof(adnn_cpu_features, avx512_bf16)},
  };
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) {
    int on = *(const int *)((const char *)f + list[i].offset);
    if (!on || used >= size) continue;
    int w = snprintf(buf + used, size - used, "%s%s", used ? " " : "", list[i].name);
    if (w > 0) used += (size_t)w;
  }
  if (used == 0) snprintf(buf, size, "baseline");
}

int adnn_cpu_available_count(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}
