"""The filters in SciPy's terms, over the C++ library (halconv/halconv.h states the
semantics, limits and error bounds of each)."""

from __future__ import annotations

import numpy as np

from . import _halconv
from ._arrays import Array, wrap_output
from ._errors import InvalidArgumentError

_NAMES = _halconv.names()

# scipy.signal's boundary names beside scipy.ndimage's (the C++ library's own).
_BOUNDARY_ALIASES = {"fill": "constant", "pad": "constant", "symm": "reflect", "symmetric": "reflect",
                     "circular": "wrap", "grid-wrap": "wrap", "grid-mirror": "reflect", "grid-constant": "constant"}
# Storage and output dtypes of each precision (halconv.h, "Element types per precision").
_STORAGE = {"f64": np.float64, "f32": np.float32, "f16": np.float16, "f16f32": np.float16}
_OUTPUT = {"f64": np.float64, "f32": np.float32, "f16": np.float16, "f16f32": np.float32}
_PRECISION_OF_DTYPE = {np.dtype(np.float64): "f64", np.dtype(np.float32): "f32", np.dtype(np.float16): "f16"}


def _value(kind: str, name, what: str, aliases=None) -> int:
    """The C++ enum value of `name` among the library's names of `kind`."""
    names = _NAMES[kind]
    key = name
    if isinstance(name, str):
        key = (aliases or {}).get(name, name)
    if key not in names:
        allowed = list(names) + sorted((aliases or {}).keys())
        raise InvalidArgumentError(f"unknown {what} {name!r}; allowed: {', '.join(allowed)}")
    return names.index(key)


def _boundary(boundary) -> int:
    return _value("boundary", boundary, "boundary", _BOUNDARY_ALIASES)


def _device(device) -> int:
    return _value("device", device, "device")


# 8- and 16-bit images are filtered as they are (the library stages them): f32 unless named.
_INTEGER_DTYPES = (np.dtype(np.uint8), np.dtype(np.uint16))


def _precision(precision, image: Array) -> str:
    if precision is not None:
        _value("precision", precision, "precision")
        return precision
    dtype = image.dtype
    if dtype in _INTEGER_DTYPES:
        return "f32"
    if dtype not in _PRECISION_OF_DTYPE:
        raise InvalidArgumentError(
            f"{image.role} holds {dtype}; halconv filters float64, float32, float16, uint8 and uint16 images "
            "(precision follows a float image's dtype: cast it, or name a precision)")
    return _PRECISION_OF_DTYPE[dtype]


def _output_dtype(precision: str, image: Array, output_dtype) -> np.dtype:
    """The result's dtype: the precision's float type, or 8- or 16-bit (rounded and saturated)."""
    native = np.dtype(_OUTPUT[precision])
    if output_dtype is None:
        return native
    dtype = image.dtype if isinstance(output_dtype, str) and output_dtype == "same" else np.dtype(output_dtype)
    if dtype != native and dtype not in _INTEGER_DTYPES:
        raise InvalidArgumentError(f"output_dtype {dtype} is not {native} (precision {precision}), uint8 or uint16")
    return dtype


def _fill(fillvalue) -> float:
    try:
        value = complex(fillvalue)
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(f"fillvalue must be a number, not {fillvalue!r}") from e
    if value.imag != 0:
        raise InvalidArgumentError("fillvalue must be real: halconv filters real images")
    return float(value.real)


def _image(x, role: str, precision, ndim: int = 2, batch: bool = False, channel_axis=None,
           integers: bool = False) -> tuple[Array, str]:
    """The image as halconv takes it (the precision's storage dtype, or 8 / 16 bits as they are;
    dense rows) and the precision. With `batch`, a 3-D array is a batch of images along its
    first axis; with `channel_axis`, a 3-D array is one image of channels along that axis (a
    view with the channels first is returned: the library takes interleaved channels as they are).
    `integers`: 8- and 16-bit images are passed as they are (the library stages them), else cast."""
    a = Array(x, role)
    if channel_axis is not None:
        if a.ndim != 3:
            raise InvalidArgumentError(f"with channel_axis, {role} must be 3-D (rows, columns and channels in some "
                                       f"order), not {a.ndim}-D {a.shape}")
        axis = _axis(channel_axis, 3)
    elif a.ndim != ndim and not (batch and a.ndim == ndim + 1):
        allowed = f"{ndim}-D array" + (f" (or {ndim + 1}-D: a batch of images along the first axis)" if batch else "")
        raise InvalidArgumentError(f"{role} must be a {allowed}, not {a.ndim}-D {a.shape}")
    if a.dtype.kind == "c":
        raise InvalidArgumentError(f"{role} is complex; halconv filters real images")
    p = _precision(precision, a)
    if not (integers and a.dtype in _INTEGER_DTYPES):
        a = a.astype(_STORAGE[p])
    a = a.rows_contiguous()
    if channel_axis is not None:
        a = a.moved(axis, 0)
    return a, p


