"""Shared references for halconv's Python tests: float64 SciPy / NumPy definitions that do
not go through halconv, and per-precision error bounds."""

import numpy as np
import pytest
import scipy.signal

# numpy.pad's names of halconv's boundaries (scipy.ndimage's): the definitions of the rules.
NUMPY_PAD = {"constant": "constant", "nearest": "edge", "reflect": "symmetric", "mirror": "reflect", "wrap": "wrap"}
SIGNAL_NAMES = {"fill": "constant", "symm": "reflect", "wrap": "wrap"}
BOUNDARIES = list(NUMPY_PAD) + list(SIGNAL_NAMES)
MODES = ["full", "same", "valid"]
# Unit roundoff of each precision's arithmetic (f16: float16 sums; the others their type).
UNIT_ROUNDOFF = {np.float64: 2.0**-53, np.float32: 2.0**-24, np.float16: 2.0**-11}


@pytest.fixture
def rng(request):
    """Fresh random data for every test, its seed printed on failure."""
    seed = np.random.SeedSequence().entropy % 2**32
    request.node.user_properties.append(("seed", seed))
    print(f"seed {seed}")
    return np.random.default_rng(seed)


def same_offsets(function, kernel_shape):
    """Where SciPy's same output starts inside its full output (SciPy's centring)."""
    kh, kw = kernel_shape
    kernel = np.arange(1.0, kh * kw + 1.0).reshape(kh, kw)
    one = np.ones((1, 1))
    full = function(one, kernel, "full")
    same = function(one, kernel, "same")
    sy, sx = np.argwhere(full == same[0, 0])[0]
    return int(sy), int(sx)


def reference(image, kernel, mode, boundary, fill=0.0, operation="correlate"):
    """correlate2d / convolve2d in float64 with any of halconv's boundaries: the image
    extended by numpy.pad, then SciPy's valid correlation; same cropped as SciPy centres it."""
    image = np.asarray(image, np.float64)
    kernel = np.asarray(kernel, np.float64)
    boundary = SIGNAL_NAMES.get(boundary, boundary)
    k = kernel if operation == "correlate" else kernel[::-1, ::-1]
    kh, kw = k.shape
    if mode == "valid":
        return scipy.signal.correlate2d(image, k, "valid")
    pad_kwargs = {"constant_values": fill} if boundary == "constant" else {}
    padded = np.pad(image, ((kh - 1, kh - 1), (kw - 1, kw - 1)), NUMPY_PAD[boundary], **pad_kwargs)
    full = scipy.signal.correlate2d(padded, k, "valid")
    if mode == "full":
        return full
    function = scipy.signal.correlate2d if operation == "correlate" else scipy.signal.convolve2d
    sy, sx = same_offsets(function, kernel.shape)
    return full[sy:sy + image.shape[0], sx:sx + image.shape[1]]


def assert_within(result, image, kernel, mode, boundary, fill, operation, dtype, extra=0.0):
    """result against the float64 reference on the stored (rounded) inputs, within the direct
    sums' bound (n + 4) u sum |k| |x| (Higham 3.5), doubled for the accumulation orders of the
    vectorized and tensor-core paths, plus one rounding of the output."""
    x = np.asarray(image, dtype).astype(np.float64)
    k = np.asarray(kernel, dtype).astype(np.float64)
    f = float(np.asarray(fill, dtype))
    expected = reference(x, k, mode, boundary, f, operation)
    magnitude = reference(np.abs(x), np.abs(k), mode, boundary, abs(f), operation)
    u = UNIT_ROUNDOFF[np.dtype(dtype).type]
    out_u = UNIT_ROUNDOFF[np.dtype(result.dtype).type]
    bound = 2 * (k.size + 4) * u * magnitude + out_u * np.abs(expected) + extra
    assert result.shape == expected.shape
    error = np.abs(np.asarray(result, np.float64) - expected)
    worst = np.unravel_index(np.argmax(error - bound), error.shape)
    assert np.all(error <= bound), f"error {error[worst]} > bound {bound[worst]} at {worst}"
