/* Test-only plugin: a valid shared object that does not export
 * adnn_plugin_entry (it exports a similarly named symbol instead). */
#include <stdint.h>

__attribute__((visibility("default"))) int adnn_plugin_entry_typo(void);
__attribute__((visibility("default"))) int adnn_plugin_entry_typo(void) { return 42; }
