/*
 * adnn.Tensor: a strided view of memory on one context, either allocated by
 * the binding (adnn_malloc) or borrowed without a copy from another library
 * through DLPack or the buffer protocol; and its DLPack export.
 */
#include "adnn_py.h"

#include <string.h>

/* ---- dtypes ---------------------------------------------------------------------- */

static const struct {
  adnn_dtype dtype;
  const char *alias; /* NumPy's spelling, also accepted */
  uint8_t dl_code, dl_bits;
  char format; /* buffer-protocol format character; 0: none */
} dtypes[] = {
    {ADNN_DTYPE_F32, "float32", ADNN_DL_FLOAT, 32, 'f'},
    {ADNN_DTYPE_F64, "float64", ADNN_DL_FLOAT, 64, 'd'},
    {ADNN_DTYPE_F16, "float16", ADNN_DL_FLOAT, 16, 'e'},
    {ADNN_DTYPE_BF16, "bfloat16", ADNN_DL_BFLOAT, 16, 0},
    {ADNN_DTYPE_I8, "int8", ADNN_DL_INT, 8, 'b'},
    {ADNN_DTYPE_I32, "int32", ADNN_DL_INT, 32, 'i'},
    {ADNN_DTYPE_U8, "uint8", ADNN_DL_UINT, 8, 'B'},
};
#define N_DTYPES (sizeof dtypes / sizeof dtypes[0])

int adnn_py_dtype_from_name(PyObject *name, adnn_dtype *out) {
  const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
  if (s == NULL) {
    PyErr_Clear();
    /* numpy.float32 and numpy.dtype('float32') print as their names via str(). */
    PyObject *str = PyObject_GetAttrString(name, "__name__");
    if (str == NULL) {
      PyErr_Clear();
      str = PyObject_Str(name);
    }
    if (str == NULL) return -1;
    int rc = PyUnicode_Check(str) ? adnn_py_dtype_from_name(str, out) : -1;
    Py_DECREF(str);
    return rc;
  }
  for (size_t i = 0; i < N_DTYPES; i++) {
    if (strcmp(s, adnn_dtype_name(dtypes[i].dtype)) == 0 || strcmp(s, dtypes[i].alias) == 0) {
      *out = dtypes[i].dtype;
      return 0;
    }
  }
  adnn_py_fail(AdnnTypeError, "adnn: unknown dtype '%s' (f32, f64, f16, bf16, i8, i32)", s);
  return -1;
}

static int dtype_from_dl(adnn_dl_dtype t, adnn_dtype *out) {
  for (size_t i = 0; i < N_DTYPES; i++) {
    if (t.lanes == 1 && t.code == dtypes[i].dl_code && t.bits == dtypes[i].dl_bits) {
      *out = dtypes[i].dtype;
      return 0;
    }
  }
  adnn_py_fail(AdnnTypeError,
               "adnn.from_dlpack: DLPack dtype (code %u, %u bits, %u lanes) has no adnn dtype",
               t.code, t.bits, t.lanes);
  return -1;
}

static adnn_dl_dtype dtype_to_dl(adnn_dtype d) {
  adnn_dl_dtype t = {0, 0, 1};
  for (size_t i = 0; i < N_DTYPES; i++)
    if (dtypes[i].dtype == d) t.code = dtypes[i].dl_code, t.bits = dtypes[i].dl_bits;
  return t;
}

/* ---- construction ---------------------------------------------------------------- */

static TensorObject *tensor_new(ContextObject *c) {
  TensorObject *t = PyObject_New(TensorObject, &TensorType);
  if (t == NULL) return NULL;
  Py_INCREF(c);
  t->ctx = c;
  t->data = NULL;
  memset(&t->desc, 0, sizeof t->desc);
  t->readonly = 0;
  t->span_lo = NULL;
  t->span_bytes = 0;
  t->counted = NULL;
  t->imported = NULL;
  t->buffer = NULL;
  t->keepalive = NULL;
  return t;
}

