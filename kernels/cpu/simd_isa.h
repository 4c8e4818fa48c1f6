/*
 * The instruction sets the CPU vector kernels are compiled for: the one list
 * of them, and the instantiation of a kernel's vector code once per set.
 * Adding an instruction set means a row in ADNN_CPU_ISA_LIST, an id below and
 * a block in simd_instantiate.h; the vector
 * helpers of simd.h fall back to portable code for a set they have no
 * intrinsics for.
 *
 * Why instantiate: every vector kernel exists once per instruction set (so
 * one binary runs everywhere and uses the best the machine has), and we do
 * not want hand-written copies. A kernel file therefore writes its vector
 * code once, in a section guarded by ADNN_SIMD_VECTOR_PART, against the names
 * of simd.h (VF, VI, VL, NAME(...)), and asks simd_instantiate.h to compile
 * that section under every instruction set:
 *
 *     #define ADNN_SIMD_KERNEL "kernels/cpu/softmax.c"
 *     #include "kernels/cpu/simd_instantiate.h"
 *
 * Each copy's names end in the instruction set's suffix (NAME(f) is
 * f##__avx512, f##__avx2 or f##__base), so the file then holds, for example,
 * adnn_f32_softmax__avx512, adnn_f32_softmax__avx2 and adnn_f32_softmax__base,
 * which ADNN_CPU_ISA_TABLE collects into a table indexed by ADNN_CPU_ISA_*.
 * The kernel's reshape step picks its entry with the level the plugin chose
 * (adnn_cpu_env.isa), so execution never dispatches on the instruction set.
 */
#ifndef ADNN_CPU_SIMD_ISA_H
#define ADNN_CPU_SIMD_ISA_H

/* Instruction set ids, ordered from the least to the most capable so that a
 * cap is a minimum. Plain macros, because the vector code tests them with
 * #if to use an intrinsic where one exists. */
#define ADNN_CPU_ISA_BASE 0   /* SSE2 on x86-64, whatever the compiler targets elsewhere */
#define ADNN_CPU_ISA_AVX2 1   /* AVX2, FMA and F16C (the F16 conversions, kernels/cpu/lowp.c) */
#define ADNN_CPU_ISA_AVX512 2 /* AVX-512F */
#define ADNN_CPU_ISA_COUNT 3

/* X(NAME, name, usable, arg), the most capable first. `name` is the suffix of
 * the instruction set's copies and the value of ADNN_CPU_SIMD that caps the
 * level at it; `usable` tells from an adnn_cpu_features *f whether the CPU
 * and the OS both support it; `arg` is passed through unchanged, so that a
 * caller can expand the list with a parameter (ADNN_CPU_ISA_TABLE does). */
#define ADNN_CPU_ISA_LIST(X, arg)                  \
  X(AVX512, avx512, (f)->avx512f, arg)             \
  X(AVX2, avx2, (f)->avx2 && (f)->fma && (f)->f16c, arg) \
  X(BASE, base, 1, arg)

/* A designated initializer of an array indexed by ADNN_CPU_ISA_* holding the
 * address of each instruction set's copy of `body`:
 *     static const fns *const table[ADNN_CPU_ISA_COUNT] = ADNN_CPU_ISA_TABLE(adnn_f32_softmax);
 */
#define ADNN_CPU_ISA_TABLE_ENTRY_(NAME, name, usable, body) [ADNN_CPU_ISA_##NAME] = &body##__##name,
#define ADNN_CPU_ISA_TABLE(body) {ADNN_CPU_ISA_LIST(ADNN_CPU_ISA_TABLE_ENTRY_, body)}

#endif /* ADNN_CPU_SIMD_ISA_H */
