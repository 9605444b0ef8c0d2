"""halconv: 2D convolution and FIR filters on NVIDIA GPUs and CPUs, with SciPy's semantics.

>>> import numpy as np, halconv
>>> image = np.random.default_rng(0).random((480, 640), dtype=np.float32)
>>> out = halconv.correlate2d(image, np.ones((5, 5), np.float32) / 25, mode="same", boundary="symm")

NumPy arrays give NumPy results (computed on the CPU, or on the GPU with copies when
device='cuda' or, with device='auto', when a CUDA device is present); CuPy arrays and
PyTorch tensors give their own kind on their own device, zero-copy, on the library's
current stream. halconv.dask filters dask arrays chunk by chunk.
"""

from ._api import (
    Plan,
    bilateral_filter,
    build_info,
    convolve2d,
    correlate2d,
    cpu_threads,
    cuda_info,
    detect_edges,
    gaussian_filter,
    gaussian_taps,
    multichannel_convolve2d,
    multichannel_correlate2d,
    recursive_gaussian_error,
    separable_convolve2d,
    separable_correlate2d,
    set_cpu_threads,
    unsharp_mask,
)
from ._errors import (
    DeviceError,
    Error,
    FileError,
    InternalError,
    InvalidArgumentError,
    OutOfMemoryError,
    UnsupportedError,
)
from ._errors import ERROR_TYPES as _ERROR_TYPES

_halconv._set_error_types(dict(_ERROR_TYPES))
__version__ = _halconv.build_info()["version"]

__all__ = [
    "DeviceError", "Error", "FileError", "InternalError", "InvalidArgumentError", "OutOfMemoryError", "Plan",
    "UnsupportedError", "bilateral_filter", "build_info", "convolve2d", "correlate2d", "cpu_threads", "cuda_info",
    "detect_edges", "gaussian_filter", "gaussian_taps", "multichannel_convolve2d", "multichannel_correlate2d",
    "recursive_gaussian_error", "separable_convolve2d", "separable_correlate2d", "set_cpu_threads", "unsharp_mask",
]
