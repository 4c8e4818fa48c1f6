/*
 * adnn._adnn: the module: exceptions, adnn.info(), adnn.empty(),
 * adnn.from_dlpack(), and the registration of the types and op functions.
 */
#include "adnn_py.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

PyObject *AdnnError, *AdnnArgumentError, *AdnnTypeError, *AdnnDeviceError;

static PyObject *error_class(adnn_status st) {
  return (st >= 1000 && st < 2000) ? AdnnArgumentError : AdnnError;
}

static PyObject *raise_with(PyObject *type, adnn_status st, const char *message) {
  PyObject *msg = PyUnicode_FromString(message);
  if (msg == NULL) return NULL;
  PyObject *exc = PyObject_CallOneArg(type, msg);
  if (exc == NULL) {
    Py_DECREF(msg);
    return NULL;
  }
  PyObject *status = PyLong_FromLong((long)st);
  PyObject *name = PyUnicode_FromString(adnn_status_name(st));
  if (status && name) {
    PyObject_SetAttrString(exc, "status", status);
    PyObject_SetAttrString(exc, "status_name", name);
    PyObject_SetAttrString(exc, "message", msg);
  }
  Py_XDECREF(status);
  Py_XDECREF(name);
  Py_DECREF(msg);
  PyErr_SetObject(type, exc);
  Py_DECREF(exc);
  return NULL;
}

PyObject *adnn_py_raise(adnn_status status, const char *what) {
  const char *msg = adnn_last_error();
  char buf[1200];
  if (msg == NULL || *msg == 0) msg = adnn_status_string(status);
  snprintf(buf, sizeof buf, "%s", msg);
  (void)what; /* the library's message already names the function */
  return raise_with(error_class(status), status, buf);
}

PyObject *adnn_py_fail(PyObject *type, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  PyObject *s = PyUnicode_FromFormatV(fmt, ap);
  va_end(ap);
  if (s == NULL) return NULL;
  const char *m = PyUnicode_AsUTF8(s);
  raise_with(type, ADNN_STATUS_BAD_PARAM, m ? m : "adnn: bad argument");
  Py_DECREF(s);
  return NULL;
}

/* ---- the build tree's plugins -------------------------------------------------------------- */

/* Whether this module uses the plugins of the build tree it was built against:
 * reported as info()["build_tree"], as adnn-info --json does. */
static int use_build_tree;

/* A module built with ADNN_BUILD_DIR (setup.py) carries that tree's plugin
 * directories. The library, like any installed program's, searches only
 * ADNN_PLUGIN_PATH or its compiled-in pkglibdir, where an uninstalled build has
 * nothing (or an older installed set), so `import adnn` would find no backend.
 * As tools/uninstalled.c does for adnn-info, the module sets ADNN_PLUGIN_PATH
 * to the tree's directories before the first library call, only when the user
 * has not set it and the tree still exists. A module built against an
 * installed adnn (pkg-config) has no such path and never does this. */
static void use_build_tree_plugins(void) {
#ifdef ADNN_PY_BUILD_PLUGIN_PATH
  if (getenv("ADNN_PLUGIN_PATH") != NULL) return; /* the user's choice stands */
  const char *path = ADNN_PY_BUILD_PLUGIN_PATH;
  char first[4096];
  size_t n = strcspn(path, ":");
  struct stat st;
  if (n >= sizeof first) return;
  memcpy(first, path, n);
  first[n] = '\0';
  if (stat(first, &st) != 0 || !S_ISDIR(st.st_mode)) return; /* the build tree is gone */
  use_build_tree = setenv("ADNN_PLUGIN_PATH", path, 0) == 0;
#endif
}

static PyObject *build_plugin_path(void) {
#ifdef ADNN_PY_BUILD_PLUGIN_PATH
  return PyUnicode_FromString(ADNN_PY_BUILD_PLUGIN_PATH);
#else
  Py_RETURN_NONE;
#endif
}

/* ---- info() ------------------------------------------------------------------------------ */

static PyObject *props_dict(size_t n, const adnn_property *p) {
  PyObject *d = PyDict_New();
  for (size_t i = 0; d && i < n; i++) {
    PyObject *v = PyUnicode_FromString(p[i].value ? p[i].value : "");
    if (v == NULL || PyDict_SetItemString(d, p[i].key, v) < 0) Py_CLEAR(d);
    Py_XDECREF(v);
  }
  return d;
}

static PyObject *str_or_none(const char *s) {
  if (s == NULL) Py_RETURN_NONE;
  return PyUnicode_FromString(s);
}

