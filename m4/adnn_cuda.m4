# ADNN_CHECK_CUDA: decide whether the CUDA plugin can be built.
# Sets have_cuda=yes|no, adnn_cuda_summary (one line for the configure summary),
# NVCC, CUDA_CPPFLAGS, CUDA_LDFLAGS, CUDA_LIBS, CUDA_ARCH_FLAGS and the HAVE_CUDA conditional.
AC_DEFUN([ADNN_CHECK_CUDA], [
AC_ARG_WITH([cuda],
  [AS_HELP_STRING([--with-cuda=DIR], [build the CUDA plugin with the toolkit in DIR (default /usr/local/cuda); --without-cuda skips it])],
  [], [with_cuda=check])
AC_ARG_VAR([NVCC], [the CUDA compiler])
AC_ARG_VAR([NVCCFLAGS], [extra flags for nvcc])
AC_ARG_VAR([CUDA_ARCH_FLAGS], [nvcc architecture flags (default: sm_80 and sm_90 SASS plus compute_90 PTX)])
have_cuda=no
CUDA_MIN_SM=75
adnn_cuda_summary="no (--without-cuda)"
AS_IF([test "x$with_cuda" != xno], [
  cuda_dir=$with_cuda
  AS_IF([test "x$cuda_dir" = xcheck || test "x$cuda_dir" = xyes], [cuda_dir=/usr/local/cuda])
  AS_IF([test -z "$NVCC"], [AC_PATH_PROG([NVCC], [nvcc], [no], [$cuda_dir/bin$PATH_SEPARATOR$PATH])])
  cuda_libdir=$cuda_dir/lib64
  AS_IF([test ! -d "$cuda_libdir"], [cuda_libdir=$cuda_dir/lib])
  CUDA_CPPFLAGS="-I$cuda_dir/include"
  CUDA_LDFLAGS="-L$cuda_libdir"
  adnn_cuda_missing=""
  AS_IF([test "x$NVCC" = xno], [adnn_cuda_missing="nvcc not found in $cuda_dir/bin or PATH"])
  save_CPPFLAGS=$CPPFLAGS; save_LDFLAGS=$LDFLAGS; save_LIBS=$LIBS
  CPPFLAGS="$CPPFLAGS $CUDA_CPPFLAGS"; LDFLAGS="$LDFLAGS $CUDA_LDFLAGS"
  AS_IF([test -z "$adnn_cuda_missing"], [
    AC_CHECK_HEADER([cuda_runtime_api.h], [], [adnn_cuda_missing="cuda_runtime_api.h not found in $cuda_dir/include"])])
  AS_IF([test -z "$adnn_cuda_missing"], [
    AC_CHECK_HEADER([cublas_v2.h], [], [adnn_cuda_missing="cublas_v2.h (cuBLAS) not found in $cuda_dir/include"])])
  AS_IF([test -z "$adnn_cuda_missing"], [
    AC_CHECK_HEADER([cudnn.h], [], [adnn_cuda_missing="cudnn.h (cuDNN 9) not found in $cuda_dir/include"])])
  AS_IF([test -z "$adnn_cuda_missing"], [
    AC_MSG_CHECKING([for cuDNN major version 9])
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <cudnn_version.h>
#if CUDNN_MAJOR != 9
#error not cuDNN 9
#endif]], [])], [AC_MSG_RESULT([yes])], [AC_MSG_RESULT([no]); adnn_cuda_missing="cuDNN in $cuda_dir is not version 9"])])
  AS_IF([test -z "$adnn_cuda_missing"], [
    AC_CHECK_LIB([cudart_static], [cudaRuntimeGetVersion], [], [adnn_cuda_missing="libcudart_static.a not found in $cuda_libdir"], [-lrt -lpthread -ldl -lstdc++])])
  AS_IF([test -z "$adnn_cuda_missing"], [
    AC_CHECK_LIB([cublas], [cublasCreate_v2], [], [adnn_cuda_missing="libcublas not found in $cuda_libdir"])])
  AS_IF([test -z "$adnn_cuda_missing"], [
    AC_CHECK_LIB([cudnn_graph], [cudnnGetVersion], [], [adnn_cuda_missing="libcudnn_graph (cuDNN 9) not found in $cuda_libdir"])])
  CPPFLAGS=$save_CPPFLAGS; LDFLAGS=$save_LDFLAGS; LIBS=$save_LIBS
  AS_IF([test -z "$adnn_cuda_missing"], [
    have_cuda=yes
    AS_IF([test -z "$CUDA_ARCH_FLAGS"],
      [CUDA_ARCH_FLAGS="-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=compute_90"])
    # The lowest compute capability the build carries code for (SASS or PTX), e.g.
    # 80 for the default flags. The probe skips devices below it, because no
    # kernel of ours could run there. Forms nvcc takes: -arch=sm_90,
    # -gencode=arch=compute_90,code=sm_90, code=[[sm_80,compute_80]], sm_90a.
    # Flags without a number (-arch=all, native) give the toolkit's minimum, 75.
    # Where code= lists what is embedded, only those count: arch=compute_80,
    # code=sm_90 carries nothing that runs on 8.x.
    AC_MSG_CHECKING([for the lowest compute capability in CUDA_ARCH_FLAGS])
    adnn_cuda_codes=`echo " $CUDA_ARCH_FLAGS" | tr ' ' '\n' | $SED -n 's/.*code=//p'`
    AS_IF([test -z "$adnn_cuda_codes"], [adnn_cuda_codes=$CUDA_ARCH_FLAGS])
    CUDA_MIN_SM=`echo " $adnn_cuda_codes" | $SED 's/[[^A-Za-z0-9_]]/ /g' | tr ' ' '\n' | \
      $SED -n 's/^\(sm\|compute\)_\([[0-9]][[0-9]]*\)[[a-z]]*$/\2/p' | sort -n | head -n 1`
    AS_IF([test -z "$CUDA_MIN_SM"], [CUDA_MIN_SM=75])
    AS_IF([test "$CUDA_MIN_SM" -lt 75], [AC_MSG_ERROR([CUDA_ARCH_FLAGS asks for compute capability $CUDA_MIN_SM; CUDA 13 supports 7.5 (sm_75) and newer])])
    AC_MSG_RESULT([$CUDA_MIN_SM])
    adnn_cuda_summary="yes ($cuda_dir; $CUDA_ARCH_FLAGS; devices of compute capability >= $CUDA_MIN_SM)"
  ], [
    adnn_cuda_summary="no ($adnn_cuda_missing)"
    AS_IF([test "x$with_cuda" != xcheck], [AC_MSG_ERROR([--with-cuda was given but the CUDA plugin cannot be built: $adnn_cuda_missing])])
    AC_MSG_NOTICE([CUDA plugin will not be built: $adnn_cuda_missing])
  ])
])
CUDA_LIBS="-lcublasLt -lcublas -lcudnn_cnn -lcudnn_ops -lcudnn_graph -lcudart_static -lrt -lpthread -ldl -lstdc++"
AC_SUBST([CUDA_CPPFLAGS])
AC_SUBST([CUDA_LDFLAGS])
AC_SUBST([CUDA_LIBS])
AC_SUBST([CUDA_ARCH_FLAGS])
AC_SUBST([CUDA_MIN_SM])
AS_IF([test "x$have_cuda" = xyes], [AC_DEFINE([ADNN_HAVE_CUDA_PLUGIN], [1], [Define if the CUDA plugin is built])])
AM_CONDITIONAL([HAVE_CUDA], [test "x$have_cuda" = xyes])
])
