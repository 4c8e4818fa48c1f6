"""Build of the adnn extension module (adnn._adnn) against libadnn.

Where libadnn is found, in this order:
  ADNN_BUILD_DIR=/path/to/build   an uninstalled build tree (after `make`):
                                   headers from its source and build trees,
                                   the library from its .libs/, with an rpath
                                   so that no LD_LIBRARY_PATH is needed;
  pkg-config adnn                  an installed adnn (PKG_CONFIG_PATH for a
                                   custom prefix).
The module links only libadnn.so.1; plugins are found at run time as for C
programs (ADNN_PLUGIN_PATH, else the installed pkglibdir), except that a module
built against a build tree uses that tree's plugins when ADNN_PLUGIN_PATH is
unset, as the uninstalled tools do.
"""
import json
import os
import re
import shlex
import subprocess

from setuptools import Extension, setup


def from_build_tree(build):
    build = os.path.abspath(build)
    src = build
    makefile = os.path.join(build, "Makefile")
    if os.path.exists(makefile):
        with open(makefile) as f:
            m = re.search(r"^abs_top_srcdir = (.*)$", f.read(), re.M)
        if m:
            src = m.group(1).strip()
    libdir = os.path.join(build, ".libs")
    if not os.path.exists(os.path.join(libdir, "libadnn.so")):
        raise SystemExit(f"ADNN_BUILD_DIR={build}: no .libs/libadnn.so there; run make first")
    # The build tree's plugin directories, as Makefile.am's ADNN_BUILD_PLUGIN_PATH:
    # the module uses them when ADNN_PLUGIN_PATH is unset (module.c), as the
    # uninstalled tools do (tools/uninstalled.c), so `import adnn` finds the
    # plugins of the tree it was built against with no environment variable.
    plugins = ":".join(os.path.join(build, "backends", b, ".libs") for b in ("cpu", "cuda"))
    return dict(include_dirs=[os.path.join(src, "include"), os.path.join(build, "include")],
                library_dirs=[libdir], runtime_library_dirs=[libdir], libraries=["adnn"],
                extra_compile_args=[], extra_link_args=[],
                define_macros=[("ADNN_PY_BUILD_PLUGIN_PATH", json.dumps(plugins))])


def from_pkg_config():
    try:
        cflags = subprocess.check_output(["pkg-config", "--cflags", "adnn"], text=True)
        libs = subprocess.check_output(["pkg-config", "--libs", "adnn"], text=True)
    except (OSError, subprocess.CalledProcessError):
        raise SystemExit("adnn not found: install it (make install), set PKG_CONFIG_PATH to "
                         "its lib/pkgconfig, or set ADNN_BUILD_DIR to a build tree")
    cfg = dict(include_dirs=[], library_dirs=[], runtime_library_dirs=[], libraries=[],
               extra_compile_args=[], extra_link_args=[], define_macros=[])
    for flag in shlex.split(cflags):
        (cfg["include_dirs"].append(flag[2:]) if flag.startswith("-I")
         else cfg["extra_compile_args"].append(flag))
    for flag in shlex.split(libs):
        if flag.startswith("-L"):
            cfg["library_dirs"].append(flag[2:])
            # A prefix the dynamic linker does not search: record it.
            if flag[2:] not in ("/usr/lib", "/usr/lib/x86_64-linux-gnu"):
                cfg["runtime_library_dirs"].append(flag[2:])
        elif flag.startswith("-l"):
            cfg["libraries"].append(flag[2:])
        else:
            cfg["extra_link_args"].append(flag)
    return cfg


def declares(cfg, name):
    """Whether <adnn.h> declares `name`: a feature check on the header, so the
    binding builds against libraries from before and after the feature."""
    for d in cfg["include_dirs"] + ["/usr/local/include", "/usr/include"]:
        h = os.path.join(d, "adnn.h")
        if os.path.exists(h):
            with open(h) as f:
                return re.search(r"\b%s\s*\(" % name, f.read()) is not None
    return False


build = os.environ.get("ADNN_BUILD_DIR")
cfg = from_build_tree(build) if build else from_pkg_config()
macros = cfg.pop("define_macros")
if declares(cfg, "adnn_memory_register"):
    macros.append(("ADNN_PY_HAVE_MEMORY_REGISTER", "1"))
here = os.path.dirname(os.path.abspath(__file__))
sources = [os.path.join("src", f) for f in ("module.c", "context.c", "tensor.c", "ops.c")]

setup(ext_modules=[Extension(
    "adnn._adnn", sources=sources, define_macros=macros,
    # The header too: a rebuilt library with new declarations rebuilds the module.
    depends=[os.path.join("src", f) for f in ("adnn_py.h", "dlpack_abi.h")]
    + [os.path.join(d, "adnn.h") for d in cfg["include_dirs"]
       if os.path.exists(os.path.join(d, "adnn.h"))],
    extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter",
                        "-Wno-missing-field-initializers"] + cfg.pop("extra_compile_args"),
    **cfg)])