static PyObject *info(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"backend", NULL};
  const char *want = "auto";
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|s:info", kwlist, &want)) return NULL;
  const char *path = "", *source = "", *auto_name = "", *auto_reason = "";
  adnn_backend_search_path(&path, &source);
  adnn_status auto_st = adnn_backend_auto_choice(&auto_name, &auto_reason);
  size_t count = 0;
  adnn_backend_count(&count);
  PyObject *plugins = PyList_New(0);
  if (plugins == NULL) return NULL;
  size_t wn = strcspn(want, ":");
  for (size_t i = 0; i < count; i++) {
    const adnn_backend_info *b;
    if (adnn_backend_get(i, &b) != ADNN_STATUS_SUCCESS) continue;
    if (strcmp(want, "auto") != 0 && !(strlen(b->name) == wn && strncmp(b->name, want, wn) == 0))
      continue;
    PyObject *devices = PyList_New(0);
    for (size_t d = 0; devices && d < b->device_count; d++) {
      const adnn_device_info *dev = &b->devices[d];
      PyObject *o = Py_BuildValue("{s:i,s:s,s:N}", "index", dev->index, "name", dev->name,
                                  "properties", props_dict(dev->property_count, dev->properties));
      if (o == NULL || PyList_Append(devices, o) < 0) Py_CLEAR(devices);
      Py_XDECREF(o);
    }
    PyObject *o = devices ? Py_BuildValue(
        "{s:s,s:s,s:s,s:i,s:s,s:s,s:N,s:N}", "name", b->name, "path", b->path, "state",
        adnn_backend_state_name(b->state), "score", b->score, "reason", b->reason ? b->reason : "",
        "version", b->version ? b->version : "", "properties",
        props_dict(b->property_count, b->properties), "devices", devices) : NULL;
    if (o == NULL || PyList_Append(plugins, o) < 0) {
      Py_XDECREF(o);
      Py_DECREF(plugins);
      return NULL;
    }
    Py_DECREF(o);
  }
  /* Create a context the way an application would, as adnn-info does. */
  adnn_context *ctx = NULL;
  adnn_status st;
  Py_BEGIN_ALLOW_THREADS
  st = adnn_context_create(want, &ctx);
  Py_END_ALLOW_THREADS
  PyObject *context;
  if (st == ADNN_STATUS_SUCCESS) {
    context = Py_BuildValue("{s:s,s:O,s:s,s:s,s:i,s:s}", "request", want, "created", Py_True,
                            "status", adnn_status_name(st), "backend",
                            adnn_context_get_backend(ctx), "device", adnn_context_get_device(ctx),
                            "error", "");
    adnn_context_destroy(ctx);
  } else {
    context = Py_BuildValue("{s:s,s:O,s:s,s:s,s:i,s:s}", "request", want, "created", Py_False,
                            "status", adnn_status_name(st), "backend", "", "device", -1,
                            "error", adnn_last_error());
  }
  const char *user = NULL, *sys = NULL;
  size_t user_n = 0, sys_n = 0;
  adnn_perfdb_info(&user, &user_n, &sys, &sys_n);
  PyObject *perfdb = Py_BuildValue("{s:N,s:n,s:N,s:n}", "user_path", str_or_none(user),
                                   "user_entries", (Py_ssize_t)user_n, "system_path",
                                   str_or_none(sys), "system_entries", (Py_ssize_t)sys_n);
  return Py_BuildValue("{s:s,s:s,s:s,s:O,s:N,s:{s:s,s:s},s:N,s:N}", "version",
                       adnn_version_string(), "plugin_path", path, "plugin_path_source", source,
                       "build_tree", use_build_tree ? Py_True : Py_False, "plugins", plugins,
                       "auto", "backend",
                       auto_st == ADNN_STATUS_SUCCESS ? auto_name : "", "reason",
                       auto_reason ? auto_reason : "", "context", context, "perfdb", perfdb);
}

/* ---- tensors ------------------------------------------------------------------------------- */

static PyObject *empty(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"ctx", "shape", "dtype", NULL};
  PyObject *ctx, *shape, *dtype_obj = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O|O:empty", kwlist, &ContextType, &ctx,
                                   &shape, &dtype_obj))
    return NULL;
  adnn_dtype dtype = ADNN_DTYPE_F32;
  if (dtype_obj && adnn_py_dtype_from_name(dtype_obj, &dtype) < 0) return NULL;
  PyObject *seq = PySequence_Fast(shape, "adnn.empty: shape must be a sequence of ints");
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n > ADNN_MAX_RANK) {
    Py_DECREF(seq);
    return adnn_py_fail(AdnnArgumentError, "adnn.empty: rank %zd is more than %d", n,
                        ADNN_MAX_RANK);
  }
  int64_t dims[ADNN_MAX_RANK];
  for (Py_ssize_t i = 0; i < n; i++) {
    dims[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
    if (dims[i] == -1 && PyErr_Occurred()) {
      Py_DECREF(seq);
      return NULL;
    }
  }
  Py_DECREF(seq);
  return adnn_py_tensor_empty((ContextObject *)ctx, dtype, (int)n, dims);
}

