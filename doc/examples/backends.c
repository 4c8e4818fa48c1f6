/* Backends: what plugins were found, in which state, and what "auto" picks. */
#include <stdio.h>

#include <adnn.h>

static const char *state_name(adnn_backend_state s) {
  switch (s) {
    case ADNN_BACKEND_READY: return "ready";
    case ADNN_BACKEND_UNAVAILABLE: return "unavailable";
    case ADNN_BACKEND_INCOMPATIBLE: return "incompatible";
    case ADNN_BACKEND_LOAD_FAILED: return "load failed";
  }
  return "?";
}

int main(void) {
  const char *path, *source;
  adnn_backend_search_path(&path, &source);
  printf("plugin search path: %s (from %s)\n", path, source);

  size_t count;
  if (adnn_backend_count(&count) != ADNN_STATUS_SUCCESS) return 1;
  for (size_t i = 0; i < count; i++) {
    const adnn_backend_info *b;
    if (adnn_backend_get(i, &b) != ADNN_STATUS_SUCCESS) return 1;
    printf("%-6s %-12s %zu device(s)  %s\n", b->name, state_name(b->state), b->device_count,
           b->reason);
  }

  const char *name, *reason;
  if (adnn_backend_auto_choice(&name, &reason) != ADNN_STATUS_SUCCESS) {
    printf("no backend is ready: %s\n", reason);
    return 1;
  }
  printf("auto -> %s: %s\n", name, reason);
  return 0;
}
