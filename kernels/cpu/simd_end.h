/* Closes a vector region opened by kernels/cpu/simd.h (see there). */
#if defined(__clang__)
#if ADNN_SIMD_ISA != 0
#pragma clang attribute pop
#endif
#else
#pragma GCC pop_options
#endif
#undef VL
#undef NAME
#undef VF
#undef VI
#undef VDH
#undef SIMD_INLINE
#undef ADNN_SIMD_ISA
