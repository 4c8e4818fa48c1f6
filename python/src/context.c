/*
 * adnn.Context: one adnn_context, the lock that keeps it to one thread at a
 * time (the C threading rule of doc/api.md), the plan cache, and the spans of
 * memory the binding allocated or registered on it.
 */
#include "adnn_py.h"

#include <string.h>

void adnn_py_ctx_lock(ContextObject *c) {
  /* Waiting while holding the GIL cannot deadlock: a thread holding the
   * context lock never waits for the GIL before releasing it. */
  if (!PyThread_acquire_lock(c->lock, NOWAIT_LOCK)) {
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(c->lock, WAIT_LOCK);
    Py_END_ALLOW_THREADS
  }
}

void adnn_py_ctx_unlock(ContextObject *c) { PyThread_release_lock(c->lock); }

int adnn_py_ctx_check_open(ContextObject *c) {
  if (c->closed) {
    adnn_py_fail(AdnnError, "adnn.Context: the context is closed");
    return -1;
  }
  return 0;
}

/* ---- memory spans ---------------------------------------------------------- */

static int overlaps(const adnn_py_region *r, const char *lo, size_t bytes) {
  return lo < r->base + r->bytes && r->base < lo + bytes;
}

#ifdef ADNN_PY_HAVE_MEMORY_REGISTER
/* The kind of foreign memory on this context: memory the backend computes on
 * (device memory of a GPU context, any host memory of a CPU context), or host
 * memory seen from a GPU context (usable by adnn_memcpy only). */
static adnn_memory_kind foreign_kind(ContextObject *c, int host) {
  return (c->dl_device_type == ADNN_DL_CUDA && host) ? ADNN_MEMORY_HOST : ADNN_MEMORY_DEVICE;
}
#endif

adnn_py_region *adnn_py_region_acquire(ContextObject *c, char *lo, size_t bytes) {
  if (bytes == 0) bytes = 1; /* a zero-size view still has an address to account */
  char *hi = lo + bytes;
  /* Inside a known span: one more reference. */
  for (adnn_py_region *r = c->regions; r; r = r->next) {
    if (lo >= r->base && hi <= r->base + r->bytes) {
      r->refs++;
      return r;
    }
  }
  /* Partly overlapping known spans: an allocation cannot grow, a registered
   * region is replaced by one registration of the union (adnn refuses
   * overlapping registrations), which keeps covering every existing view. */
  Py_ssize_t refs = 0;
  for (adnn_py_region *r = c->regions; r; r = r->next) {
    if (!overlaps(r, lo, bytes)) continue;
    if (r->allocated)
      return (adnn_py_region *)adnn_py_fail(
          AdnnArgumentError,
          "adnn: memory at %p (%zu bytes) partly overlaps an adnn allocation of this context",
          (void *)lo, bytes);
    if (r->base < lo) lo = r->base;
    if (r->base + r->bytes > hi) hi = r->base + r->bytes;
  }
  adnn_py_region *u = PyMem_Calloc(1, sizeof *u);
  if (u == NULL) return (adnn_py_region *)PyErr_NoMemory();
  u->base = lo;
  u->bytes = (size_t)(hi - lo);
  adnn_py_ctx_lock(c);
  adnn_py_region **pp = &c->regions;
  while (*pp) {
    adnn_py_region *r = *pp;
    if (overlaps(r, u->base, u->bytes)) {
#ifdef ADNN_PY_HAVE_MEMORY_REGISTER
      adnn_memory_unregister(c->ctx, r->base);
#endif
      refs += r->refs;
      *pp = r->next;
      PyMem_Free(r);
    } else {
      pp = &r->next;
    }
  }
#ifdef ADNN_PY_HAVE_MEMORY_REGISTER
  adnn_status st = adnn_memory_register(c->ctx, u->base, u->bytes,
                                        foreign_kind(c, 0), 0);
  if (st != ADNN_STATUS_SUCCESS) {
    adnn_py_ctx_unlock(c);
    PyMem_Free(u);
    /* Earlier views merged into the union lost their registration: this can
     * only happen when adnn refuses memory it accepted before. */
    return (adnn_py_region *)adnn_py_raise(st, "adnn_memory_register");
  }
#endif
  adnn_py_ctx_unlock(c);
  u->refs = refs + 1;
  u->next = c->regions;
  c->regions = u;
  return u;
}

