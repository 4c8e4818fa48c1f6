/* The CPU kernels' F16/BF16 block conversions (kernels/cpu/lowp.c) against
 * the scalar rules of kernels/common/float16.h, bit for bit: every 16-bit
 * pattern widened, and F32 values narrowed (every F32 whose top half is any
 * pattern, with low halves at the rounding boundaries and random ones), at
 * every instruction set this CPU has (AVX-512 is skipped where absent). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/float16.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/lowp.h"
#include "kernels/cpu/simd_isa.h"
#include "t/tap.h"

static const uint32_t lows[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x7fff, 0x8000,
                                0x8001, 0xbfff, 0xffff, 0x2345, 0xd00d};

int main(void) {
  const adnn_cpu_features *f = adnn_cpu_features_get();
  const int usable[3] = {1, f->avx2 && f->fma && f->f16c, f->avx512f};
  const char *names[3] = {"base", "avx2", "avx512"};
  const int isas[3] = {ADNN_CPU_ISA_BASE, ADNN_CPU_ISA_AVX2, ADNN_CPU_ISA_AVX512};
  const size_t n16 = 65536, n32 = 65536 * (sizeof lows / sizeof lows[0]);
  uint16_t *h = malloc(n16 * 2), *h2 = malloc(n32 * 2);
  float *w = malloc(n16 * 4), *x = malloc(n32 * 4);
  if (!h || !h2 || !w || !x) tap_bail("out of memory");
  for (size_t i = 0; i < n16; i++) h[i] = (uint16_t)i;
  for (size_t j = 0; j < sizeof lows / sizeof lows[0]; j++)
    for (size_t i = 0; i < 65536; i++) x[j * 65536 + i] = adnn_f32_from_bits((uint32_t)i << 16 | lows[j]);
  for (int k = 0; k < 3; k++) {
    if (!usable[k]) {
      tap_skip(names[k]);
      continue;
    }
    for (int t = 0; t < 2; t++) {
      const adnn_dtype dt = t ? ADNN_DTYPE_BF16 : ADNN_DTYPE_F16;
      const char *tn = t ? "bf16" : "f16";
      /* Every pattern, in two calls: an odd length that leaves a scalar tail
       * after the vector loop, then the last 3 patterns (NaNs) on their own. */
      adnn_cpu_lowp_to_f32(isas[k], dt, h, w, n16 - 3);
      adnn_cpu_lowp_to_f32(isas[k], dt, h + n16 - 3, w + n16 - 3, 3);
      size_t bad = 0;
      for (size_t i = 0; i < n16; i++) {
        const float want = t ? adnn_bf16_to_f32(h[i]) : adnn_f16_to_f32(h[i]);
        if (adnn_f32_bits(w[i]) != adnn_f32_bits(want)) bad++;
      }
      ok(bad == 0, "%s: %s -> f32 of every pattern bit-exact (%zu differ)", names[k], tn, bad);
      adnn_cpu_lowp_from_f32(isas[k], dt, x, h2, n32 - 5);
      bad = 0;
      for (size_t i = 0; i < n32 - 5; i++) {
        const uint16_t want = t ? adnn_f32_to_bf16(x[i]) : adnn_f32_to_f16(x[i]);
        if (h2[i] != want) bad++;
      }
      ok(bad == 0, "%s: f32 -> %s bit-exact on %zu values (ties, NaNs, subnormals; %zu differ)",
         names[k], tn, n32 - 5, bad);
      /* The strided forms: every third pattern gathered (a length past two
       * stack blocks, with a tail), and every third slot scattered, with the
       * slots between them left alone. */
      const size_t ns = 1201;
      adnn_cpu_lowp_to_f32_strided(isas[k], dt, h + 5, 3, w, ns);
      bad = 0;
      for (size_t i = 0; i < ns; i++) {
        const uint16_t p = h[5 + 3 * i];
        const float want = t ? adnn_bf16_to_f32(p) : adnn_f16_to_f32(p);
        if (adnn_f32_bits(w[i]) != adnn_f32_bits(want)) bad++;
      }
      ok(bad == 0, "%s: %s strided (3) -> f32 bit-exact on %zu patterns (%zu differ)", names[k], tn,
         ns, bad);
      for (size_t i = 0; i < 3 * ns; i++) h2[i] = 0xabcd;
      adnn_cpu_lowp_from_f32_strided(isas[k], dt, x + 77, h2, 3, ns);
      bad = 0;
      for (size_t i = 0; i < 3 * ns; i++) {
        const uint16_t want =
            i % 3 ? 0xabcd : (t ? adnn_f32_to_bf16(x[77 + i / 3]) : adnn_f32_to_f16(x[77 + i / 3]));
        if (h2[i] != want) bad++;
      }
      ok(bad == 0, "%s: f32 -> %s strided (3) bit-exact, gaps untouched (%zu differ)", names[k],
         tn, bad);
    }
  }
  free(h);
  free(h2);
  free(w);
  free(x);
  return tap_done();
}
