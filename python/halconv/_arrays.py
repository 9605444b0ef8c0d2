"""Arrays of NumPy, CuPy and PyTorch as halconv's C++ layer sees them.

An array is described to the extension as (data pointer, shape, strides in elements,
dtype code, device: -1 host or a CUDA ordinal); its memory is never copied unless its
layout needs it (halconv reads rows of adjacent elements: a view whose last axis is not
contiguous, or that runs backwards, is copied by its own library first). Results are
allocated by the input's library on the input's device, so NumPy in gives NumPy out,
CuPy gives CuPy and a torch tensor a torch tensor, on the library's current stream.
"""

from __future__ import annotations

import numpy as np

from ._errors import InvalidArgumentError

# Element types the extension takes, by NumPy's dtype.str without the byte order.
_CODES = {"f2": np.float16, "f4": np.float32, "f8": np.float64, "u1": np.uint8, "u2": np.uint16}


def _module_of(x) -> str:
    return type(x).__module__.split(".")[0]


def _torch_dtype(torch, dtype):
    return {np.float16: torch.float16, np.float32: torch.float32, np.float64: torch.float64,
            np.uint8: torch.uint8, np.uint16: torch.uint16}[np.dtype(dtype).type]


class Array:
    """One argument: the array (made acceptable to halconv), its library and device."""

    def __init__(self, x, role: str):
        self.role = role
        lib = _module_of(x)
        if lib == "cupy":
            self.library = "cupy"
        elif lib == "torch":
            self.library = "torch"
            x = x.detach()
        else:
            if hasattr(x, "__cuda_array_interface__") and not isinstance(x, np.ndarray):
                raise InvalidArgumentError(
                    f"{role} is a CUDA array of {type(x).__module__}.{type(x).__name__}; halconv takes NumPy "
                    "arrays, CuPy arrays and PyTorch tensors (convert it with cupy.asarray or torch.as_tensor)")
            self.library = "numpy"
            try:
                x = np.asarray(x)
            except Exception as e:  # noqa: BLE001 - whatever NumPy refuses is an invalid argument here
                raise InvalidArgumentError(f"{role} is not an array: {e}") from e
        self.array = x

    # ---- what the array is ----
    @property
    def on_cuda(self) -> bool:
        if self.library == "cupy":
            return True
        if self.library == "torch":
            return self.array.is_cuda
        return False

    @property
    def device(self) -> int:
        if self.library == "cupy":
            return int(self.array.device.id)
        if self.library == "torch" and self.array.is_cuda:
            return int(self.array.device.index)
        return -1

    @property
    def shape(self) -> tuple:
        return tuple(int(n) for n in self.array.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def dtype(self) -> np.dtype:
        if self.library == "torch":
            import torch

            names = {torch.float16: "float16", torch.float32: "float32", torch.float64: "float64",
                     torch.uint8: "uint8", torch.bool: "bool", torch.int8: "int8", torch.int16: "int16",
                     torch.int32: "int32", torch.int64: "int64", torch.complex64: "complex64",
                     torch.complex128: "complex128"}
            name = names.get(self.array.dtype)
            if name is None:
                raise InvalidArgumentError(f"{self.role} holds {self.array.dtype}, which halconv does not take")
            return np.dtype(name)
        return np.dtype(self.array.dtype)

    def stream(self) -> int:
        """The library's current CUDA stream on the array's device (0: the legacy default)."""
        if self.library == "cupy":
            import cupy

            with cupy.cuda.Device(self.device):
                return int(cupy.cuda.get_current_stream().ptr)
        if self.library == "torch" and self.array.is_cuda:
            import torch

            return int(torch.cuda.current_stream(self.array.device).cuda_stream)
        return 0

    # ---- conversions in the array's own library ----
    def astype(self, dtype) -> "Array":
        dtype = np.dtype(dtype)
        if self.dtype == dtype:
            return self
        if self.library == "torch":
            import torch

            converted = self.array.to(_torch_dtype(torch, dtype))
        else:
            converted = self.array.astype(dtype)
        return self._replaced(converted)

    def rows_contiguous(self) -> "Array":
        """The array itself if its last axis is dense and every stride is positive, else a dense copy."""
        itemsize = self.dtype.itemsize
        strides = self._byte_strides()
        dense_x = self.shape[-1] <= 1 or strides[-1] == itemsize
        forward = all(s > 0 and s % itemsize == 0 for s, n in zip(strides, self.shape) if n > 1)
        if dense_x and forward:
            return self
        if self.library == "torch":
            return self._replaced(self.array.contiguous())
        if self.library == "cupy":
            import cupy

            return self._replaced(cupy.ascontiguousarray(self.array))
        return self._replaced(np.ascontiguousarray(self.array))

    def empty(self, shape, dtype):
        """A new array of this one's library and device."""
        shape = tuple(int(n) for n in shape)
        if self.library == "torch":
            import torch

            return torch.empty(shape, dtype=_torch_dtype(torch, dtype), device=self.array.device)
        if self.library == "cupy":
            import cupy

            with cupy.cuda.Device(self.device):
                return cupy.empty(shape, dtype=dtype)
        return np.empty(shape, dtype=dtype)

    def moved(self, source: int, destination: int) -> "Array":
        """A view with axis `source` moved to `destination`, in the array's own library."""
        if self.library == "torch":
            return self._replaced(self.array.movedim(source, destination))
        if self.library == "cupy":
            import cupy

            return self._replaced(cupy.moveaxis(self.array, source, destination))
        return self._replaced(np.moveaxis(self.array, source, destination))

    def flipped(self, x):
        """x reversed along its first two axes, in this array's library."""
        if self.library == "torch":
            import torch

            return torch.flip(x, dims=(0, 1))
        return x[::-1, ::-1]

    def describe(self) -> tuple:
        """(data, shape, strides in elements, dtype code, device) for the extension."""
        itemsize = self.dtype.itemsize
        code = self.dtype.str[1:]
        if code not in _CODES:
            raise InvalidArgumentError(f"{self.role} holds {self.dtype}, which halconv does not take here")
        strides = self._byte_strides()
        if any(s % itemsize for s in strides):
            raise InvalidArgumentError(f"{self.role} has strides {strides} that are not whole elements")
        return (self._data_pointer(), self.shape, tuple(s // itemsize for s in strides), code, self.device)

    # ---- internals ----
    def _replaced(self, x) -> "Array":
        other = object.__new__(Array)
        other.role, other.library, other.array = self.role, self.library, x
        return other

    def _byte_strides(self) -> tuple:
        if self.library == "torch":
            return tuple(int(s) * self.array.element_size() for s in self.array.stride())
        return tuple(int(s) for s in self.array.strides)

    def _data_pointer(self) -> int:
        if self.library == "torch":
            return int(self.array.data_ptr())
        if self.library == "cupy":
            return int(self.array.data.ptr)
        return int(self.array.__array_interface__["data"][0])


def wrap_output(like: Array, out, shape, dtype, role="out") -> Array:
    """The caller's `out` checked against what the call produces, or a new array like `like`."""
    if out is None:
        return Array(like.empty(shape, dtype), role)
    o = Array(out, role)
    if o.library != like.library or o.device != like.device:
        raise InvalidArgumentError(
            f"{role} must be an array of the image's library and device ({like.library}"
            + (f" on cuda:{like.device}" if like.device >= 0 else "") + f"), not {o.library}")
    if o.shape != tuple(shape) or o.dtype != np.dtype(dtype):
        raise InvalidArgumentError(
            f"{role} is {o.shape} {o.dtype} but this call produces {tuple(shape)} {np.dtype(dtype)}")
    if o.rows_contiguous() is not o:
        raise InvalidArgumentError(f"{role} must have a dense last axis and positive strides")
    return o