def _axis(axis, ndim: int) -> int:
    try:
        axis = int(axis)
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(f"channel_axis must be an integer, not {axis!r}") from e
    if not -ndim <= axis < ndim:
        raise InvalidArgumentError(f"channel_axis {axis} is out of range for a {ndim}-D array")
    return axis % ndim


def _result(image: Array, out, shape, dtype, channel_axis) -> tuple[Array, Array]:
    """The result array (the caller's `out` checked, or a new one) and the view of it that
    the library writes: the same, or with the channels first when the image has a channel axis."""
    if channel_axis is None:
        r = wrap_output(image, out, shape, dtype)
        return r, r
    axis = _axis(channel_axis, 3)
    outer = list(shape[1:])
    outer.insert(axis, shape[0])
    r = wrap_output(image, out, tuple(outer), dtype)
    return r, r.moved(axis, 0)


def _kernel(k, role: str, precision: str, ndim: int = 2) -> Array:
    """A kernel as a host NumPy array of the precision's storage type (kernels are small; the
    library reads them on the host to factor them anyway)."""
    a = Array(k, role)
    if a.library == "cupy":
        import cupy

        a = Array(cupy.asnumpy(a.array), role)
    elif a.library == "torch":
        a = Array(a.array.cpu().numpy(), role)
    if a.ndim != ndim:
        raise InvalidArgumentError(f"{role} must be a {ndim}-D array, not {a.ndim}-D {a.shape}")
    if a.dtype.kind == "c":
        raise InvalidArgumentError(f"{role} is complex; halconv filters with real kernels")
    if a.dtype.kind not in "fiub":
        raise InvalidArgumentError(f"{role} holds {a.dtype}, not numbers")
    return a.astype(_STORAGE[precision]).rows_contiguous()


def _options(precision: str, *, mode="same", boundary="constant", fillvalue=0.0, algorithm="auto",
             device="auto", stream=0, origin=0) -> dict:
    oy, ox = _origin(origin)
    return {"precision": _value("precision", precision, "precision"),
            "mode": _value("mode", mode, "mode"), "boundary": _boundary(boundary), "fill_value": _fill(fillvalue),
            "algorithm": _value("algorithm", algorithm, "algorithm"), "device": _device(device), "stream": stream,
            "origin_x": ox, "origin_y": oy}


def _origin(origin) -> tuple[int, int]:
    """(rows, columns) of an origin given as one integer or a pair."""
    values = np.broadcast_to(np.asarray(origin), (2,)) if np.ndim(origin) <= 1 else None
    if values is None or not np.all(values == np.floor(values)):
        raise InvalidArgumentError(f"origin must be an integer or a pair of integers (rows, columns), not {origin!r}")
    return int(values[0]), int(values[1])


def _output_shape(image: Array, kernel_shape, mode) -> tuple:
    """The result's shape: SciPy's for the mode, after the batch axis of a batch."""
    plane = _halconv.output_shape(list(image.shape[-2:]), list(kernel_shape), _value("mode", mode, "mode"))
    return tuple(image.shape[:-2]) + tuple(plane)


