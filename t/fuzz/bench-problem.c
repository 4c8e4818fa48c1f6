/*
 * libFuzzer target: adnn-bench's problem parser (tools/bench_problem.c).
 * Bytes are one problem string; when it parses, its canonical form must parse
 * too, to the same problem (field by field: the parser zeroes the struct
 * first, so padding compares equal) whose canonical form is the same string
 * (the canonical
 * string is what "repro" lines and ADNN_VERBOSE print, so a form that does not
 * parse back would describe a problem nobody can rerun). The work counts are
 * computed as well, because they multiply the parsed sizes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench_problem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* The parser takes a C string: stop at the first NUL, as a line would. */
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';

  bench_problem p, q;
  char err[256];
  if (bench_problem_parse(text, &p, err, sizeof err) == 0) {
    (void)bench_problem_flops(&p);
    (void)bench_problem_bytes(&p, 4);
    char canon[1024], again[1024];
    bench_problem_format(&p, canon, sizeof canon);
    if (bench_problem_parse(canon, &q, err, sizeof err) != 0) {
      fprintf(stderr, "canonical form of \"%s\" does not parse: \"%s\": %s\n", text, canon, err);
      abort();
    }
    if (memcmp(&p, &q, sizeof p) != 0) {
      fprintf(stderr, "canonical form \"%s\" of \"%s\" describes a different problem\n", canon,
              text);
      abort();
    }
    bench_problem_format(&q, again, sizeof again);
    if (strcmp(canon, again) != 0) {
      fprintf(stderr, "canonical form of \"%s\" is not stable: \"%s\" then \"%s\"\n", text, canon,
              again);
      abort();
    }
  }
  free(text);
  return 0;
}
