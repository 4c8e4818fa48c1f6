/* Version: the library's answers agree with the header macros and with each
 * other. */
#include <stdio.h>
#include <string.h>

#include <adnn.h>

#include "t/tap.h"

int main(void) {
  const char *s = adnn_version_string();
  ok(s != NULL, "adnn_version_string() is not NULL");
  is_str(s, ADNN_VERSION_STRING, "adnn_version_string() equals ADNN_VERSION_STRING");
  is_int(adnn_version(), ADNN_VERSION, "adnn_version() equals ADNN_VERSION");
  is_int(ADNN_VERSION,
         ADNN_VERSION_MAJOR * 10000 + ADNN_VERSION_MINOR * 100 + ADNN_VERSION_PATCH,
         "ADNN_VERSION is major*10000 + minor*100 + patch");
  ok(ADNN_VERSION_MINOR < 100 && ADNN_VERSION_PATCH < 100 && ADNN_VERSION_MINOR >= 0 &&
         ADNN_VERSION_PATCH >= 0,
     "minor and patch fit in two decimal digits");

  /* The string and the number describe the same version. */
  unsigned maj = 0, min = 0, pat = 0;
  int n = s ? sscanf(s, "%u.%u.%u", &maj, &min, &pat) : 0;
  is_int(n, 3, "version string \"%s\" starts with major.minor.patch", s ? s : "(null)");
  is_int(maj * 10000 + min * 100 + pat, adnn_version(), "version string and number agree");
  is_int(maj, ADNN_VERSION_MAJOR, "major matches ADNN_VERSION_MAJOR");
  is_int(min, ADNN_VERSION_MINOR, "minor matches ADNN_VERSION_MINOR");
  is_int(pat, ADNN_VERSION_PATCH, "patch matches ADNN_VERSION_PATCH");
  ok(adnn_version_string() == s || strcmp(adnn_version_string(), s) == 0,
     "repeated calls give the same string");
  return tap_done();
}
