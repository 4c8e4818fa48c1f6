/*
 * libFuzzer target: the performance database's reader (core/perfdb.c).
 * The reader only reads files, so the bytes are written to perfdb.txt in a
 * cache directory of our own (ADNN_CACHE_DIR, created once); the process
 * state is reset, the file is loaded (adnn_perfdb_info) and the key of each of
 * the first lines is looked up, then the file is imported as well (the
 * import path parses it a second time with its own checks). Warnings are
 * expected for most inputs and are silenced.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>
#include <adnn/tuning.h>

#include "core/perfdb.h"
#include "t/tmpdir.h"

void adnn__perfdb_reset(void); /* core/perfdb.c, for tests */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char db_path[4096];
static char db_dir[] = "/tmp/adnn-fuzz-perfdb.XXXXXX";

static void remove_dir(void) { tmpdir_remove(db_dir); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  if (mkdtemp(db_dir) == NULL) {
    perror("fuzz-perfdb: mkdtemp");
    abort();
  }
  atexit(remove_dir);
  setenv("ADNN_CACHE_DIR", db_dir, 1);
  setenv("ADNN_SYSTEM_PERFDB", "", 1);
  snprintf(db_path, sizeof db_path, "%s/perfdb.txt", db_dir);
  adnn_log_set_level(ADNN_LOG_ERROR);
  return 0;
}

/* Looks up the key of each of the first lines: everything before the last
 * three tabs, as the format has it. */
static void lookup_keys(const uint8_t *data, size_t size) {
  size_t start = 0;
  for (int line = 0; line < 8 && start < size; line++) {
    size_t end = start;
    while (end < size && data[end] != '\n') end++;
    size_t len = end - start;
    char *key = malloc(len + 1);
    if (key == NULL) return;
    memcpy(key, data + start, len);
    key[len] = '\0';
    for (int tabs = 0; tabs < 3; tabs++) {
      char *t = strrchr(key, '\t');
      if (t == NULL) break;
      *t = '\0';
    }
    adnn__perfdb_entry e;
    const char *source = NULL;
    if (adnn__perfdb_lookup(key, &e, &source) && source == NULL) {
      fprintf(stderr, "fuzz-perfdb: a hit without a source\n");
      abort();
    }
    free(key);
    start = end + 1;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FILE *f = fopen(db_path, "we");
  if (f == NULL) {
    perror("fuzz-perfdb: fopen");
    abort();
  }
  if (size > 0 && fwrite(data, 1, size, f) != size) abort();
  if (fclose(f) != 0) abort();

  adnn__perfdb_reset();
  size_t user_entries = 0, system_entries = 0;
  const char *user = NULL, *system = NULL;
  (void)adnn_perfdb_info(&user, &user_entries, &system, &system_entries);
  lookup_keys(data, size);
  size_t imported = 0;
  (void)adnn_perfdb_import(db_path, &imported);
  adnn__perfdb_reset();
  return 0;
}