def _correlate(in1, in2, mode, boundary, fillvalue, algorithm, precision, device, out, operation, channel_axis=None,
               output_dtype=None, origin=0):
    image, p = _image(in1, "in1", precision, batch=True, channel_axis=channel_axis, integers=True)
    kernel = _kernel(in2, "in2", p)
    if _value("mode", mode, "mode") == _NAMES["mode"].index("valid"):
        ok1 = all(i >= j for i, j in zip(image.shape[-2:], kernel.shape))
        ok2 = all(j >= i for i, j in zip(image.shape[-2:], kernel.shape))
        if not (ok1 or ok2):
            raise InvalidArgumentError("For 'valid' mode, one must be at least as large as the other in every "
                                       "dimension")
        if not ok1 and image.ndim == 3:
            raise InvalidArgumentError("For 'valid' mode on a batch or channels, the kernel must fit inside each image")
        if not ok1:
            # SciPy swaps the operands when the kernel is the larger: convolution commutes,
            # correlation becomes the reversed correlation of the two.
            return _swapped_valid(image, kernel, p, boundary, fillvalue, algorithm, device, out, operation)
    result, written = _result(image, out, _output_shape(image, kernel.shape, mode), _output_dtype(p, image, output_dtype),
                              channel_axis)
    options = _options(p, mode=mode, boundary=boundary, fillvalue=fillvalue, algorithm=algorithm, device=device,
                       stream=image.stream(), origin=origin)
    _halconv.correlate(image.describe(), kernel.describe(), written.describe(), _NAMES["operation"].index(operation),
                       options)
    return result.array


def _swapped_valid(image, kernel, p, boundary, fillvalue, algorithm, device, out, operation):
    # The kernel (on the host) becomes the image, in the image's library and device.
    swapped_image = Array(image.empty(kernel.shape, _STORAGE[p]), "in2")
    if swapped_image.library == "numpy":
        swapped_image.array[...] = kernel.array
    elif swapped_image.library == "cupy":
        swapped_image.array.set(kernel.array)
    else:
        import torch

        swapped_image.array.copy_(torch.from_numpy(kernel.array))
    host_kernel = image.array
    if image.library == "cupy":
        import cupy

        host_kernel = cupy.asnumpy(image.array)
    elif image.library == "torch":
        host_kernel = image.array.cpu().numpy()
    swapped_kernel = Array(np.ascontiguousarray(host_kernel), "in1")
    result = _correlate(swapped_image.array, swapped_kernel.array, "valid", boundary, fillvalue, algorithm, p,
                        device, None, operation)
    if operation == "correlate":
        result = image.flipped(result)
    if out is None:
        return result
    o = wrap_output(image, out, tuple(result.shape), _OUTPUT[p])
    o.array[...] = result
    return o.array


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, *, algorithm="auto", precision=None,
                device="auto", out=None, channel_axis=None, output_dtype=None, origin=0):
    """scipy.signal.correlate2d, with halconv's algorithms and devices.

    mode: 'full', 'valid', 'same'. boundary: scipy.signal's 'fill' / 'symm' / 'wrap' or
    scipy.ndimage's 'constant' / 'nearest' / 'reflect' / 'mirror' / 'wrap'. precision:
    'f64', 'f32', 'f16', 'f16f32' (default: from in1's dtype; in2 is cast to it). device:
    'auto', 'cpu', 'cuda'. NumPy arrays give a NumPy result; CuPy arrays and PyTorch tensors
    give their own kind on their device, computed on the library's current stream. A 3-D in1
    is a batch of images along its first axis, filtered in one call (on the GPU the images'
    pipelines run side by side: small images fill the device). channel_axis: a 3-D in1 is one
    image with channels along that axis (-1: a colour image of rows x columns x channels),
    each channel filtered with in2, the result in the same layout. uint8 and uint16 images are
    taken as they are (precision f32 unless named); output_dtype: None (the precision's float
    type), 'same', np.uint8 or np.uint16 (rounded to nearest even and saturated). origin (mode
    same): the result at (i, j) is the same-mode result at (i - origin[0], j - origin[1]) of the
    boundary-extended image; scipy.ndimage's origin for odd kernels (for even ones ndimage
    centres one sample apart: halconv.h, Options::origin_x).
    """
    return _correlate(in1, in2, mode, boundary, fillvalue, algorithm, precision, device, out, "correlate",
                      channel_axis, output_dtype, origin)


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, *, algorithm="auto", precision=None,
               device="auto", out=None, channel_axis=None, output_dtype=None, origin=0):
    """scipy.signal.convolve2d, with halconv's algorithms and devices (see correlate2d)."""
    return _correlate(in1, in2, mode, boundary, fillvalue, algorithm, precision, device, out, "convolve",
                      channel_axis, output_dtype, origin)