PyObject *adnn_py_tensor_empty(ContextObject *c, adnn_dtype dtype, int rank, const int64_t *dims) {
  if (adnn_py_ctx_check_open(c) < 0) return NULL;
  TensorObject *t = tensor_new(c);
  if (t == NULL) return NULL;
  adnn_status st = adnn_tensor_desc_init(&t->desc, dtype, rank, dims);
  size_t bytes = 0;
  if (st == ADNN_STATUS_SUCCESS) st = adnn_tensor_desc_span_bytes(&t->desc, &bytes);
  if (st != ADNN_STATUS_SUCCESS) {
    Py_DECREF(t);
    return adnn_py_raise(st, "adnn.empty");
  }
  /* adnn_malloc refuses 0 bytes; a zero-size tensor still gets an address. */
  size_t alloc = bytes ? bytes : adnn_dtype_size(dtype);
  adnn_py_region *r = PyMem_Calloc(1, sizeof *r);
  if (r == NULL) {
    Py_DECREF(t);
    return PyErr_NoMemory();
  }
  void *p = NULL;
  adnn_py_ctx_lock(c);
  st = adnn_malloc(c->ctx, alloc, &p);
  adnn_py_ctx_unlock(c);
  if (st != ADNN_STATUS_SUCCESS) {
    PyMem_Free(r);
    Py_DECREF(t);
    return adnn_py_raise(st, "adnn_malloc");
  }
  r->base = p;
  r->bytes = alloc;
  r->refs = 1;
  r->allocated = 1;
  r->next = c->regions;
  c->regions = r;
  t->data = p;
  t->span_lo = p;
  t->span_bytes = alloc;
  t->counted = r;
  return (PyObject *)t;
}

static void Tensor_dealloc(TensorObject *t) {
  ContextObject *c = t->ctx;
  if (t->counted) adnn_py_region_release(c, t->span_lo, t->span_bytes);
  if (t->imported && t->imported->deleter) t->imported->deleter(t->imported);
  if (t->buffer) {
    PyBuffer_Release(t->buffer);
    PyMem_Free(t->buffer);
  }
  Py_XDECREF(t->keepalive);
  Py_XDECREF(c);
  PyObject_Free(t);
}

/* The bytes [lo, lo + bytes) a strided view covers, from element 0. */
static void view_span(const adnn_tensor_desc *d, char *data, char **lo, size_t *bytes) {
  size_t span = 0;
  adnn_tensor_desc_span_bytes(d, &span);
  *lo = data;
  *bytes = span;
}

/* Checks the device of a foreign object against the context. */
static int check_device(ContextObject *c, int type, int id, const char *what) {
  int host = type == ADNN_DL_CPU || type == ADNN_DL_CUDA_HOST;
  if (c->dl_device_type == ADNN_DL_CPU && host) return 0;
  if (c->dl_device_type == ADNN_DL_CUDA && type == ADNN_DL_CUDA && id == c->device) return 0;
  if (c->dl_device_type == 0) {
    adnn_py_fail(AdnnDeviceError,
                 "%s: the context's backend '%s' has no known DLPack device; only its own "
                 "tensors (adnn.empty) can be used on it",
                 what, adnn_context_get_backend(c->ctx));
    return -1;
  }
  adnn_py_fail(AdnnDeviceError,
               "%s: the object lives on DLPack device (%d, %d) but the context is %s:%d; "
               "pass a tensor of the context's device (a CUDA tensor of another framework, through "
               "DLPack): the binding has no host-to-device copy yet",
               what, type, id, adnn_context_get_backend(c->ctx), c->device);
  return -1;
}