static PyObject *from_dlpack(PyObject *module, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"obj", "ctx", NULL};
  PyObject *obj, *ctx;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!:from_dlpack", kwlist, &obj, &ContextType,
                                   &ctx))
    return NULL;
  return (PyObject *)adnn_py_as_tensor((ContextObject *)ctx, obj, 0, "adnn.from_dlpack");
}

static PyObject *have_memory_register(PyObject *module, PyObject *noargs) {
#ifdef ADNN_PY_HAVE_MEMORY_REGISTER
  Py_RETURN_TRUE;
#else
  Py_RETURN_FALSE;
#endif
}

static PyMethodDef module_methods[] = {
    {"info", (PyCFunction)(void (*)(void))info, METH_VARARGS | METH_KEYWORDS,
     "info(backend='auto') -> dict\n\nWhat `adnn-info --json` prints: version, plugin path, every "
     "plugin\nwith state, reason and devices, the 'auto' choice, a trial context, the\n"
     "performance database."},
    {"empty", (PyCFunction)(void (*)(void))empty, METH_VARARGS | METH_KEYWORDS,
     "empty(ctx, shape, dtype='f32') -> Tensor\n\nA new packed (row-major) tensor on ctx, "
     "uninitialized."},
    {"_from_dlpack", (PyCFunction)(void (*)(void))from_dlpack, METH_VARARGS | METH_KEYWORDS,
     "_from_dlpack(obj, ctx) -> Tensor"},
    {"_have_memory_register", (PyCFunction)have_memory_register, METH_NOARGS,
     "Whether the extension was built against a libadnn with adnn_memory_register."},
    {NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "adnn._adnn", "The adnn C extension; use the adnn package.", -1,
    module_methods};

static PyObject *new_error(PyObject *m, const char *name, PyObject *bases, const char *doc) {
  char full[64];
  snprintf(full, sizeof full, "adnn.%s", name);
  PyObject *e = PyErr_NewExceptionWithDoc(full, doc, bases, NULL);
  if (e == NULL) return NULL;
  Py_INCREF(e);
  if (PyModule_AddObject(m, name, e) < 0) {
    Py_DECREF(e);
    Py_DECREF(e);
    return NULL;
  }
  return e;
}

PyMODINIT_FUNC PyInit__adnn(void) {
  use_build_tree_plugins(); /* before any library call */
  if (PyType_Ready(&ContextType) < 0 || PyType_Ready(&TensorType) < 0) return NULL;
  PyObject *m = PyModule_Create(&module_def);
  if (m == NULL) return NULL;
  AdnnError = new_error(m, "Error", NULL,
                        "An adnn status other than success: .status (int), .status_name, and "
                        ".message (the library's message).");
  if (AdnnError == NULL) goto fail;
  PyObject *b = PyTuple_Pack(2, AdnnError, PyExc_ValueError);
  AdnnArgumentError = b ? new_error(m, "ArgumentError", b, "A bad argument (ValueError).") : NULL;
  Py_XDECREF(b);
  b = PyTuple_Pack(2, AdnnError, PyExc_TypeError);
  AdnnTypeError = b ? new_error(m, "DTypeError", b, "An argument of the wrong type or dtype "
                                                    "(TypeError).") : NULL;
  Py_XDECREF(b);
  b = AdnnArgumentError ? PyTuple_Pack(1, AdnnArgumentError) : NULL;
  AdnnDeviceError = b ? new_error(m, "DeviceError", b, "Memory on another device than the "
                                                       "context's (ValueError).") : NULL;
  Py_XDECREF(b);
  if (!AdnnArgumentError || !AdnnTypeError || !AdnnDeviceError) goto fail;
  Py_INCREF(&ContextType);
  if (PyModule_AddObject(m, "Context", (PyObject *)&ContextType) < 0) goto fail;
  Py_INCREF(&TensorType);
  if (PyModule_AddObject(m, "Tensor", (PyObject *)&TensorType) < 0) goto fail;
  PyObject *g = PyCFunction_NewEx(&adnn_py_gemm_def, NULL, NULL);
  if (g == NULL || PyModule_AddObject(m, "gemm", g) < 0) goto fail;
  if (adnn_py_ops_add(m) < 0) goto fail;
  if (PyModule_AddStringConstant(m, "library_version", adnn_version_string()) < 0) goto fail;
  if (PyModule_AddObject(m, "_build_plugin_path", build_plugin_path()) < 0) goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
