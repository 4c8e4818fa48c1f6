/*
 * Shared declarations of the adnn CPython extension (adnn._adnn): the
 * Context and Tensor objects, the exceptions, and the helpers the op
 * bindings use. See doc/python.md for the design.
 */
#ifndef ADNN_PY_H
#define ADNN_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include <adnn.h>

#include "dlpack_abi.h"

/* A span of memory the binding knows on one context: either an adnn_malloc
 * allocation it made, or a region of foreign memory (NumPy, PyTorch) that it
 * registered with adnn_memory_register. Tensors that view the span count as
 * references; the last one to go frees or unregisters it. Registered regions
 * only grow: a new view that overlaps a region without fitting in it is
 * covered by re-registering the union (see context.c). */
typedef struct adnn_py_region {
  char *base;
  size_t bytes;
  Py_ssize_t refs;
  int allocated; /* 1: adnn_malloc'd by the binding; 0: registered foreign memory */
  struct adnn_py_region *next;
} adnn_py_region;

typedef struct {
  PyObject_HEAD
  adnn_context *ctx;
  PyThread_type_lock lock; /* one thread at a time uses ctx (doc/api.md) */
  PyObject *plans;         /* dict: descriptor key (bytes) -> PyCapsule(adnn_plan) */
  unsigned long long plan_hits, plan_misses;
  adnn_py_region *regions;
  int dl_device_type; /* what the context's memory is, in DLPack terms; 0: unknown */
  int device;
  int closed;
} ContextObject;

typedef struct {
  PyObject_HEAD
  ContextObject *ctx; /* strong reference: the memory lives on this context */
  void *data;         /* element 0 */
  adnn_tensor_desc desc;
  int readonly;
  char *span_lo;             /* the bytes the tensor covers, for the region count */
  size_t span_bytes;
  adnn_py_region *counted;   /* non-NULL while the tensor holds a region reference (the
                                region may since have been merged: release by span) */
  adnn_dl_managed_tensor *imported; /* a consumed DLPack capsule: deleter on dealloc */
  Py_buffer *buffer;                /* or a buffer-protocol view: released on dealloc */
  PyObject *keepalive;              /* the producer object */
} TensorObject;

extern PyTypeObject ContextType;
extern PyTypeObject TensorType;
extern PyObject *AdnnError, *AdnnArgumentError, *AdnnTypeError, *AdnnDeviceError;

/* Raises the exception for a failed status, with the library's message. */
PyObject *adnn_py_raise(adnn_status status, const char *what);
/* Raises `type` (an adnn exception class) with status BAD_PARAM and a message. */
PyObject *adnn_py_fail(PyObject *type, const char *fmt, ...);

/* Context helpers (context.c). The lock helpers expect the GIL to be held
 * and keep it: only short calls (free, register) run under them. */
void adnn_py_ctx_lock(ContextObject *c);
void adnn_py_ctx_unlock(ContextObject *c);
int adnn_py_ctx_check_open(ContextObject *c);
/* Takes a reference on the region covering [lo, lo+bytes), registering the
 * memory when the binding does not know it yet; NULL with an exception set. */
adnn_py_region *adnn_py_region_acquire(ContextObject *c, char *lo, size_t bytes);
void adnn_py_region_release(ContextObject *c, char *lo, size_t bytes);
/* The cached plan for a descriptor, as a new reference to its capsule
 * ("adnn_plan"); creates it on a miss. NULL with an exception on error. */
PyObject *adnn_py_plan_get(ContextObject *c, int op_index, const void *desc, size_t desc_size,
                           adnn_status (*create)(adnn_context *, const void *, adnn_plan **),
                           const char *op_name);

/* Tensors (tensor.c). */
PyObject *adnn_py_tensor_empty(ContextObject *c, adnn_dtype dtype, int rank, const int64_t *dims);
/* obj as a tensor on context c: an adnn Tensor of c, or a zero-copy import of a
 * DLPack or buffer-protocol object. New reference, NULL with an exception. */
TensorObject *adnn_py_as_tensor(ContextObject *c, PyObject *obj, int writable, const char *what);
int adnn_py_dtype_from_name(PyObject *name, adnn_dtype *out);

/* Ops (ops.c). */
int adnn_py_ops_add(PyObject *module);
extern PyMethodDef adnn_py_gemm_def;

#endif /* ADNN_PY_H */
