/*
 * adnn-info: the doctor. Prints the library version, the plugin search path,
 * every plugin found with its state, reason, versions and devices, and what
 * "auto" picks and why. --json prints the same as one JSON object.
 *
 * Built only on the public API, so it shows exactly what an application sees.
 * Exit status: 0 when at least one backend is ready, 1 when none is, 2 on a
 * usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adnn.h>

static const char *state_name(adnn_backend_state s) {
  switch (s) {
    case ADNN_BACKEND_READY: return "ready";
    case ADNN_BACKEND_UNAVAILABLE: return "unavailable";
    case ADNN_BACKEND_INCOMPATIBLE: return "incompatible";
    case ADNN_BACKEND_LOAD_FAILED: return "load-failed";
  }
  return "unknown";
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

static int print_json(FILE *out) {
  const char *path, *source, *auto_name = "", *auto_reason = "";
  adnn_plugin_search_path(&path, &source);
  adnn_status auto_st = adnn_backend_auto_choice(&auto_name, &auto_reason);
  size_t count = 0;
  adnn_backend_count(&count);
  int ready = 0;
  fprintf(out, "{\n  \"version\": ");
  json_string(out, adnn_version_string());
  fprintf(out, ",\n  \"plugin_path\": ");
  json_string(out, path);
  fprintf(out, ",\n  \"plugin_path_source\": ");
  json_string(out, source);
  fprintf(out, ",\n  \"plugins\": [");
  for (size_t i = 0; i < count; i++) {
    const adnn_backend_info *b;
    if (adnn_backend_get(i, &b) != ADNN_STATUS_SUCCESS) continue;
    if (b->state == ADNN_BACKEND_READY) ready++;
    fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
    json_string(out, b->name);
    fprintf(out, ", \"path\": ");
    json_string(out, b->path);
    fprintf(out, ", \"state\": ");
    json_string(out, state_name(b->state));
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
  fprintf(out, "%s],\n  \"auto\": {\"backend\": ", count ? "\n  " : "");
  json_string(out, auto_st == ADNN_STATUS_SUCCESS ? auto_name : "");
  fprintf(out, ", \"reason\": ");
  json_string(out, auto_reason);
  fprintf(out, "}\n}\n");
  return ready > 0 ? 0 : 1;
}

static int print_text(FILE *out, int verbose) {
  const char *path, *source, *auto_name = "", *auto_reason = "";
  adnn_plugin_search_path(&path, &source);
  size_t count = 0;
  adnn_backend_count(&count);
  fprintf(out, "adnn %s\n", adnn_version_string());
  fprintf(out, "plugins from %s (%s)\n", path,
          strcmp(source, "ADNN_PLUGIN_PATH") == 0 ? "set by ADNN_PLUGIN_PATH"
                                                  : "compiled-in; ADNN_PLUGIN_PATH unset");
  int ready = 0;
  size_t width = 4;
  for (size_t i = 0; i < count; i++) {
    const adnn_backend_info *b;
    if (adnn_backend_get(i, &b) == ADNN_STATUS_SUCCESS && strlen(b->name) > width)
      width = strlen(b->name);
  }
  if (count == 0) fprintf(out, "  (no plugins found)\n");
  for (size_t i = 0; i < count; i++) {
    const adnn_backend_info *b;
    if (adnn_backend_get(i, &b) != ADNN_STATUS_SUCCESS) continue;
    if (b->state == ADNN_BACKEND_READY) ready++;
    fprintf(out, "  %-*s  %-12s  %s\n", (int)width, b->name, state_name(b->state), b->reason);
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
  adnn_status st = adnn_backend_auto_choice(&auto_name, &auto_reason);
  if (st == ADNN_STATUS_SUCCESS)
    fprintf(out, "auto -> %s (%s)\n", auto_name, auto_reason);
  else
    fprintf(out, "auto -> none (%s)\n", auto_reason);
  return ready > 0 ? 0 : 1;
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: adnn-info [--json] [--verbose] [--version] [--help]\n"
          "Shows the adnn library version, the plugin search path, every backend plugin\n"
          "found with its state and the reason for it, their devices, and what the\n"
          "\"auto\" backend chooses. Exit status 0 when a backend is ready, else 1.\n");
}

int main(int argc, char **argv) {
  int json = 0, verbose = 0;
  for (int i = 1; i < argc; i++) {
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
  return json ? print_json(stdout) : print_text(stdout, verbose);
}
