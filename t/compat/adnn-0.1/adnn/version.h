/* adnn version macros. Frozen copy of the 0.1.0 release (see t/compat/README). */
#ifndef ADNN_VERSION_H
#define ADNN_VERSION_H

#define ADNN_VERSION_MAJOR 0
#define ADNN_VERSION_MINOR 1
#define ADNN_VERSION_PATCH 0
/** The version as one number: major * 10000 + minor * 100 + patch. */
#define ADNN_VERSION (ADNN_VERSION_MAJOR * 10000 + ADNN_VERSION_MINOR * 100 + ADNN_VERSION_PATCH)
#define ADNN_VERSION_STRING "0.1.0"

#endif