def _separable(in1, row, col, mode, boundary, fillvalue, precision, device, out, operation):
    image, p = _image(in1, "in1", precision, batch=True)
    r = _kernel(np.ravel(_host(row)), "row", p, ndim=1)
    c = _kernel(np.ravel(_host(col)), "col", p, ndim=1)
    result = wrap_output(image, out, _output_shape(image, [c.shape[0], r.shape[0]], mode), _OUTPUT[p])
    options = _options(p, mode=mode, boundary=boundary, fillvalue=fillvalue, device=device, stream=image.stream())
    _halconv.separable(image.describe(), r.describe(), c.describe(), result.describe(),
                       _NAMES["operation"].index(operation), options)
    return result.array


def _host(x):
    """A small array (a 1-D kernel) as NumPy."""
    lib = type(x).__module__.split(".")[0]
    if lib == "cupy":
        import cupy

        return cupy.asnumpy(x)
    if lib == "torch":
        return x.detach().cpu().numpy()
    return np.asarray(x)


def separable_correlate2d(in1, row, col, mode="full", boundary="fill", fillvalue=0, *, precision=None,
                          device="auto", out=None):
    """correlate2d(in1, outer(col, row)) as a row pass and a column pass (row along axis 1)."""
    return _separable(in1, row, col, mode, boundary, fillvalue, precision, device, out, "correlate")


def separable_convolve2d(in1, row, col, mode="full", boundary="fill", fillvalue=0, *, precision=None,
                         device="auto", out=None):
    """convolve2d(in1, outer(col, row)) as a row pass and a column pass (row along axis 1)."""
    return _separable(in1, row, col, mode, boundary, fillvalue, precision, device, out, "convolve")


def _gaussian_sizes(sigma, truncate, radius):
    sigmas = np.broadcast_to(np.asarray(sigma, dtype=np.float64), (2,))
    if not np.all(np.isfinite(sigmas)) or np.any(sigmas <= 0):
        raise InvalidArgumentError(f"sigma must be finite and > 0 (one, or one per axis), not {sigma!r}")
    if radius is not None:
        radii = np.broadcast_to(np.asarray(radius), (2,))
        if np.any(radii < 0) or np.any(radii != np.floor(radii)):
            raise InvalidArgumentError(f"radius must be a whole number >= 0, not {radius!r}")
    else:
        if not np.isfinite(truncate) or truncate <= 0:
            raise InvalidArgumentError(f"truncate must be finite and > 0, not {truncate!r}")
        # scipy.ndimage.gaussian_filter's radius: int(truncate * sigma + 0.5).
        radii = [int(truncate * float(s) + 0.5) for s in sigmas]
    return [float(s) for s in sigmas], [2 * int(r) + 1 for r in radii]


def gaussian_filter(input, sigma, mode="reflect", cval=0.0, truncate=4.0, *, radius=None, method="exact",
                    precision=None, device="auto", output=None, channel_axis=None, output_dtype=None):
    """scipy.ndimage.gaussian_filter of a 2-D image (order 0), on halconv's separable pipelines.

    sigma: one, or one per axis (rows, columns). The taps are SciPy's: the sampled Gaussian
    normalized over 2 r + 1 taps, r = int(truncate * sigma + 0.5) unless radius is given.
    mode: scipy.ndimage's boundary names. method='recursive' runs the recursive Gaussian
    (halconv.h: an approximation of the untruncated Gaussian at a cost independent of sigma;
    one sigma for both axes; truncate and radius do not apply). channel_axis and output_dtype
    as for correlate2d. Unlike SciPy, a uint8 or uint16 image gives a float result unless
    output_dtype is given (SciPy returns the input's type, truncating after each axis' pass).
    """
    image, p = _image(input, "input", precision, batch=True, channel_axis=channel_axis, integers=True)
    if method not in ("exact", "recursive"):
        raise InvalidArgumentError(f"unknown method {method!r}; allowed: exact, recursive")
    result, written = _result(image, output, image.shape, _output_dtype(p, image, output_dtype), channel_axis)
    options = _options(p, mode="same", boundary=mode, fillvalue=cval, device=device, stream=image.stream())
    if method == "recursive":
        sigmas = np.broadcast_to(np.asarray(sigma, dtype=np.float64), (2,))
        if sigmas[0] != sigmas[1]:
            raise InvalidArgumentError("the recursive Gaussian takes one sigma for both axes")
        if radius is not None:
            raise InvalidArgumentError("radius does not apply to the recursive Gaussian (it is untruncated)")
        _halconv.gaussian(image.describe(), written.describe(), float(sigmas[0]), 0, True, options)
        return result.array
    sigmas, sizes = _gaussian_sizes(sigma, truncate, radius)
    if sigmas[0] == sigmas[1] and sizes[0] == sizes[1]:
        _halconv.gaussian(image.describe(), written.describe(), sigmas[0], sizes[0], False, options)
    else:
        col = np.asarray(_halconv.gaussian_taps(sigmas[0], sizes[0]))
        row = np.asarray(_halconv.gaussian_taps(sigmas[1], sizes[1]))
        r, c = _kernel(row, "row", p, ndim=1), _kernel(col, "col", p, ndim=1)
        _halconv.separable(image.describe(), r.describe(), c.describe(), written.describe(),
                           _NAMES["operation"].index("correlate"), options)
    return result.array


