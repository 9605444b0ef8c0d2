"""Why the extension did not load, in words a user can act on (kept apart from the
extension so that it can say so when the extension itself cannot be imported)."""

# The shared libraries a CUDA build of the extension needs beyond the driver, and where
# they come from.
_CUDA_LIBRARIES = ("libcublas", "libcufft")


def import_error_hint(message: str):
    """The advice for an ImportError's message, or None when it is not a missing CUDA library."""
    missing = [lib for lib in _CUDA_LIBRARIES if lib in message]
    if not missing:
        return None
    return (f"{message}\nthis halconv was built with CUDA and needs {' and '.join(missing)} (cuBLAS, cuFFT) "
            "beyond the NVIDIA driver: install NVIDIA's wheels (pip install 'halconv[cuda]'; CuPy and PyTorch "
            "bring them too) or a CUDA toolkit, or build halconv without CUDA "
            "(pip install . -C cmake.define.HALCONV_WITH_CUDA=OFF)")
