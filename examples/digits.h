/*
 * The UCI 8x8 handwritten digits for the training examples: the loader of
 * examples/data/digits.txt (format and attribution: doc/datasets.md), a
 * seeded pseudo-random generator that gives the same numbers on every
 * machine, and the fixed 80/20 train/test split.
 */
#ifndef ADNN_EXAMPLES_DIGITS_H
#define ADNN_EXAMPLES_DIGITS_H

#include <stddef.h>
#include <stdint.h>

#define DIGITS_PIXELS 64 /* 8x8, one channel */
#define DIGITS_CLASSES 10

typedef struct digits_data {
  int count;
  float *pixels;   /* count x 64, each pixel v in 0..16 stored as v / 8 - 1 (range -1..1) */
  int32_t *labels; /* count labels in 0..9 */
} digits_data;

/* The data file the build tree's examples read: DIGITS_DEFAULT_PATH (the
 * source tree's examples/data/digits.txt, an absolute path set by
 * examples/local.mk, so that VPATH builds and 'make distcheck' find it). */
const char *digits_default_path(void);

/* Reads path into *d. Returns 0, or -1 with a message in err. */
int digits_load(const char *path, digits_data *d, char *err, size_t err_size);
void digits_free(digits_data *d);

/* splitmix64: a small generator with a 64-bit state whose output is the same
 * everywhere, so that the split, the shuffles and the initial weights are. */
typedef struct digits_rng {
  uint64_t state;
} digits_rng;
uint64_t digits_rng_next(digits_rng *r);
/* A uniform double in [0, 1) from the top 53 bits. */
double digits_rng_uniform(digits_rng *r);
/* A uniform integer in 0..n-1 (n >= 1), without modulo bias. */
uint32_t digits_rng_below(digits_rng *r, uint32_t n);
/* Fisher-Yates shuffle of idx[0..n-1]. */
void digits_shuffle(digits_rng *r, int *idx, int n);

/* The fixed split: the images in a seeded random order (seed
 * DIGITS_SPLIT_SEED), the first floor(count * 4 / 5) for training and the
 * rest for testing. *train and *test are malloc'd index arrays. Returns 0,
 * or -1 when out of memory. */
#define DIGITS_SPLIT_SEED 20260101u
int digits_split(const digits_data *d, int **train, int *n_train, int **test, int *n_test);

#endif
