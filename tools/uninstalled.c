/*
 * See uninstalled.h. Only the tools built by tools/local.mk contain this code;
 * libadnn never looks at where the program runs from.
 */
#include "tools/uninstalled.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef ADNN_TOOLS_BUILD_DIR
#error "tools/local.mk defines ADNN_TOOLS_BUILD_DIR (the build tree's tools directory)"
#endif
#ifndef ADNN_TOOLS_BUILD_PLUGIN_PATH
#error "tools/local.mk defines ADNN_TOOLS_BUILD_PLUGIN_PATH (the build tree's plugin directories)"
#endif

/* Whether directory `dir` (canonical) is `tools` or libtool's `tools/.libs`, where
 * the real executable lies when tools/adnn-info is libtool's wrapper script. */
static int is_build_tools_dir(const char *dir) {
  char tools[PATH_MAX];
  if (realpath(ADNN_TOOLS_BUILD_DIR, tools) == NULL) return 0; /* the build tree is gone */
  size_t n = strlen(tools);
  if (strncmp(dir, tools, n) != 0) return 0;
  return dir[n] == '\0' || strcmp(dir + n, "/.libs") == 0;
}

int adnn_tool_use_build_tree_plugins(void) {
  if (getenv("ADNN_PLUGIN_PATH") != NULL) return 0; /* the user's choice stands */
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) return 0;
  exe[len] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash == NULL) return 0;
  *slash = '\0';
  char dir[PATH_MAX];
  if (realpath(exe, dir) == NULL || !is_build_tools_dir(dir)) return 0;
  return setenv("ADNN_PLUGIN_PATH", ADNN_TOOLS_BUILD_PLUGIN_PATH, 0) == 0;
}
