"""adnn: deep-learning and linear-algebra primitives behind one stable C ABI.

A thin CPython extension over libadnn. Tensors come in and go out without
copies through DLPack (numpy.from_dlpack, torch.from_dlpack). See doc/python.md.
"""
from . import _adnn
from ._adnn import (OPS, ArgumentError, Context, DeviceError, DTypeError, Error, Tensor,
                    empty, gemm, info, library_version)

# One function per op of the op manifest (adnn/op_list.h): adnn.conv2d, ...
globals().update({name: getattr(_adnn, name) for name in OPS})

__version__ = library_version

__all__ = ["Context", "Tensor", "Error", "ArgumentError", "DTypeError", "DeviceError", "info",
           "empty", "from_dlpack", "gemm", "default_context", "OPS", *OPS]

_default = None


def default_context():
    """The context adnn.from_dlpack uses when none is given: Context("auto"), made once."""
    global _default
    if _default is None:
        _default = Context("auto")
    return _default


def from_dlpack(obj, ctx=None):
    """A zero-copy adnn.Tensor viewing obj (anything with __dlpack__ and
    __dlpack_device__, e.g. a NumPy array or a PyTorch tensor; read-only NumPy
    arrays come through the buffer protocol and stay read-only) on ctx
    (default: default_context()). The producer is kept alive while the tensor
    lives. Memory on another device than the context's raises DeviceError."""
    return _adnn._from_dlpack(obj, ctx if ctx is not None else default_context())
