"""halconv on dask arrays: images split into chunks, on one machine or a dask.distributed
cluster (``pip install halconv[dask]``).

Each chunk is filtered with its neighbours' rows and columns around it (``map_overlap``,
depth half the kernel per axis, enough for any kernel and SciPy's centring), then those
borrowed samples are trimmed. At the image's own edges a chunk's edge is the image's, so
the block's boundary rule is the image's rule: every boundary but wrap needs no samples from
dask (``boundary='none'``); wrap takes the opposite edge's samples (dask's ``periodic``).
Results equal the in-memory functions' on the whole image, whatever the chunking; chunks
may be NumPy or CuPy arrays (each is filtered where it lives).
"""

from __future__ import annotations

import dask.array as da
import numpy as np

from . import _api
from ._errors import InvalidArgumentError

# numpy.pad's names of halconv's boundaries (for 'full' mode's padding).
_NUMPY_PAD = {"constant": "constant", "nearest": "edge", "reflect": "symmetric", "mirror": "reflect", "wrap": "wrap"}


def _boundary_name(boundary) -> str:
    return _api._NAMES["boundary"][_api._boundary(boundary)]


def _as_dask(x) -> da.Array:
    if not isinstance(x, da.Array):
        x = da.asarray(x)
    if x.ndim != 2:
        raise InvalidArgumentError(f"the image must be a 2-D dask array, not {x.ndim}-D")
    return x


def _same(x: da.Array, depth, boundary: str, block_filter, dtype) -> da.Array:
    """block_filter (a 'same'-mode filter of one block) over every chunk, with overlap."""
    dask_boundary = "periodic" if boundary == "wrap" else "none"
    depth = {0: int(depth[0]), 1: int(depth[1])}
    if all(d == 0 for d in depth.values()):
        return x.map_blocks(block_filter, dtype=dtype)
    return x.map_overlap(block_filter, depth=depth, boundary=dask_boundary, trim=True, dtype=dtype,
                         allow_rechunk=True)


def _correlate(x, kernel, mode, boundary, fillvalue, operation, kwargs) -> da.Array:
    x = _as_dask(x)
    k = np.asarray(_api._host(kernel))
    if k.ndim != 2 or k.size == 0:
        raise InvalidArgumentError(f"the kernel must be a non-empty 2-D array, not {k.shape}")
    mode_value = _api._value("mode", mode, "mode")
    mode = _api._NAMES["mode"][mode_value]
    name = _boundary_name(boundary)
    kh, kw = k.shape
    if mode == "valid" and (kh > x.shape[0] or kw > x.shape[1]):
        raise InvalidArgumentError("For 'valid' mode on dask arrays the kernel must fit inside the image "
                                   f"({k.shape} in {x.shape})")
    function = _api.correlate2d if operation == "correlate" else _api.convolve2d

    def block_filter(block):
        return function(block, k, "same", name, fillvalue, **kwargs)

    if mode == "full":
        # full = valid of the image extended by the kernel's size less one on every side by
        # the rule; numpy.pad extends exactly as halconv's boundaries do.
        pad_mode = _NUMPY_PAD[name]
        pad_kwargs = {"constant_values": fillvalue} if pad_mode == "constant" else {}
        x = da.pad(x, ((kh - 1, kh - 1), (kw - 1, kw - 1)), mode=pad_mode, **pad_kwargs)
    same = _same(x, (kh // 2, kw // 2), name, block_filter, _output_dtype(x.dtype, kwargs))
    if mode == "same":
        return same
    # valid (also the last step of full): the outputs whose window lies inside, which sit at
    # a fixed offset of the same-mode outputs (found from halconv's own centring).
    sy, sx = _same_offsets(k.shape, operation)
    return same[kh - 1 - sy: x.shape[0] - sy, kw - 1 - sx: x.shape[1] - sx]


def _same_offsets(kernel_shape, operation):
    """Where SciPy's same-mode output starts inside the full output, per axis, read off
    halconv itself (one definition of the centring): a 1 x 1 image of 1 filtered by a kernel
    of distinct values gives full outputs that are the kernel's values, same's one output
    among them."""
    kh, kw = kernel_shape
    kernel = np.arange(1.0, kh * kw + 1.0).reshape(kh, kw)
    function = _api.correlate2d if operation == "correlate" else _api.convolve2d
    one = np.ones((1, 1))
    full = function(one, kernel, "full", "fill", device="cpu")
    same = function(one, kernel, "same", "fill", device="cpu")
    sy, sx = np.argwhere(full == same[0, 0])[0]
    return int(sy), int(sx)


def _output_dtype(dtype, kwargs):
    precision = kwargs.get("precision") or _api._PRECISION_OF_DTYPE.get(np.dtype(dtype))
    if precision not in _api._OUTPUT:
        raise InvalidArgumentError(f"the image holds {dtype}; halconv filters float64, float32 and float16 images "
                                   "(or name a precision)")
    return np.dtype(_api._OUTPUT[precision])


def correlate2d(x, kernel, mode="full", boundary="fill", fillvalue=0, **kwargs) -> da.Array:
    """halconv.correlate2d of a 2-D dask array (every mode and boundary); kwargs (algorithm,
    precision, device) go to each chunk's call."""
    return _correlate(x, kernel, mode, boundary, fillvalue, "correlate", kwargs)


def convolve2d(x, kernel, mode="full", boundary="fill", fillvalue=0, **kwargs) -> da.Array:
    """halconv.convolve2d of a 2-D dask array (see correlate2d)."""
    return _correlate(x, kernel, mode, boundary, fillvalue, "convolve", kwargs)


def gaussian_filter(x, sigma, mode="reflect", cval=0.0, truncate=4.0, *, radius=None, method="exact",
                    **kwargs) -> da.Array:
    """halconv.gaussian_filter of a 2-D dask array. method='recursive' is refused: its
    result depends on whole rows and columns, which chunks do not hold."""
    x = _as_dask(x)
    if method != "exact":
        raise InvalidArgumentError("the recursive Gaussian needs whole rows and columns: use method='exact' "
                                   "on dask arrays")
    _, sizes = _api._gaussian_sizes(sigma, truncate, radius)
    name = _boundary_name(mode)

    def block_filter(block):
        return _api.gaussian_filter(block, sigma, name, cval, truncate, radius=radius, **kwargs)

    return _same(x, (sizes[0] // 2, sizes[1] // 2), name, block_filter, _output_dtype(x.dtype, kwargs))
