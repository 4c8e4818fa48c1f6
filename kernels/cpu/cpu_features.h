/*
 * What the CPU can do and what the OS lets it do. A SIMD code path may only be
 * chosen when both agree: CPUID says the instructions exist, XCR0 says the OS
 * saves the registers they use (AVX needs the YMM state, AVX-512 additionally
 * the opmask and ZMM states).
 */
#ifndef ADNN_CPU_FEATURES_H
#define ADNN_CPU_FEATURES_H

typedef struct adnn_cpu_features {
  char vendor[16];
  char model[64];  /* CPUID brand string, trimmed */
  int family, model_number;
  int sse42, avx, fma, f16c, avx2;                  /* usable (CPU and OS) */
  int avx512f, avx512dq, avx512bw, avx512vl, avx512_vnni, avx512_bf16; /* usable */
  int os_saves_ymm, os_saves_zmm;                    /* from XCR0 */
  int cpu_has_avx512f;                               /* CPUID only, to explain a mismatch */
} adnn_cpu_features;

/* Detects once and returns the cached result. Thread-safe. */
const adnn_cpu_features *adnn_cpu_features_get(void);

/* "avx2 fma avx512f ..." of the usable features, into buf. */
void adnn_cpu_features_describe(const adnn_cpu_features *f, char *buf, unsigned long size);

/* The number of CPUs this process may run on (sched_getaffinity), at least 1. */
int adnn_cpu_available_count(void);

#endif
