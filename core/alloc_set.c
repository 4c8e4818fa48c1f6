/*
 * The allocation registry of a context: a set of live pointers (open
 * addressing, linear probing) used to catch double frees and frees of foreign
 * pointers. Not thread-safe by itself; the context locks it.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "core/internal.h"

char adnn__tombstone;

static size_t slot_of(const void *p, size_t cap) {
  /* Allocations are at least 64-byte aligned; drop the zero bits, then mix. */
  uint64_t h = (uint64_t)(uintptr_t)p >> 6;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return (size_t)h & (cap - 1);
}

static int rehash(adnn__alloc_set *set, size_t cap) {
  void **keys = calloc(cap, sizeof *keys);
  if (keys == NULL) return 0;
  for (size_t i = 0; i < set->capacity; i++) {
    void *p = set->keys[i];
    if (p == NULL || p == ADNN__TOMBSTONE) continue;
    size_t s = slot_of(p, cap);
    while (keys[s] != NULL) s = (s + 1) & (cap - 1);
    keys[s] = p;
  }
  free(set->keys);
  set->keys = keys;
  set->capacity = cap;
  set->used = set->live;
  return 1;
}

int adnn__alloc_set_insert(adnn__alloc_set *set, void *ptr) {
  if ((set->used + 1) * 2 > set->capacity) {
    /* Rebuild at a load of at most 1/4, which also clears the tombstones. */
    size_t cap = 16;
    while ((set->live + 1) * 4 > cap) cap *= 2;
    if (!rehash(set, cap)) return 0;
  }
  size_t s = slot_of(ptr, set->capacity);
  while (set->keys[s] != NULL && set->keys[s] != ADNN__TOMBSTONE) s = (s + 1) & (set->capacity - 1);
  if (set->keys[s] == NULL) set->used++;
  set->keys[s] = ptr;
  set->live++;
  return 1;
}

int adnn__alloc_set_remove(adnn__alloc_set *set, void *ptr) {
  if (set->capacity == 0) return 0;
  size_t s = slot_of(ptr, set->capacity);
  for (size_t probes = 0; probes < set->capacity; probes++) {
    void *k = set->keys[s];
    if (k == NULL) return 0;
    if (k == ptr) {
      set->keys[s] = ADNN__TOMBSTONE;
      set->live--;
      return 1;
    }
    s = (s + 1) & (set->capacity - 1);
  }
  return 0;
}

void adnn__alloc_set_free(adnn__alloc_set *set) {
  free(set->keys);
  set->keys = NULL;
  set->capacity = set->used = set->live = 0;
}

/* ---- public functions ---- */
