/*
 * adnn-info: the doctor. Prints the library version, the plugin search path,
 * every plugin found with its state, reason, versions and devices, and what
 * "auto" picks and why, and the performance database files with their entry
 * counts. --json prints the same as one JSON object.
 *
 * Built only on the public API, so it shows exactly what an application sees.
 * It ends by creating a context the way an application would ("auto", or the
 * backend named by --backend=NAME, which also limits the list to that
 * backend), because a plugin can be listed as ready, or chosen through
 * ADNN_BACKEND, and still fail to give a context.
 * Exit status: 0 when that context was created, 1 when it was not, 2 on a
 * usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

#include "tools/uninstalled.h"

/* Whether plugin `name` is the one a request for `want` ("cpu", "cuda:1") is
 * about; NULL or "auto" selects every plugin. */
static int plugin_selected(const char *name, const char *want) {
  if (want == NULL || strcmp(want, "auto") == 0) return 1;
  size_t n = strcspn(want, ":");
  return strlen(name) == n && strncmp(name, want, n) == 0;
}

/* The outcome of creating a context the way an application would. */
typedef struct context_trial {
  const char *request; /* what was asked for: "auto" or --backend's NAME */
  adnn_status status;
  char error[512];     /* adnn_last_error() on failure */
  char backend[64];    /* on success: the backend and device that ran */
  int device;
} context_trial;

static void try_context(const char *request, context_trial *t) {
  memset(t, 0, sizeof *t);
  t->request = request;
  adnn_context *ctx = NULL;
  t->status = adnn_context_create(request, &ctx);
  if (t->status != ADNN_STATUS_SUCCESS) {
    snprintf(t->error, sizeof t->error, "%s", adnn_last_error());
    t->device = -1;
    return;
  }
  snprintf(t->backend, sizeof t->backend, "%s", adnn_context_get_backend(ctx));
  t->device = adnn_context_get_device(ctx);
  adnn_context_destroy(ctx);
}

static void json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    switch (*p) {
      case '"': fputs("\\\"", out); break;
      case '\\': fputs("\\\\", out); break;
      case '\n': fputs("\\n", out); break;
      case '\r': fputs("\\r", out); break;
      case '\t': fputs("\\t", out); break;
      default:
        if (*p < 0x20) fprintf(out, "\\u%04x", *p);
        else fputc(*p, out);
    }
  }
  fputc('"', out);
}

static void json_properties(FILE *out, size_t n, const adnn_property *props) {
  fputc('{', out);
  for (size_t i = 0; i < n; i++) {
    if (i) fputs(", ", out);
    json_string(out, props[i].key);
    fputs(": ", out);
    json_string(out, props[i].value);
  }
  fputc('}', out);
}

/* The performance database: paths (null when there is none) and entry counts. */
static void json_perfdb(FILE *out) {
  const char *user = NULL, *sys = NULL;
  size_t user_n = 0, sys_n = 0;
  adnn_perfdb_info(&user, &user_n, &sys, &sys_n);
  fprintf(out, "{\"user_path\": ");
  if (user) json_string(out, user);
  else fputs("null", out);
  fprintf(out, ", \"user_entries\": %zu, \"system_path\": ", user_n);
  if (sys) json_string(out, sys);
  else fputs("null", out);
  fprintf(out, ", \"system_entries\": %zu}", sys_n);
}

static void text_perfdb(FILE *out) {
  const char *user = NULL, *sys = NULL;
  size_t user_n = 0, sys_n = 0;
  adnn_perfdb_info(&user, &user_n, &sys, &sys_n);
  fprintf(out, "performance database:\n");
  if (user)
    fprintf(out, "  user    %s (%zu entr%s)\n", user, user_n, user_n == 1 ? "y" : "ies");
  else
    fprintf(out, "  user    none (no cache directory: set ADNN_CACHE_DIR or HOME)\n");
  if (sys)
    fprintf(out, "  system  %s (%zu entr%s)\n", sys, sys_n, sys_n == 1 ? "y" : "ies");
  else
    fprintf(out, "  system  none installed\n");
}

