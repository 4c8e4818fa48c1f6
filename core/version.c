/* Library version queries. */
#include "config.h"

#include "core/internal.h"

const char *adnn_version_string(void) { return ADNN_VERSION_STRING; }

unsigned adnn_version(void) { return ADNN_VERSION; }
