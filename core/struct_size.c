/*
 * The struct_size rule ("read up to here", doc/versioning.md) for the structs
 * callers fill (op descriptors, tuning options). A struct whose struct_size
 * reaches the end of its first released layout is accepted; the fields it
 * does not have take their *_init() defaults. A struct_size larger than this
 * library's layout (a program built against a newer header) is accepted only
 * when the bytes this library does not know are all zero, i.e. the program
 * left every newer field at its default; otherwise the call is refused, since
 * silently ignoring a field the caller set would compute something other than
 * what was asked.
 */
#include "config.h"

#include <string.h>

#include "core/internal.h"

adnn_status adnn__read_struct(const char *func, const char *type, const char *init,
                              const void *src, size_t min_size, size_t size, void *dst) {
  size_t have;
  memcpy(&have, src, sizeof have); /* every such struct starts with size_t struct_size */
  if (have < min_size)
    return adnn__fail(ADNN_STATUS_BAD_PARAM,
                      "%s: struct_size of the %s is %zu but at least %zu is needed; initialize "
                      "it with %s()", func, type, have, min_size, init);
  if (have > size) {
    const unsigned char *extra = (const unsigned char *)src + size;
    for (size_t i = 0; i < have - size; i++)
      if (extra[i] != 0)
        return adnn__fail(ADNN_STATUS_BAD_PARAM,
                          "%s: struct_size of the %s is %zu but this adnn %s knows only %zu "
                          "bytes of it, and byte %zu beyond them is not zero: the program sets "
                          "a field added in a later adnn; upgrade libadnn, or leave that field "
                          "at its %s() default", func, type, have, ADNN_VERSION_STRING, size,
                          size + i, init);
  }
  /* dst holds the defaults; the caller's bytes replace what it has of them. */
  memcpy(dst, src, have < size ? have : size);
  memcpy(dst, &size, sizeof size);
  return ADNN_STATUS_SUCCESS;
}
