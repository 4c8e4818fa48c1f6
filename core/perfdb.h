/*
 * The performance database (see include/adnn/tuning.h): a user file and an
 * optional system file of tuning results, plus this process's in-memory
 * entries. Thread-safe. Every failure is a logged warning, never an error to
 * the caller: without a usable file, entries live in memory only.
 *
 * A key is one line without newlines (its parts are joined by tabs) built by the tuner from the
 * canonical problem string, the backend name, the device identity and the
 * versions (adnn's, and the plugin's library/driver versions).
 */
#ifndef ADNN_CORE_PERFDB_H
#define ADNN_CORE_PERFDB_H

#include <stddef.h>

typedef struct adnn__perfdb_entry {
  char algorithm[64];
  double time_ms;
  size_t workspace_bytes;
} adnn__perfdb_entry;

/* Looks `key` up: this process's entries, then the user file, then the
 * system file. Returns 1 and fills *out on a hit; `source` (may be NULL)
 * receives "memory", "user" or "system". */
int adnn__perfdb_lookup(const char *key, adnn__perfdb_entry *out, const char **source);

/* Records a result in memory and in the user file (merged under a lock and
 * written atomically; later writers never lose earlier entries). */
void adnn__perfdb_store(const char *key, const adnn__perfdb_entry *entry);

/* Parses the text of a database file held in memory (`len` bytes, not
 * necessarily NUL-terminated), exactly as a file is read, without touching
 * any file or this process's entries: for the fuzz harness and tests.
 * Warnings about bad lines or a foreign text go to the log like a file
 * read's, naming `name` (NULL: "(memory)"). Returns 0 when the text is a
 * database of this format version (an empty text is one), with the number
 * of distinct valid keys in *entries and of skipped lines in *bad_lines
 * (both may be NULL); -1 when it is ignored as a whole (another format
 * version, no version line, larger than the size limit, or text NULL with a
 * non-zero len). */
int adnn__perfdb_parse(const char *text, size_t len, const char *name, size_t *entries,
                       size_t *bad_lines);

#endif
