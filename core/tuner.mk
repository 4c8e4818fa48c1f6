# The tuner: algorithm choice by measurement at plan creation (core/tuner.h),
# its tests and man pages.
libadnn_la_SOURCES += core/tuner.h core/tuner.c core/tuner_select.c core/problem_key.c

# t/tune-select checks the pure selection rule with injected timings: it
# compiles core/tuner_select.c itself instead of going through the ABI.
# t/tune-plan tunes real conv2d plans on the cpu backend through the public API.
check_PROGRAMS += t/tune-select t/tune-plan
TESTS += t/tune-select t/tune-plan
t_tune_select_SOURCES = t/tune-select.c core/tuner_select.c core/tuner.h t/tap.h
t_tune_select_CPPFLAGS = $(AM_CPPFLAGS)
t_tune_select_LDADD = -lm
t_tune_plan_SOURCES = t/tune-plan.c t/tap.h t/tmpdir.h
t_tune_plan_LDADD = libadnn.la kernels/ref/libadnn_ref.la -lm
EXTRA_t_tune_plan_DEPENDENCIES = backends/cpu/adnn-cpu.la

adnn_tuning_man3_links = man/adnn_context_set_tune_options.3 \
	man/adnn_context_get_tune_options.3 man/adnn_plan_candidate_count.3 \
	man/adnn_plan_candidate_get.3 man/adnn_plan_choice_reason.3
dist_man_MANS += man/adnn_tuning.3 $(adnn_tuning_man3_links)