/* Fills t from DLPack metadata; checks dtype, rank and strides. */
static int fill_from_dl(TensorObject *t, const adnn_dl_tensor *dl, const char *what) {
  adnn_dtype dtype;
  if (dtype_from_dl(dl->dtype, &dtype) < 0) return -1;
  if (dl->ndim < 0 || dl->ndim > ADNN_MAX_RANK) {
    adnn_py_fail(AdnnArgumentError, "%s: rank %d is more than adnn's %d", what, (int)dl->ndim,
                 ADNN_MAX_RANK);
    return -1;
  }
  int64_t strides[ADNN_MAX_RANK];
  int64_t step = 1;
  for (int i = dl->ndim - 1; i >= 0; i--) {
    strides[i] = dl->strides ? dl->strides[i] : step;
    step *= dl->shape[i];
  }
  for (int i = 0; i < dl->ndim; i++) {
    /* A dim of extent 1 is never stepped along: its stride does not matter,
     * and producers write anything there (NumPy 0, PyTorch 1). */
    if (dl->shape[i] <= 1 && strides[i] < 0) strides[i] = 0;
    if (strides[i] < 0) {
      adnn_py_fail(AdnnArgumentError,
                   "%s: dim %d has negative stride %lld; adnn takes non-negative strides "
                   "(copy the array first, e.g. numpy.ascontiguousarray)",
                   what, i, (long long)strides[i]);
      return -1;
    }
  }
  adnn_status st = adnn_tensor_desc_init_strided(&t->desc, dtype, dl->ndim, dl->shape, strides);
  if (st != ADNN_STATUS_SUCCESS) {
    adnn_py_raise(st, what);
    return -1;
  }
  t->data = (char *)dl->data + dl->byte_offset;
  return 0;
}

static int count_span(TensorObject *t) {
  view_span(&t->desc, t->data, &t->span_lo, &t->span_bytes);
  t->counted = adnn_py_region_acquire(t->ctx, t->span_lo, t->span_bytes);
  return t->counted ? 0 : -1;
}

/* Imports a buffer-protocol object (read-only NumPy arrays, which NumPy
 * refuses to export through unversioned DLPack, which cannot say read-only). */
static TensorObject *import_buffer(ContextObject *c, PyObject *obj, const char *what) {
  if (c->dl_device_type != ADNN_DL_CPU) {
    check_device(c, ADNN_DL_CPU, 0, what);
    return NULL;
  }
  Py_buffer *view = PyMem_Calloc(1, sizeof *view);
  if (view == NULL) return (TensorObject *)PyErr_NoMemory();
  if (PyObject_GetBuffer(obj, view, PyBUF_RECORDS_RO) < 0) {
    PyMem_Free(view);
    return NULL;
  }
  TensorObject *t = tensor_new(c);
  if (t == NULL) {
    PyBuffer_Release(view);
    PyMem_Free(view);
    return NULL;
  }
  t->buffer = view;
  t->readonly = view->readonly;
  const char *f = view->format ? view->format : "B";
  if (*f == '<' || *f == '=' || *f == '@') f++;
  adnn_dtype dtype = 0;
  for (size_t i = 0; i < N_DTYPES; i++)
    if (f[0] == dtypes[i].format && f[1] == 0 &&
        (size_t)view->itemsize == adnn_dtype_size(dtypes[i].dtype))
      dtype = dtypes[i].dtype;
  if (dtype == 0) {
    adnn_py_fail(AdnnTypeError, "%s: buffer format '%s' has no adnn dtype", what,
                 view->format ? view->format : "B");
    Py_DECREF(t);
    return NULL;
  }
  int64_t shape[ADNN_MAX_RANK], strides[ADNN_MAX_RANK];
  if (view->ndim > ADNN_MAX_RANK) {
    adnn_py_fail(AdnnArgumentError, "%s: rank %d is more than adnn's %d", what, view->ndim,
                 ADNN_MAX_RANK);
    Py_DECREF(t);
    return NULL;
  }
  for (int i = 0; i < view->ndim; i++) {
    shape[i] = view->shape[i];
    if (view->strides[i] % view->itemsize != 0) {
      adnn_py_fail(AdnnArgumentError, "%s: stride %zd bytes is not a whole number of elements",
                   what, view->strides[i]);
      Py_DECREF(t);
      return NULL;
    }
    strides[i] = view->strides[i] / view->itemsize;
  }
  adnn_dl_tensor dl = {view->buf, {ADNN_DL_CPU, 0}, view->ndim, dtype_to_dl(dtype), shape,
                       strides, 0};
  if (fill_from_dl(t, &dl, what) < 0 || count_span(t) < 0) {
    Py_DECREF(t);
    return NULL;
  }
  return t;
}

