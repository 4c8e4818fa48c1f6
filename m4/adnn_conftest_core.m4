# adnn_conftest_core.m4: keep configure quiet about the core/ source directory.
#
# Autoconf's test macros (and its exit trap, and automake's compiler check)
# delete a possible core dump of a crashed test program with "rm -f core ...".
# In an in-tree build the current directory holds our core/ source directory, so
# each of those commands printed "rm: cannot remove 'core': Is a directory"
# (48 times per run) and, in the exit trap, the failed rm also skipped the
# removal of confdefs.h that is chained after it with &&.
#
# Renaming core/ is not an option (it is the library), and the message cannot
# be silenced without hiding real errors, so this file edits the definitions of
# exactly the macros that emit the command, before they are expanded: each
# "rm -f core " becomes "{ test -d core || rm -f core; }; rm -f ", which still
# deletes a core file but leaves a directory alone. The edit is textual and
# conditional: a macro that does not exist, or an Autoconf whose text differs,
# is left as it is (the only cost then is the old noise), so it cannot break
# configure. configure.ac includes this file before AC_INIT, because AC_INIT
# expands the exit trap; automake's _AM_PROG_CC_C_O is already defined then,
# since aclocal.m4 is read before configure.ac.

m4_define([_ADNN_SPARE_CORE_DIR],
[m4_ifdef([$1],
  [m4_define([$1], m4_bpatsubst(m4_dquote(m4_defn([$1])), [rm -f core ],
    [{ test -d core || rm -f core; }; rm -f ]))])])

_ADNN_SPARE_CORE_DIR([_AC_INIT_PREPARE])
_ADNN_SPARE_CORE_DIR([_AC_COMPILE_IFELSE])
_ADNN_SPARE_CORE_DIR([_AC_LINK_IFELSE])
_ADNN_SPARE_CORE_DIR([_AC_RUN_IFELSE])
_ADNN_SPARE_CORE_DIR([_AM_PROG_CC_C_O])