static int print_json(FILE *out, const char *want, int build_tree) {
  const char *path, *source, *auto_name = "", *auto_reason = "";
  adnn_backend_search_path(&path, &source);
  adnn_status auto_st = adnn_backend_auto_choice(&auto_name, &auto_reason);
  size_t count = 0;
  adnn_backend_count(&count);
  fprintf(out, "{\n  \"version\": ");
  json_string(out, adnn_version_string());
  fprintf(out, ",\n  \"plugin_path\": ");
  json_string(out, path);
  fprintf(out, ",\n  \"plugin_path_source\": ");
  json_string(out, source);
  fprintf(out, ",\n  \"build_tree\": %s", build_tree ? "true" : "false");
  fprintf(out, ",\n  \"plugins\": [");
  size_t shown = 0;
  for (size_t i = 0; i < count; i++) {
    const adnn_backend_info *b;
    if (adnn_backend_get(i, &b) != ADNN_STATUS_SUCCESS || !plugin_selected(b->name, want))
      continue;
    fprintf(out, "%s\n    {\"name\": ", shown++ ? "," : "");
    json_string(out, b->name);
    fprintf(out, ", \"path\": ");
    json_string(out, b->path);
    fprintf(out, ", \"state\": ");
    json_string(out, adnn_backend_state_name(b->state));
    fprintf(out, ", \"score\": %d, \"reason\": ", b->score);
    json_string(out, b->reason);
    fprintf(out, ", \"version\": ");
    json_string(out, b->version);
    fprintf(out, ",\n     \"properties\": ");
    json_properties(out, b->property_count, b->properties);
    fprintf(out, ",\n     \"devices\": [");
    for (size_t d = 0; d < b->device_count; d++) {
      const adnn_device_info *dev = &b->devices[d];
      fprintf(out, "%s{\"index\": %d, \"name\": ", d ? ", " : "", dev->index);
      json_string(out, dev->name);
      fprintf(out, ", \"properties\": ");
      json_properties(out, dev->property_count, dev->properties);
      fputc('}', out);
    }
    fprintf(out, "]}");
  }
  fprintf(out, "%s],\n  \"auto\": {\"backend\": ", shown ? "\n  " : "");
  json_string(out, auto_st == ADNN_STATUS_SUCCESS ? auto_name : "");
  fprintf(out, ", \"reason\": ");
  json_string(out, auto_reason);
  context_trial t;
  try_context(want ? want : "auto", &t);
  fprintf(out, "},\n  \"context\": {\"request\": ");
  json_string(out, t.request);
  fprintf(out, ", \"created\": %s, \"status\": ",
          t.status == ADNN_STATUS_SUCCESS ? "true" : "false");
  json_string(out, adnn_status_name(t.status));
  fprintf(out, ", \"backend\": ");
  json_string(out, t.backend);
  fprintf(out, ", \"device\": %d, \"error\": ", t.device);
  json_string(out, t.error);
  fprintf(out, "},\n  \"perfdb\": ");
  json_perfdb(out);
  fprintf(out, "\n}\n");
  return t.status == ADNN_STATUS_SUCCESS ? 0 : 1;
}

