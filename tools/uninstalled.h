/*
 * Lets a tool run straight from the build tree find the build tree's plugins.
 *
 * The installed library searches only its compiled-in plugin directory (or
 * ADNN_PLUGIN_PATH), never the current directory, and that must stay so. An
 * uninstalled tool, though, would find no plugins at all (or, worse, an older
 * installed set), so a newcomer's first "./tools/adnn-info" says "no plugins
 * found". The tools therefore carry the build tree's paths, compiled in by
 * tools/local.mk, and use them only when the running executable itself lies in
 * that build tree's tools directory and ADNN_PLUGIN_PATH is unset.
 */
#ifndef ADNN_TOOLS_UNINSTALLED_H
#define ADNN_TOOLS_UNINSTALLED_H

/* Call before the first adnn function. When the program runs from the build
 * tree it was built in and ADNN_PLUGIN_PATH is unset, sets ADNN_PLUGIN_PATH to
 * that build tree's plugin directories and returns 1; otherwise changes
 * nothing and returns 0 (always 0 for an installed copy). */
int adnn_tool_use_build_tree_plugins(void);

#endif