static void region_free_locked(ContextObject *c, adnn_py_region *r) {
  if (r->allocated) {
    adnn_free(c->ctx, r->base);
  } else {
#ifdef ADNN_PY_HAVE_MEMORY_REGISTER
    adnn_memory_unregister(c->ctx, r->base);
#endif
  }
}

void adnn_py_region_release(ContextObject *c, char *lo, size_t bytes) {
  /* Found by address, not remembered: a registered region may have been
   * replaced by a larger one since the view took its reference. */
  if (bytes == 0) bytes = 1;
  adnn_py_region *r = c->regions;
  while (r && !(lo >= r->base && lo + bytes <= r->base + r->bytes)) r = r->next;
  if (r == NULL || --r->refs > 0) return;
  adnn_py_region **pp = &c->regions;
  while (*pp && *pp != r) pp = &(*pp)->next;
  if (*pp) *pp = r->next;
  adnn_py_ctx_lock(c);
  region_free_locked(c, r);
  adnn_py_ctx_unlock(c);
  PyMem_Free(r);
}

/* ---- plan cache -------------------------------------------------------------- */

/* A plan is destroyed under its context's lock, whoever drops the last
 * reference (the cache, or an op still executing it when close() ran). */
static void plan_capsule_destroy(PyObject *cap) {
  adnn_plan *p = PyCapsule_GetPointer(cap, "adnn_plan");
  ContextObject *c = PyCapsule_GetContext(cap);
  if (p == NULL || c == NULL) return;
  adnn_py_ctx_lock(c);
  adnn_plan_destroy(p);
  adnn_py_ctx_unlock(c);
}

PyObject *adnn_py_plan_get(ContextObject *c, int op_index, const void *desc, size_t desc_size,
                           adnn_status (*create)(adnn_context *, const void *, adnn_plan **),
                           const char *op_name) {
  /* The key is the op and the descriptor's bytes: every *_desc_init()
   * zeroes the whole struct first, so padding and unused dims are zero and
   * equal problems (shapes, dtypes, strides, parameters) give equal keys. */
  char buf[1024];
  if (desc_size + 1 > sizeof buf) {
    PyErr_SetString(PyExc_SystemError, "adnn: descriptor larger than the key buffer");
    return NULL;
  }
  buf[0] = (char)op_index;
  memcpy(buf + 1, desc, desc_size);
  PyObject *key = PyBytes_FromStringAndSize(buf, (Py_ssize_t)desc_size + 1);
  if (key == NULL) return NULL;
  PyObject *cap = PyDict_GetItemWithError(c->plans, key);
  if (cap != NULL) {
    Py_DECREF(key);
    c->plan_hits++;
    Py_INCREF(cap);
    return cap;
  }
  if (PyErr_Occurred()) {
    Py_DECREF(key);
    return NULL;
  }
  adnn_plan *plan = NULL;
  adnn_status st;
  /* Plan creation may tune (measure algorithms): release the GIL. */
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(c->lock, WAIT_LOCK);
  st = create(c->ctx, desc, &plan);
  PyThread_release_lock(c->lock);
  Py_END_ALLOW_THREADS
  if (st != ADNN_STATUS_SUCCESS) {
    Py_DECREF(key);
    return adnn_py_raise(st, op_name);
  }
  c->plan_misses++;
  /* Another thread may have created the same plan meanwhile: keep one. */
  PyObject *existing = PyDict_GetItemWithError(c->plans, key);
  if (existing != NULL) {
    Py_DECREF(key);
    adnn_py_ctx_lock(c);
    adnn_plan_destroy(plan);
    adnn_py_ctx_unlock(c);
    Py_INCREF(existing);
    return existing;
  }
  cap = PyCapsule_New(plan, "adnn_plan", plan_capsule_destroy);
  if (cap == NULL) {
    adnn_py_ctx_lock(c);
    adnn_plan_destroy(plan);
    adnn_py_ctx_unlock(c);
    Py_DECREF(key);
    return NULL;
  }
  PyCapsule_SetContext(cap, c);
  int rc = PyDict_SetItem(c->plans, key, cap);
  Py_DECREF(key);
  if (rc < 0) {
    Py_DECREF(cap);
    return NULL;
  }
  return cap;
}

