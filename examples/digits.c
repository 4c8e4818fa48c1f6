/* The digits loader, generator and split (examples/digits.h). */
#include "digits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DIGITS_DEFAULT_PATH
#define DIGITS_DEFAULT_PATH "examples/data/digits.txt"
#endif

const char *digits_default_path(void) { return DIGITS_DEFAULT_PATH; }

/* One pixel character: 0-9 then A-G for 10..16 (tools/digits-convert.py). */
static int pixel_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'G') return c - 'A' + 10;
  return -1;
}

int digits_load(const char *path, digits_data *d, char *err, size_t err_size) {
  memset(d, 0, sizeof *d);
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    snprintf(err, err_size, "cannot open %s (see doc/datasets.md)", path);
    return -1;
  }
  char line[256];
  int line_no = 0, n = 0, expected = -1;
  while (fgets(line, sizeof line, f) != NULL) {
    line_no++;
    if (line[0] == '#') continue;
    if (expected < 0) { /* the first data line: the number of images */
      char *end;
      long count = strtol(line, &end, 10);
      if (end == line || count < 1 || count > 100000 || (*end != '\n' && *end != '\0')) break;
      expected = (int)count;
      d->pixels = malloc((size_t)expected * DIGITS_PIXELS * sizeof *d->pixels);
      d->labels = malloc((size_t)expected * sizeof *d->labels);
      if (d->pixels == NULL || d->labels == NULL) {
        snprintf(err, err_size, "out of memory");
        goto fail;
      }
      continue;
    }
    /* "L PPPP...P\n": a label, a space, 64 pixel characters. */
    if (n >= expected || strlen(line) < 2 + DIGITS_PIXELS || line[0] < '0' || line[0] > '9' ||
        line[1] != ' ' || (line[2 + DIGITS_PIXELS] != '\n' && line[2 + DIGITS_PIXELS] != '\0')) {
      snprintf(err, err_size, "%s:%d: not an image line", path, line_no);
      goto fail;
    }
    d->labels[n] = line[0] - '0';
    for (int p = 0; p < DIGITS_PIXELS; p++) {
      int v = pixel_value(line[2 + p]);
      if (v < 0) {
        snprintf(err, err_size, "%s:%d: bad pixel character '%c'", path, line_no, line[2 + p]);
        goto fail;
      }
      d->pixels[(size_t)n * DIGITS_PIXELS + (size_t)p] = (float)v / 8.0f - 1.0f;
    }
    n++;
  }
  if (ferror(f) || expected < 0 || n != expected) {
    snprintf(err, err_size, "%s: expected a count line and %d images, read %d", path,
             expected < 0 ? 0 : expected, n);
    goto fail;
  }
  fclose(f);
  d->count = n;
  return 0;
fail:
  fclose(f);
  digits_free(d);
  return -1;
}

void digits_free(digits_data *d) {
  free(d->pixels);
  free(d->labels);
  memset(d, 0, sizeof *d);
}

uint64_t digits_rng_next(digits_rng *r) {
  uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double digits_rng_uniform(digits_rng *r) {
  return (double)(digits_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

uint32_t digits_rng_below(digits_rng *r, uint32_t n) {
  /* Rejection sampling: the largest multiple of n below 2^32 bounds the draw. */
  uint64_t limit = (UINT64_C(1) << 32) - (UINT64_C(1) << 32) % n;
  for (;;) {
    uint64_t v = digits_rng_next(r) >> 32;
    if (v < limit) return (uint32_t)(v % n);
  }
}

void digits_shuffle(digits_rng *r, int *idx, int n) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)digits_rng_below(r, (uint32_t)i + 1u);
    int t = idx[i];
    idx[i] = idx[j];
    idx[j] = t;
  }
}

int digits_split(const digits_data *d, int **train, int *n_train, int **test, int *n_test) {
  int *order = malloc((size_t)d->count * sizeof *order);
  if (order == NULL) return -1;
  for (int i = 0; i < d->count; i++) order[i] = i;
  digits_rng r = {DIGITS_SPLIT_SEED};
  digits_shuffle(&r, order, d->count);
  *n_train = (int)((long)d->count * 4 / 5);
  *n_test = d->count - *n_train;
  *train = malloc((size_t)*n_train * sizeof **train);
  *test = malloc((size_t)(*n_test > 0 ? *n_test : 1) * sizeof **test);
  if (*train == NULL || *test == NULL) {
    free(*train);
    free(*test);
    free(order);
    return -1;
  }
  memcpy(*train, order, (size_t)*n_train * sizeof *order);
  memcpy(*test, order + *n_train, (size_t)*n_test * sizeof *order);
  free(order);
  return 0;
}