static int print_text(FILE *out, int verbose, const char *want, int build_tree) {
  const char *path, *source, *auto_name = "", *auto_reason = "";
  adnn_backend_search_path(&path, &source);
  size_t count = 0;
  adnn_backend_count(&count);
  fprintf(out, "adnn %s\n", adnn_version_string());
  fprintf(out, "plugins from %s (%s)\n", path,
          build_tree ? "this build tree's plugins: adnn-info runs uninstalled and "
                       "ADNN_PLUGIN_PATH was unset"
          : strcmp(source, "ADNN_PLUGIN_PATH") == 0 ? "set by ADNN_PLUGIN_PATH"
                                                    : "compiled-in; ADNN_PLUGIN_PATH unset");
  size_t width = 4, shown = 0;
  for (size_t i = 0; i < count; i++) {
    const adnn_backend_info *b;
    if (adnn_backend_get(i, &b) == ADNN_STATUS_SUCCESS && strlen(b->name) > width)
      width = strlen(b->name);
  }
  for (size_t i = 0; i < count; i++) {
    const adnn_backend_info *b;
    if (adnn_backend_get(i, &b) != ADNN_STATUS_SUCCESS || !plugin_selected(b->name, want))
      continue;
    shown++;
    fprintf(out, "  %-*s  %-12s  %s\n", (int)width, b->name, adnn_backend_state_name(b->state), b->reason);
    fprintf(out, "  %-*s  %-12s  file %s%s%s\n", (int)width, "", "", b->path,
            b->version && *b->version ? ", version " : "", b->version ? b->version : "");
    /* Properties (versions, driver support) help most when a plugin is NOT
     * ready, so they are always shown; device details only when verbose or
     * ready. */
    for (size_t p = 0; p < b->property_count; p++)
      fprintf(out, "  %-*s  %-12s  %s: %s\n", (int)width, "", "", b->properties[p].key,
              b->properties[p].value);
    if (verbose || b->state == ADNN_BACKEND_READY) {
      for (size_t d = 0; d < b->device_count; d++) {
        const adnn_device_info *dev = &b->devices[d];
        fprintf(out, "  %-*s  device %-5d  %s\n", (int)width, "", dev->index, dev->name);
        for (size_t p = 0; p < dev->property_count; p++)
          fprintf(out, "  %-*s  %-12s    %s: %s\n", (int)width, "", "", dev->properties[p].key,
                  dev->properties[p].value);
      }
    }
  }
  if (shown == 0 && count == 0) fprintf(out, "  (no plugins found)\n");
  else if (shown == 0) fprintf(out, "  (no plugin named '%.*s' found)\n",
                               (int)strcspn(want, ":"), want);
  adnn_status st = adnn_backend_auto_choice(&auto_name, &auto_reason);
  if (st == ADNN_STATUS_SUCCESS)
    fprintf(out, "auto -> %s (%s)\n", auto_name, auto_reason);
  else
    fprintf(out, "auto -> none (%s)\n", auto_reason);
  /* The proof: what an application asking for the same thing gets. */
  context_trial t;
  try_context(want ? want : "auto", &t);
  if (t.status == ADNN_STATUS_SUCCESS)
    fprintf(out, "context \"%s\": created on %s, device %d\n", t.request, t.backend, t.device);
  else
    fprintf(out, "context \"%s\": cannot be created: %s: %s\n", t.request,
            adnn_status_name(t.status), t.error);
  text_perfdb(out);
  return t.status == ADNN_STATUS_SUCCESS ? 0 : 1;
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: adnn-info [--json] [--verbose] [--backend=NAME] [--version] [--help]\n"
          "       adnn-info --export-perfdb FILE | --import-perfdb FILE\n"
          "Shows the adnn library version, the plugin search path, every backend plugin\n"
          "found with its state and the reason for it, their devices, and what the\n"
          "\"auto\" backend chooses, and the performance database files with their\n"
          "entry counts, then creates a context on \"auto\" and reports the result.\n"
          "--backend=NAME (cpu, cuda, cuda:1, ...) shows only that backend and creates\n"
          "the context on it instead. Exit status 0 when the context was created, else 1.\n"
          "--export-perfdb writes every known tuning result to FILE; --import-perfdb\n"
          "merges FILE into the user database (exit status 0 on success, else 1).\n");
}

int main(int argc, char **argv) {
  /* Before the first library call, which reads ADNN_PLUGIN_PATH. */
  int build_tree = adnn_tool_use_build_tree_plugins();
  int json = 0, verbose = 0;
  const char *want = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--export-perfdb") == 0 || strcmp(argv[i], "--import-perfdb") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "adnn-info: %s needs a file name\n", argv[i]);
        return 2;
      }
      size_t imported = 0;
      int export = strcmp(argv[i], "--export-perfdb") == 0;
      adnn_status st = export ? adnn_perfdb_export(argv[i + 1])
                              : adnn_perfdb_import(argv[i + 1], &imported);
      if (st != ADNN_STATUS_SUCCESS) {
        fprintf(stderr, "adnn-info: %s\n", adnn_last_error());
        return 1;
      }
      if (!export) printf("imported %zu entr%s from %s\n", imported, imported == 1 ? "y" : "ies",
                          argv[i + 1]);
      else printf("exported the performance database to %s\n", argv[i + 1]);
      return 0;
    }
    if (strncmp(argv[i], "--backend=", 10) == 0 || strcmp(argv[i], "--backend") == 0) {
      want = argv[i][9] == '=' ? argv[i] + 10 : (i + 1 < argc ? argv[++i] : NULL);
      if (want == NULL || *want == '\0') {
        fprintf(stderr, "adnn-info: --backend needs a backend name (cpu, cuda, cuda:1, ...)\n");
        usage(stderr);
        return 2;
      }
      continue;
    }
    if (strcmp(argv[i], "--json") == 0) json = 1;
    else if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) verbose = 1;
    else if (strcmp(argv[i], "--version") == 0) {
      printf("adnn-info (adnn) %s\n", adnn_version_string());
      return 0;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    } else {
      fprintf(stderr, "adnn-info: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  return json ? print_json(stdout, want, build_tree)
              : print_text(stdout, verbose, want, build_tree);
}