/* ---- the type ------------------------------------------------------------------ */

static int Context_init(ContextObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"backend", NULL};
  const char *backend = "auto";
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|s:Context", kwlist, &backend)) return -1;
  if (self->ctx != NULL) {
    PyErr_SetString(PyExc_RuntimeError, "adnn.Context: already initialized");
    return -1;
  }
  adnn_context *ctx = NULL;
  adnn_status st;
  Py_BEGIN_ALLOW_THREADS /* plugin loading and probing may take a while */
  st = adnn_context_create(backend, &ctx);
  Py_END_ALLOW_THREADS
  if (st != ADNN_STATUS_SUCCESS) {
    adnn_py_raise(st, "adnn_context_create");
    return -1;
  }
  self->lock = PyThread_allocate_lock();
  self->plans = PyDict_New();
  if (self->lock == NULL || self->plans == NULL) {
    adnn_context_destroy(ctx);
    PyErr_NoMemory();
    return -1;
  }
  self->ctx = ctx;
  const char *name = adnn_context_get_backend(ctx);
  self->device = adnn_context_get_device(ctx);
  if (strcmp(name, "cpu") == 0) self->dl_device_type = ADNN_DL_CPU;
  else if (strcmp(name, "cuda") == 0) self->dl_device_type = ADNN_DL_CUDA;
  else self->dl_device_type = 0;
  return 0;
}

static void destroy_plans(ContextObject *self) {
  if (self->plans == NULL) return;
  PyDict_Clear(self->plans); /* each capsule destroys its plan under the lock */
}

static void Context_dealloc(ContextObject *self) {
  /* Every tensor holds a reference to its context, so no region is left. */
  if (self->lock) destroy_plans(self);
  Py_CLEAR(self->plans);
  if (self->ctx) adnn_context_destroy(self->ctx);
  if (self->lock) PyThread_free_lock(self->lock);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static int check_init(ContextObject *self) {
  if (self->ctx == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "adnn.Context: not initialized");
    return -1;
  }
  return 0;
}

static PyObject *Context_synchronize(ContextObject *self, PyObject *noargs) {
  if (check_init(self) < 0 || adnn_py_ctx_check_open(self) < 0) return NULL;
  adnn_status st;
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(self->lock, WAIT_LOCK);
  st = adnn_context_synchronize(self->ctx);
  PyThread_release_lock(self->lock);
  Py_END_ALLOW_THREADS
  if (st != ADNN_STATUS_SUCCESS) return adnn_py_raise(st, "adnn_context_synchronize");
  Py_RETURN_NONE;
}

static PyObject *Context_close(ContextObject *self, PyObject *noargs) {
  if (check_init(self) < 0) return NULL;
  if (!self->closed) {
    destroy_plans(self);
    self->closed = 1;
  }
  Py_RETURN_NONE;
}

static PyObject *Context_enter(ContextObject *self, PyObject *noargs) {
  if (check_init(self) < 0 || adnn_py_ctx_check_open(self) < 0) return NULL;
  Py_INCREF(self);
  return (PyObject *)self;
}