def detect_edges(image, threshold=None, *, boundary="reflect", fillvalue=0.0, staging="fused", device="auto",
                 out=None):
    """Seed 001's edge pipeline on a float32 image: 5x5 Gaussian (sigma 1.4), Laplacian,
    |Laplacian| > threshold as uint8 0/1 (threshold default 5/255, for images in [0, 1])."""
    a, _ = _image(image, "image", "f32")
    result = wrap_output(a, out, a.shape, np.uint8)
    options = {"boundary": _boundary(boundary), "fill_value": _fill(fillvalue), "device": _device(device),
               "staging": _value("staging", staging, "staging"), "stream": a.stream()}
    t = 5.0 / 255.0 if threshold is None else float(threshold)
    _halconv.detect_edges(a.describe(), result.describe(), t, options)
    return result.array


def unsharp_mask(image, blur_kernel, amount=1.0, *, boundary="reflect", fillvalue=0.0, device="auto", out=None):
    """image + amount * (image - correlate(image, blur_kernel, 'same')), float32."""
    a, _ = _image(image, "image", "f32")
    k = _kernel(blur_kernel, "blur_kernel", "f32")
    result = wrap_output(a, out, a.shape, np.float32)
    options = {"boundary": _boundary(boundary), "fill_value": _fill(fillvalue), "device": _device(device),
               "stream": a.stream()}
    _halconv.unsharp_mask(a.describe(), k.describe(), result.describe(), float(amount), options)
    return result.array


def bilateral_filter(image, sigma_spatial, sigma_range, radius=0, *, boundary="reflect", fillvalue=0.0,
                     algorithm="auto", precision=None, device="auto", out=None):
    """Seed 003's bilateral filter: spatial Gaussian x range Gaussian over a (2 radius + 1)^2
    window, normalized (radius 0: ceil(3 sigma_spatial)). Precisions f64, f32, f16f32."""
    a, p = _image(image, "image", precision)
    result = wrap_output(a, out, a.shape, _OUTPUT[p])
    options = {"precision": _value("precision", p, "precision"), "boundary": _boundary(boundary),
               "fill_value": _fill(fillvalue), "device": _device(device),
               "algorithm": _value("bilateral_algorithm", algorithm, "bilateral algorithm"), "stream": a.stream()}
    _halconv.bilateral(a.describe(), result.describe(), float(sigma_spatial), float(sigma_range), int(radius),
                       options)
    return result.array


def _multichannel(image, kernels, mode, boundary, fillvalue, algorithm, precision, device, out, flip):
    a, p = _image(image, "image", precision, ndim=3)
    k = _kernel(kernels, "kernels", p, ndim=4)
    if k.shape[3] != a.shape[2]:
        raise InvalidArgumentError(f"kernels have {k.shape[3]} channels (last axis) but the image has {a.shape[2]}")
    h, w = _halconv.output_shape([a.shape[0], a.shape[1]], [k.shape[1], k.shape[2]], _value("mode", mode, "mode"))
    result = wrap_output(a, out, (h, w, k.shape[0]), _OUTPUT[p])
    options = {"precision": _value("precision", p, "precision"), "mode": _value("mode", mode, "mode"),
               "boundary": _boundary(boundary), "fill_value": _fill(fillvalue), "device": _device(device),
               "algorithm": _value("multichannel_algorithm", algorithm, "multichannel algorithm"),
               "stream": a.stream()}
    _halconv.multichannel(a.describe(), k.describe(), result.describe(), flip, options)
    return result.array


