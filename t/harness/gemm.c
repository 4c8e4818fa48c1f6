/* The oracle of adnn_gemm, for adnn-bench's gemm: problems. GEMM is no op of
 * the manifest (it has no plan), so it has no traits; its tolerance is
 * harness_dot_tolerance with the k terms of each dot product. */
#include "t/harness/harness.h"

void harness_gemm_oracle(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                         const double *a, const double *b, double *c, int64_t row_step) {
  const int64_t lda = trans_a ? m : k, ldb = trans_b ? k : n;
  for (int64_t i = 0; i < m; i += row_step)
    for (int64_t j = 0; j < n; j++) {
      harness_sum sum;
      harness_sum_init(&sum);
      for (int64_t l = 0; l < k; l++)
        harness_sum_add(&sum, (long double)(trans_a ? a[l * lda + i] : a[i * lda + l]) *
                                  (trans_b ? b[j * ldb + l] : b[l * ldb + j]));
      c[i * n + j] = (double)harness_sum_value(&sum);
    }
}