static PyObject *Context_exit(ContextObject *self, PyObject *args) {
  return Context_close(self, NULL);
}

static PyObject *Context_plan_cache_info(ContextObject *self, PyObject *noargs) {
  if (check_init(self) < 0) return NULL;
  return Py_BuildValue("{s:K,s:K,s:n}", "hits", self->plan_hits, "misses", self->plan_misses,
                       "size", PyDict_Size(self->plans));
}

static PyObject *Context_memory_spans(ContextObject *self, PyObject *noargs) {
  PyObject *list = PyList_New(0);
  if (list == NULL) return NULL;
  for (adnn_py_region *r = self->regions; r; r = r->next) {
    PyObject *t = Py_BuildValue("(Knns)", (unsigned long long)(uintptr_t)r->base,
                                (Py_ssize_t)r->bytes, r->refs,
                                r->allocated ? "allocated" : "registered");
    if (t == NULL || PyList_Append(list, t) < 0) {
      Py_XDECREF(t);
      Py_DECREF(list);
      return NULL;
    }
    Py_DECREF(t);
  }
  return list;
}

static PyObject *Context_get_backend(ContextObject *self, void *closure) {
  if (check_init(self) < 0) return NULL;
  return PyUnicode_FromString(adnn_context_get_backend(self->ctx));
}

static PyObject *Context_get_device(ContextObject *self, void *closure) {
  if (check_init(self) < 0) return NULL;
  return PyLong_FromLong(self->device);
}

static PyObject *Context_get_closed(ContextObject *self, void *closure) {
  return PyBool_FromLong(self->closed);
}

static PyObject *Context_repr(ContextObject *self) {
  if (self->ctx == NULL) return PyUnicode_FromString("<adnn.Context (uninitialized)>");
  return PyUnicode_FromFormat("<adnn.Context backend=%s device=%d%s>",
                              adnn_context_get_backend(self->ctx), self->device,
                              self->closed ? " closed" : "");
}

static PyMethodDef Context_methods[] = {
    {"synchronize", (PyCFunction)Context_synchronize, METH_NOARGS,
     "synchronize()\n\nWaits until all work submitted on this context has finished."},
    {"close", (PyCFunction)Context_close, METH_NOARGS,
     "close()\n\nDestroys the cached plans; later ops on this context raise adnn.Error.\n"
     "The adnn context itself is destroyed when the last tensor on it is gone."},
    {"__enter__", (PyCFunction)Context_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)Context_exit, METH_VARARGS, NULL},
    {"plan_cache_info", (PyCFunction)Context_plan_cache_info, METH_NOARGS,
     "plan_cache_info() -> dict\n\nThe plan cache: {'hits', 'misses', 'size'}."},
    {"memory_spans", (PyCFunction)Context_memory_spans, METH_NOARGS,
     "memory_spans() -> list\n\n(address, bytes, views, 'allocated'|'registered') for every span\n"
     "of memory the binding allocated or registered on this context."},
    {NULL}};

static PyGetSetDef Context_getset[] = {
    {"backend", (getter)Context_get_backend, NULL, "the backend that runs: 'cpu', 'cuda'", NULL},
    {"device", (getter)Context_get_device, NULL, "the device index (the N of 'cuda:N')", NULL},
    {"closed", (getter)Context_get_closed, NULL, "whether close() was called", NULL},
    {NULL}};

PyTypeObject ContextType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "adnn.Context",
    .tp_basicsize = sizeof(ContextObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Context(backend='auto')\n\n"
              "An adnn context on a backend: 'auto' (the best usable one), 'cpu', 'cuda',\n"
              "'cuda:N'. An explicit request fails with the library's reason rather than\n"
              "falling back. Use it as a context manager, or call close().",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Context_init,
    .tp_dealloc = (destructor)Context_dealloc,
    .tp_repr = (reprfunc)Context_repr,
    .tp_methods = Context_methods,
    .tp_getset = Context_getset,
};
