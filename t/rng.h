/*
 * Seeded pseudo-random numbers for the tests and the conformance harness
 * (xorshift64*): the same sequence on every platform, so that a case seeded
 * from its name always sees the same data. Header-only, no state of its own.
 */
#ifndef ADNN_TEST_RNG_H
#define ADNN_TEST_RNG_H

#include <stdint.h>

typedef struct tap_rng {
  uint64_t s;
} tap_rng;

static inline tap_rng tap_rng_seed(uint64_t seed) {
  tap_rng r = {seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull};
  if (r.s == 0) r.s = 1;
  return r;
}

static inline uint64_t tap_rng_next(tap_rng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 0x2545F4914F6CDD1Dull;
}

/** Uniform in [lo, hi). */
static inline double tap_rng_uniform(tap_rng *r, double lo, double hi) {
  return lo + (hi - lo) * (double)(tap_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

#endif /* ADNN_TEST_RNG_H */