def multichannel_correlate2d(image, kernels, mode="same", boundary="fill", fillvalue=0, *, algorithm="auto",
                             precision=None, device="auto", out=None):
    """N kernels over a C-channel image (the DNN setting), channels last:
    image (H, W, C), kernels (N, kh, kw, C) -> (H', W', N), each output channel the sum over
    the image's channels of correlate2d(image[..., c], kernels[n, ..., c])."""
    return _multichannel(image, kernels, mode, boundary, fillvalue, algorithm, precision, device, out, False)


def multichannel_convolve2d(image, kernels, mode="same", boundary="fill", fillvalue=0, *, algorithm="auto",
                            precision=None, device="auto", out=None):
    """As multichannel_correlate2d with every kernel flipped in both spatial axes."""
    return _multichannel(image, kernels, mode, boundary, fillvalue, algorithm, precision, device, out, True)


class Plan:
    """A filter prepared once for images of one shape and dtype, applied many times.

    Plan(image_shape, kernel, ...) does once what every correlate2d call does: options
    checked, the kernel checked, factored, converted and (for CUDA) uploaded, the
    algorithm chosen, the workspace sized. ``plan(image)`` then runs it on any image of
    that shape and the plan's precision (NumPy, CuPy or torch; the result of the image's
    kind), or on a batch of them (a leading axis), from any thread. ``dispatch`` says what
    runs and why. An image_shape of (images, rows, columns) makes the plan for batches of
    that many: algorithm='auto' then weighs what a batch costs (small images in batches
    favour other algorithms than one small image does); the plan still takes any batch.
    """

    def __init__(self, image_shape, kernel, mode="full", boundary="fill", fillvalue=0, *, operation="correlate",
                 algorithm="auto", precision=None, dtype=None, device="auto"):
        p = self._precision_of(kernel, precision, dtype)
        k = _kernel(kernel, "kernel", p)
        options = _options(p, mode=mode, boundary=boundary, fillvalue=fillvalue, algorithm=algorithm, device=device)
        shape, options["batch_images"] = _plan_shape(image_shape)
        self._init(_halconv.Plan.create(shape, k.describe(), _operation(operation), options), p)

    @classmethod
    def separable(cls, image_shape, row, col, mode="full", boundary="fill", fillvalue=0, *, operation="correlate",
                  precision=None, dtype=None, device="auto"):
        """The plan of separable_correlate2d / separable_convolve2d."""
        p = cls._precision_of(row, precision, dtype)
        r = _kernel(np.ravel(_host(row)), "row", p, ndim=1)
        c = _kernel(np.ravel(_host(col)), "col", p, ndim=1)
        options = _options(p, mode=mode, boundary=boundary, fillvalue=fillvalue, device=device)
        plan = object.__new__(cls)
        shape, options["batch_images"] = _plan_shape(image_shape)
        plan._init(_halconv.Plan.create_separable(shape, r.describe(), c.describe(),
                                                  _operation(operation), options), p)
        return plan

    @classmethod
    def gaussian(cls, image_shape, sigma, mode="reflect", cval=0.0, truncate=4.0, *, method="exact",
                 precision=None, dtype=None, device="auto"):
        """The plan of gaussian_filter with one sigma for both axes."""
        p = precision or _PRECISION_OF_DTYPE.get(np.dtype(dtype or np.float64))
        if p is None:
            raise InvalidArgumentError(f"dtype {dtype!r} is not float64, float32 or float16")
        if method not in ("exact", "recursive"):
            raise InvalidArgumentError(f"unknown method {method!r}; allowed: exact, recursive")
        sigmas, sizes = _gaussian_sizes(sigma, truncate, None)
        if sigmas[0] != sigmas[1]:
            raise InvalidArgumentError("a Gaussian plan takes one sigma for both axes (use Plan.separable with "
                                       "gaussian_taps for two)")
        options = _options(p, mode="same", boundary=mode, fillvalue=cval, device=device)
        plan = object.__new__(cls)
        shape, options["batch_images"] = _plan_shape(image_shape)
        plan._init(_halconv.Plan.create_gaussian(shape, sigmas[0], sizes[0], method == "recursive",
                                                 options), p)
        return plan

    def __call__(self, image, out=None):
        a = Array(image, "image")
        if a.dtype != np.dtype(_STORAGE[self.precision]):
            raise InvalidArgumentError(
                f"image holds {a.dtype} but this plan's precision {self.precision} takes "
                f"{np.dtype(_STORAGE[self.precision])}")
        if a.ndim not in (2, 3):
            raise InvalidArgumentError(f"image must be 2-D, or 3-D (a batch along the first axis), not {a.shape}")
        a = a.rows_contiguous()
        result = wrap_output(a, out, tuple(a.shape[:-2]) + self.output_shape, _OUTPUT[self.precision])
        self._plan.run(a.describe(), result.describe(), a.stream())
        return result.array

    @property
    def dispatch(self) -> dict:
        """What runs: device, algorithm, variant, and the reason it was chosen."""
        return dict(self._plan.dispatch)

    @property
    def output_shape(self) -> tuple:
        return tuple(self._plan.output_shape)

    @property
    def image_shape(self) -> tuple:
        return tuple(self._plan.image_shape)

    @property
    def workspace_bytes(self) -> int:
        return int(self._plan.workspace_bytes)

    def __repr__(self) -> str:
        d = self._plan.dispatch
        return (f"halconv.Plan(image_shape={self.image_shape}, precision={self.precision!r}, "
                f"device={d['device']!r}, algorithm={d['algorithm']!r})")

    def _init(self, plan, precision):
        self._plan, self.precision = plan, precision

    @staticmethod
    def _precision_of(kernel, precision, dtype):
        if precision is not None:
            return precision
        if dtype is not None:
            p = _PRECISION_OF_DTYPE.get(np.dtype(dtype))
            if p is None:
                raise InvalidArgumentError(f"dtype {dtype!r} is not float64, float32 or float16")
            return p
        return _PRECISION_OF_DTYPE.get(np.dtype(_host(kernel).dtype), "f64")


