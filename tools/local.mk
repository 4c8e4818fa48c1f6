# Command-line tools, built only on the public API.
bin_PROGRAMS += tools/adnn-info
tools_adnn_info_SOURCES = tools/adnn-info.c
tools_adnn_info_LDADD = libadnn.la

# adnn-bench, its problem sets and tests.
include tools/bench.mk
