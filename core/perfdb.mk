# The performance database (core/perfdb.c): the library part, its test and
# man pages. The system database is read from $(pkgdatadir)/perfdb.txt when a
# distributor installs one; adnn itself installs none (see doc/tuning.md).
libadnn_la_SOURCES += core/perfdb.h core/perfdb.c
libadnn_la_CPPFLAGS += -DADNN_SYSTEM_PERFDB='"$(pkgdatadir)/perfdb.txt"'

# t/perfdb compiles core/perfdb.c (with the core's logging and error parts)
# itself, to test the tuner's internal interface and to reset the process
# state between scenarios; it runs tools/adnn-info through ADNN_TEST_BUILDDIR.
check_PROGRAMS += t/perfdb
TESTS += t/perfdb
t_perfdb_SOURCES = t/perfdb.c t/tap.h t/tmpdir.h core/perfdb.c core/perfdb.h \
	core/log.c core/error.c core/internal.h
t_perfdb_CPPFLAGS = $(AM_CPPFLAGS) -DADNN_BUILDING_LIBRARY \
	-DADNN_SYSTEM_PERFDB='"/nonexistent/adnn-test/perfdb.txt"'
t_perfdb_LDADD = -lpthread
EXTRA_t_perfdb_DEPENDENCIES = tools/adnn-info$(EXEEXT)

adnn_perfdb_man3_links = man/adnn_perfdb_info.3 man/adnn_perfdb_export.3 \
	man/adnn_perfdb_import.3
dist_man_MANS += man/adnn_perfdb.3 $(adnn_perfdb_man3_links)