static TensorObject *import_dlpack(ContextObject *c, PyObject *obj, const char *what) {
  PyObject *dev = PyObject_CallMethod(obj, "__dlpack_device__", NULL);
  if (dev == NULL) return NULL;
  int type = 0, id = 0;
  if (!PyArg_ParseTuple(dev, "ii", &type, &id)) {
    Py_DECREF(dev);
    return NULL;
  }
  Py_DECREF(dev);
  if (check_device(c, type, id, what) < 0) return NULL;
  PyObject *cap = PyObject_CallMethod(obj, "__dlpack__", NULL);
  if (cap == NULL) {
    /* NumPy refuses read-only arrays (unversioned DLPack cannot flag them):
     * take those through the buffer protocol, read-only, still without a copy. */
    if (PyErr_ExceptionMatches(PyExc_BufferError) && PyObject_CheckBuffer(obj)) {
      PyErr_Clear();
      return import_buffer(c, obj, what);
    }
    return NULL;
  }
  adnn_dl_managed_tensor *m = PyCapsule_GetPointer(cap, ADNN_DL_CAPSULE_NAME);
  if (m == NULL) {
    Py_DECREF(cap);
    return NULL;
  }
  /* Ownership passes to us: rename so the capsule's destructor leaves it. */
  if (PyCapsule_SetName(cap, ADNN_DL_USED_CAPSULE_NAME) < 0) {
    Py_DECREF(cap);
    return NULL;
  }
  Py_DECREF(cap);
  TensorObject *t = tensor_new(c);
  if (t == NULL) {
    if (m->deleter) m->deleter(m);
    return NULL;
  }
  t->imported = m;
  Py_INCREF(obj);
  t->keepalive = obj;
  if (fill_from_dl(t, &m->dl_tensor, what) < 0 || count_span(t) < 0) {
    Py_DECREF(t);
    return NULL;
  }
  return t;
}

TensorObject *adnn_py_as_tensor(ContextObject *c, PyObject *obj, int writable, const char *what) {
  TensorObject *t;
  if (Py_IS_TYPE(obj, &TensorType)) {
    t = (TensorObject *)obj;
    if (t->ctx != c) {
      adnn_py_fail(AdnnDeviceError, "%s: the tensor belongs to another adnn.Context", what);
      return NULL;
    }
    Py_INCREF(t);
  } else if (adnn_py_ctx_check_open(c) < 0) {
    return NULL;
  } else if (PyObject_HasAttrString(obj, "__dlpack__")) {
    t = import_dlpack(c, obj, what);
  } else if (PyObject_CheckBuffer(obj)) {
    t = import_buffer(c, obj, what);
  } else {
    adnn_py_fail(AdnnTypeError,
                 "%s: expected an adnn.Tensor or an object with __dlpack__ (NumPy array, "
                 "PyTorch tensor), got %s",
                 what, Py_TYPE(obj)->tp_name);
    return NULL;
  }
  if (t && writable && t->readonly) {
    adnn_py_fail(AdnnArgumentError, "%s: the output is read-only", what);
    Py_DECREF(t);
    return NULL;
  }
  return t;
}

/* ---- DLPack export ------------------------------------------------------------------ */

static void export_deleter(adnn_dl_managed_tensor *m) {
  /* Consumers may call this from any thread, with or without the GIL. */
  PyGILState_STATE g = PyGILState_Ensure();
  Py_XDECREF((PyObject *)m->manager_ctx);
  PyGILState_Release(g);
  PyMem_RawFree(m);
}

static void export_capsule_destructor(PyObject *cap) {
  /* Still named "dltensor": nobody consumed it, so we own it. */
  if (PyCapsule_IsValid(cap, ADNN_DL_CAPSULE_NAME)) {
    adnn_dl_managed_tensor *m = PyCapsule_GetPointer(cap, ADNN_DL_CAPSULE_NAME);
    if (m && m->deleter) m->deleter(m);
  }
}