def _plan_shape(shape) -> tuple[list, int]:
    """A plan's [rows, columns] and images per batch from (rows, columns) or (images, rows, columns)."""
    shape = [int(n) for n in shape]
    if len(shape) not in (2, 3) or (len(shape) == 3 and shape[0] < 1):
        raise InvalidArgumentError(f"image_shape must be (rows, columns) or (images, rows, columns), not {tuple(shape)}")
    return shape[-2:], shape[0] if len(shape) == 3 else 1


def _operation(operation) -> int:
    return _value("operation", operation, "operation")


def gaussian_taps(sigma, size=0):
    """The normalized sampled Gaussian exp(-i^2 / (2 sigma^2)) over `size` taps (0: 2 ceil(3 sigma) + 1)."""
    return np.asarray(_halconv.gaussian_taps(float(sigma), int(size)))


def recursive_gaussian_error(sigma) -> float:
    """The recursive Gaussian's bound: |recursive - exact untruncated| <= this * max |x| (halconv.h)."""
    return float(_halconv.recursive_gaussian_error(float(sigma)))


def set_cpu_threads(n: int) -> int:
    """Threads the CPU pipelines run on, for the whole process: 1 to 256, or 0 for the default
    (HL_NUM_THREADS when set, else the machine's hardware threads). Returns the previous count."""
    return int(_halconv.set_cpu_threads(int(n)))


def cpu_threads() -> int:
    """The count set_cpu_threads set, or the default."""
    return int(_halconv.cpu_threads())


def cuda_info() -> dict:
    """Whether this halconv has CUDA, the runtime and driver versions, the devices it sees, and
    the CUDA libraries it opens when needed (cuBLAS, cuFFT: where each was found, or why not)."""
    return _halconv.cuda_info()


def build_info() -> dict:
    """halconv's version and build identity, and the targets its pipelines were compiled for."""
    return _halconv.build_info()
