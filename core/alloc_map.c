/*
 * The memory a context knows: its adnn_malloc allocations and the regions
 * registered with adnn_memory_register, kept as a sorted array of disjoint
 * regions. The pointer checks of every call ask "which region holds
 * [p, p+n)", a binary search (O(log n)); inserting and removing move the tail
 * of the array (O(n)), which is cheap next to the allocation itself. Not
 * thread-safe by itself; the context locks it.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

/* The index of the first region whose base is greater than p. */
static size_t upper_bound(const adnn__alloc_map *map, uintptr_t p) {
  size_t lo = 0, hi = map->count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (map->regions[mid].base <= p)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static uintptr_t region_end(const adnn__region *r) { return r->base + r->size; }

const adnn__region *adnn__alloc_map_find(const adnn__alloc_map *map, uintptr_t p) {
  size_t i = upper_bound(map, p);
  if (i == 0) return NULL;
  const adnn__region *r = &map->regions[i - 1];
  return p < region_end(r) ? r : NULL;
}

const adnn__region *adnn__alloc_map_at(const adnn__alloc_map *map, uintptr_t base) {
  const adnn__region *r = adnn__alloc_map_find(map, base);
  return r != NULL && r->base == base ? r : NULL;
}

const adnn__region *adnn__alloc_map_overlap(const adnn__alloc_map *map, uintptr_t p, size_t n) {
  /* The region containing p, if any, is the lowest overlapping one; else the
   * first region starting after p overlaps when it starts before p + n. */
  size_t i = upper_bound(map, p);
  if (i > 0 && p < region_end(&map->regions[i - 1])) return &map->regions[i - 1];
  if (i < map->count && map->regions[i].base - p < n) return &map->regions[i];
  return NULL;
}

int adnn__alloc_map_insert(adnn__alloc_map *map, uintptr_t base, size_t size,
                           adnn__region_kind kind, adnn__region *clash) {
  const adnn__region *o = adnn__alloc_map_overlap(map, base, size);
  if (o != NULL) {
    if (clash != NULL) *clash = *o;
    return -1;
  }
  if (map->count == map->capacity) {
    size_t cap = map->capacity ? map->capacity * 2 : 16;
    adnn__region *grown = realloc(map->regions, cap * sizeof *grown);
    if (grown == NULL) return 0;
    map->regions = grown;
    map->capacity = cap;
  }
  size_t i = upper_bound(map, base);
  memmove(&map->regions[i + 1], &map->regions[i], (map->count - i) * sizeof *map->regions);
  map->regions[i].base = base;
  map->regions[i].size = size;
  map->regions[i].kind = kind;
  map->count++;
  return 1;
}

int adnn__alloc_map_remove(adnn__alloc_map *map, uintptr_t base) {
  const adnn__region *r = adnn__alloc_map_at(map, base);
  if (r == NULL) return 0;
  size_t i = (size_t)(r - map->regions);
  memmove(&map->regions[i], &map->regions[i + 1], (map->count - i - 1) * sizeof *map->regions);
  map->count--;
  return 1;
}

void adnn__alloc_map_free(adnn__alloc_map *map) {
  free(map->regions);
  map->regions = NULL;
  map->count = map->capacity = 0;
}