static int tensor_dl_device(TensorObject *t, int *type, int *id) {
  if (t->ctx->dl_device_type == 0) {
    adnn_py_fail(AdnnDeviceError, "adnn.Tensor: backend '%s' has no DLPack device",
                 adnn_context_get_backend(t->ctx->ctx));
    return -1;
  }
  *type = t->ctx->dl_device_type;
  *id = t->ctx->dl_device_type == ADNN_DL_CUDA ? t->ctx->device : 0;
  return 0;
}

static PyObject *Tensor_dlpack(TensorObject *t, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", kwlist, &stream,
                                   &max_version, &dl_device, &copy))
    return NULL;
  int type, id;
  if (tensor_dl_device(t, &type, &id) < 0) return NULL;
  if (copy == Py_True) {
    PyErr_SetString(PyExc_BufferError, "adnn.Tensor.__dlpack__: copy=True is not supported");
    return NULL;
  }
  if (t->readonly) {
    PyErr_SetString(PyExc_BufferError,
                    "adnn.Tensor.__dlpack__: the tensor is read-only, which unversioned "
                    "DLPack cannot signal");
    return NULL;
  }
  if (type == ADNN_DL_CUDA) {
    /* adnn does not expose its stream: make the data ready for any stream. */
    ContextObject *c = t->ctx;
    adnn_status st;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(c->lock, WAIT_LOCK);
    st = adnn_context_synchronize(c->ctx);
    PyThread_release_lock(c->lock);
    Py_END_ALLOW_THREADS
    if (st != ADNN_STATUS_SUCCESS) return adnn_py_raise(st, "adnn_context_synchronize");
  }
  int rank = t->desc.rank;
  adnn_dl_managed_tensor *m =
      PyMem_RawMalloc(sizeof *m + 2 * sizeof(int64_t) * (size_t)(rank ? rank : 1));
  if (m == NULL) return PyErr_NoMemory();
  int64_t *shape = (int64_t *)(m + 1), *strides = shape + (rank ? rank : 1);
  for (int i = 0; i < rank; i++) {
    shape[i] = t->desc.dims[i];
    strides[i] = t->desc.strides[i];
  }
  m->dl_tensor.data = t->data;
  m->dl_tensor.device.device_type = type;
  m->dl_tensor.device.device_id = id;
  m->dl_tensor.ndim = rank;
  m->dl_tensor.dtype = dtype_to_dl(t->desc.dtype);
  m->dl_tensor.shape = shape;
  m->dl_tensor.strides = strides;
  m->dl_tensor.byte_offset = 0;
  Py_INCREF(t); /* the consumer's view keeps the memory alive */
  m->manager_ctx = t;
  m->deleter = export_deleter;
  PyObject *cap = PyCapsule_New(m, ADNN_DL_CAPSULE_NAME, export_capsule_destructor);
  if (cap == NULL) export_deleter(m);
  return cap;
}

static PyObject *Tensor_dlpack_device(TensorObject *t, PyObject *noargs) {
  int type, id;
  if (tensor_dl_device(t, &type, &id) < 0) return NULL;
  return Py_BuildValue("(ii)", type, id);
}

static PyObject *Tensor_numpy(TensorObject *t, PyObject *noargs) {
  PyObject *np = PyImport_ImportModule("numpy");
  if (np == NULL) return NULL;
  PyObject *r = PyObject_CallMethod(np, "from_dlpack", "O", (PyObject *)t);
  Py_DECREF(np);
  return r;
}

/* ---- attributes ---------------------------------------------------------------------- */

static PyObject *int64_tuple(const int64_t *v, int n) {
  PyObject *tup = PyTuple_New(n);
  if (tup == NULL) return NULL;
  for (int i = 0; i < n; i++) {
    PyObject *x = PyLong_FromLongLong(v[i]);
    if (x == NULL) {
      Py_DECREF(tup);
      return NULL;
    }
    PyTuple_SET_ITEM(tup, i, x);
  }
  return tup;
}

static PyObject *Tensor_get_shape(TensorObject *t, void *c) {
  return int64_tuple(t->desc.dims, t->desc.rank);
}
static PyObject *Tensor_get_strides(TensorObject *t, void *c) {
  return int64_tuple(t->desc.strides, t->desc.rank);
}
static PyObject *Tensor_get_ndim(TensorObject *t, void *c) { return PyLong_FromLong(t->desc.rank); }
static PyObject *Tensor_get_dtype(TensorObject *t, void *c) {
  return PyUnicode_FromString(adnn_dtype_name(t->desc.dtype));
}
static PyObject *Tensor_get_readonly(TensorObject *t, void *c) {
  return PyBool_FromLong(t->readonly);
}
static PyObject *Tensor_get_context(TensorObject *t, void *c) {
  Py_INCREF(t->ctx);
  return (PyObject *)t->ctx;
}
static PyObject *Tensor_get_data_ptr(TensorObject *t, void *c) {
  return PyLong_FromVoidPtr(t->data);
}
static PyObject *Tensor_get_size(TensorObject *t, void *c) {
  int64_t n = 0;
  adnn_tensor_desc_element_count(&t->desc, &n);
  return PyLong_FromLongLong(n);
}
static PyObject *Tensor_get_owns(TensorObject *t, void *c) {
  return PyBool_FromLong(t->imported == NULL && t->buffer == NULL);
}

static PyObject *Tensor_repr(TensorObject *t) {
  PyObject *shape = Tensor_get_shape(t, NULL);
  if (shape == NULL) return NULL;
  PyObject *r = PyUnicode_FromFormat("<adnn.Tensor shape=%R dtype=%s on %s:%d%s>", shape,
                                     adnn_dtype_name(t->desc.dtype),
                                     adnn_context_get_backend(t->ctx->ctx), t->ctx->device,
                                     t->readonly ? " read-only" : "");
  Py_DECREF(shape);
  return r;
}

static PyMethodDef Tensor_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))Tensor_dlpack, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)\n\n"
     "A DLPack capsule viewing this tensor without a copy; the tensor stays alive\n"
     "until the consumer calls the deleter."},
    {"__dlpack_device__", (PyCFunction)Tensor_dlpack_device, METH_NOARGS,
     "__dlpack_device__() -> (device_type, device_id)"},
    {"numpy", (PyCFunction)Tensor_numpy, METH_NOARGS,
     "numpy() -> numpy.ndarray\n\nnumpy.from_dlpack(self): a view, no copy (CPU contexts)."},
    {NULL}};

static PyGetSetDef Tensor_getset[] = {
    {"shape", (getter)Tensor_get_shape, NULL, "dims, a tuple", NULL},
    {"strides", (getter)Tensor_get_strides, NULL, "strides in elements (not bytes)", NULL},
    {"ndim", (getter)Tensor_get_ndim, NULL, "rank", NULL},
    {"dtype", (getter)Tensor_get_dtype, NULL, "'f32', 'f64', 'f16', 'bf16', 'i8' or 'i32'", NULL},
    {"readonly", (getter)Tensor_get_readonly, NULL, "whether ops refuse it as an output", NULL},
    {"context", (getter)Tensor_get_context, NULL, "the adnn.Context the memory is on", NULL},
    {"data_ptr", (getter)Tensor_get_data_ptr, NULL, "address of element 0", NULL},
    {"size", (getter)Tensor_get_size, NULL, "number of elements", NULL},
    {"owns_memory", (getter)Tensor_get_owns, NULL,
     "True when adnn allocated the memory, False for a view of another library's", NULL},
    {NULL}};

PyTypeObject TensorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "adnn.Tensor",
    .tp_basicsize = sizeof(TensorObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A strided tensor on an adnn.Context: made by adnn.empty, returned by ops, or\n"
              "a zero-copy view of another library's array (adnn.from_dlpack). Exports\n"
              "__dlpack__ / __dlpack_device__ for numpy.from_dlpack and torch.from_dlpack.",
    .tp_dealloc = (destructor)Tensor_dealloc,
    .tp_repr = (reprfunc)Tensor_repr,
    .tp_methods = Tensor_methods,
    .tp_getset = Tensor_getset,
};
