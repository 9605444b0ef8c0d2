"""correlate2d and convolve2d against SciPy's definitions: every mode, boundary (scipy.signal's
and scipy.ndimage's names) and dtype; shapes odd, even, non-square, tiny; array layouts."""

import numpy as np
import pytest
import scipy.signal

import halconv
from conftest import BOUNDARIES, MODES, assert_within

DTYPES = [np.float64, np.float32, np.float16]
SHAPES = [((37, 53), (5, 4)), ((16, 16), (3, 3)), ((1, 1), (1, 1)), ((2, 7), (2, 3)), ((9, 1), (4, 1)),
          ((3, 3), (6, 5))]


@pytest.mark.parametrize("operation", ["correlate", "convolve"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("boundary", BOUNDARIES)
@pytest.mark.parametrize("mode", MODES)
def test_every_mode_boundary_and_dtype(rng, mode, boundary, dtype, operation):
    function = halconv.correlate2d if operation == "correlate" else halconv.convolve2d
    for image_shape, kernel_shape in SHAPES:
        if mode == "valid" and any(i < k for i, k in zip(image_shape, kernel_shape)):
            continue  # the swapped-operand case has its own test
        image = rng.uniform(-1, 1, image_shape).astype(dtype)
        kernel = rng.uniform(-1, 1, kernel_shape)
        fill = rng.uniform(-2, 2)
        result = function(image, kernel, mode, boundary, fill, device="cpu")
        assert result.dtype == dtype, "precision follows the image's dtype"
        assert_within(result, image, kernel, mode, boundary, fill, operation, dtype)


@pytest.mark.parametrize("function", [halconv.correlate2d, halconv.convolve2d])
def test_defaults_are_scipys(rng, function):
    image, kernel = rng.random((20, 31)), rng.random((4, 3))
    expected = getattr(scipy.signal, function.__name__)(image, kernel)
    np.testing.assert_allclose(function(image, kernel, device="cpu"), expected, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("function", [halconv.correlate2d, halconv.convolve2d])
def test_valid_mode_swaps_a_larger_kernel_as_scipy_does(rng, function):
    small, large = rng.random((3, 4)), rng.random((8, 9))
    expected = getattr(scipy.signal, function.__name__)(small, large, "valid")
    result = function(small, large, "valid", device="cpu")
    np.testing.assert_allclose(result, expected, rtol=1e-13, atol=1e-13)
    with pytest.raises(halconv.InvalidArgumentError, match="at least as large"):
        function(rng.random((3, 9)), rng.random((8, 4)), "valid")


def test_precision_may_be_named(rng):
    image, kernel = rng.random((24, 17)), rng.random((5, 5))
    r32 = halconv.correlate2d(image, kernel, "same", precision="f32", device="cpu")
    assert r32.dtype == np.float32
    assert_within(r32, image, kernel, "same", "fill", 0.0, "correlate", np.float32)
    r16 = halconv.correlate2d(image, kernel, "same", precision="f16f32", device="cpu")
    assert r16.dtype == np.float32, "f16f32: float16 operands, float32 sums and result"
    assert_within(r16, image, kernel, "same", "fill", 0.0, "correlate", np.float16)  # f32 sums: within f16's bound


def test_views_crops_transposes_and_reversed_views(rng):
    base = rng.random((40, 50))
    before = base.copy()
    kernel = rng.random((3, 5))
    for view in [base[5:30, 7:44], base.T, base[::-1, :], base[:, ::-1], base[::2, ::3], np.asfortranarray(base)]:
        expected = scipy.signal.correlate2d(np.array(view), kernel, "same", "symm")
        np.testing.assert_allclose(halconv.correlate2d(view, kernel, "same", "symm", device="cpu"), expected,
                                   rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(base, before, "inputs are never written")


def test_lists_and_integer_kernels_are_taken(rng):
    image = rng.random((6, 7))
    kernel = [[1, 2], [3, 4]]
    np.testing.assert_allclose(halconv.convolve2d(image, kernel, "same", device="cpu"),
                               scipy.signal.convolve2d(image, kernel, "same"), rtol=1e-13)


def test_out_receives_the_result_and_is_checked(rng):
    image, kernel = rng.random((12, 10)).astype(np.float32), rng.random((3, 3))
    out = np.full((12, 10), np.nan, np.float32)  # poisoned
    result = halconv.correlate2d(image, kernel, "same", out=out, device="cpu")
    assert result is out
    assert_within(out, image, kernel, "same", "fill", 0.0, "correlate", np.float32)
    with pytest.raises(halconv.InvalidArgumentError, match="produces"):
        halconv.correlate2d(image, kernel, "full", out=out)
    with pytest.raises(halconv.InvalidArgumentError, match="produces"):
        halconv.correlate2d(image, kernel, "same", out=np.empty((12, 10), np.float64))


@pytest.mark.parametrize("operation", ["correlate", "convolve"])
def test_separable_equals_the_outer_product(rng, operation):
    image = rng.uniform(-1, 1, (33, 28))
    row, col = rng.uniform(-1, 1, 7), rng.uniform(-1, 1, 4)
    function = halconv.separable_correlate2d if operation == "correlate" else halconv.separable_convolve2d
    for mode in MODES:
        for boundary in BOUNDARIES:
            result = function(image, row, col, mode, boundary, 0.25, device="cpu")
            assert_within(result, image, np.outer(col, row), mode, boundary, 0.25, operation, np.float64)


def test_algorithms_agree_where_named(rng):
    image = rng.uniform(-1, 1, (64, 48)).astype(np.float32)
    kernel = rng.uniform(-1, 1, (7, 7))
    names = [a for a in halconv._api._NAMES["algorithm"] if a != "auto"]
    ran = 0
    for name in names:
        try:
            result = halconv.correlate2d(image, kernel, "same", "reflect", algorithm=name, device="cpu")
        except halconv.UnsupportedError:
            continue  # a GPU-only algorithm, or one this kernel does not fit (rank)
        ran += 1
        extra = 1e-4 * np.abs(kernel).sum() if name == "fft" else 0.0  # fft's per-tile bound (halconv.h)
        assert_within(result, image, kernel, "same", "reflect", 0.0, "correlate", np.float32, extra=extra)
    assert ran >= 3, "the CPU has naive, shared_tiled and autoscheduled at least"


@pytest.mark.parametrize("mode", MODES)
def test_a_batch_is_every_image_filtered_alone(rng, mode):
    batch = rng.uniform(-1, 1, (5, 21, 34)).astype(np.float32)
    kernel = rng.uniform(-1, 1, (4, 5))
    result = halconv.correlate2d(batch, kernel, mode, "wrap", device="cpu")
    assert result.shape[0] == 5
    for i in range(5):
        np.testing.assert_array_equal(result[i], halconv.correlate2d(batch[i], kernel, mode, "wrap", device="cpu"))
    # a batch read in place from a larger array (images and rows not adjacent)
    larger = rng.uniform(-1, 1, (7, 30, 40)).astype(np.float32)
    view = larger[1:6, 2:23, 3:37]
    viewed = halconv.convolve2d(view, kernel, mode, "symm", device="cpu")
    for i in range(5):
        np.testing.assert_array_equal(viewed[i], halconv.convolve2d(view[i], kernel, mode, "symm", device="cpu"))
    separable = halconv.separable_correlate2d(batch, kernel[0], kernel[:, 0], mode, device="cpu")
    gaussian = halconv.gaussian_filter(batch, (1.0, 2.0), device="cpu")
    plan = halconv.Plan(batch.shape[1:], kernel, mode, dtype=np.float32, device="cpu")
    planned = plan(batch)
    for i in range(5):
        np.testing.assert_array_equal(separable[i],
                                      halconv.separable_correlate2d(batch[i], kernel[0], kernel[:, 0], mode,
                                                                    device="cpu"))
        np.testing.assert_array_equal(gaussian[i], halconv.gaussian_filter(batch[i], (1.0, 2.0), device="cpu"))
        np.testing.assert_array_equal(planned[i], plan(batch[i]))
    with pytest.raises(halconv.InvalidArgumentError, match="batch"):
        halconv.correlate2d(rng.random((2, 3, 3)), rng.random((5, 5)), "valid")


@pytest.mark.parametrize("dtype, top", [(np.uint8, 255), (np.uint16, 65535)])
def test_eight_and_sixteen_bit_images(rng, dtype, top):
    image = rng.integers(0, top + 1, (37, 45)).astype(dtype)
    kernel = rng.uniform(-0.2, 0.5, (5, 4))
    floats = halconv.correlate2d(image, kernel, "same", "symm", device="cpu")
    assert floats.dtype == np.float32, "precision f32 unless named"
    np.testing.assert_array_equal(floats, halconv.correlate2d(image.astype(np.float32), kernel, "same", "symm",
                                                              device="cpu"))
    same = halconv.correlate2d(image, kernel, "same", "symm", device="cpu", output_dtype="same")
    assert same.dtype == dtype
    np.testing.assert_array_equal(same, np.clip(np.rint(floats.astype(np.float64)), 0, top).astype(dtype))
    with pytest.raises(halconv.InvalidArgumentError, match="output_dtype"):
        halconv.correlate2d(image, kernel, "same", output_dtype=np.int32)
    if dtype == np.uint16:
        with pytest.raises(halconv.UnsupportedError, match="float16"):
            halconv.correlate2d(image, kernel, "same", precision="f16f32", device="cpu")


@pytest.mark.parametrize("channel_axis", [-1, 0])
def test_colour_images_filtered_per_channel(rng, channel_axis):
    planes = rng.integers(0, 256, (3, 29, 41)).astype(np.uint8)
    image = np.ascontiguousarray(np.moveaxis(planes, 0, channel_axis))
    kernel = rng.uniform(0, 0.1, (7, 7))
    result = halconv.convolve2d(image, kernel, "same", "wrap", device="cpu", channel_axis=channel_axis,
                                output_dtype=np.uint8)
    assert result.shape == image.shape and result.dtype == np.uint8
    blurred = halconv.gaussian_filter(image, 2.0, channel_axis=channel_axis, device="cpu")
    assert blurred.shape == image.shape and blurred.dtype == np.float32
    for c in range(3):
        alone = halconv.convolve2d(planes[c], kernel, "same", "wrap", device="cpu", output_dtype=np.uint8)
        np.testing.assert_array_equal(np.take(result, c, axis=channel_axis), alone)
        np.testing.assert_array_equal(np.take(blurred, c, axis=channel_axis),
                                      halconv.gaussian_filter(planes[c], 2.0, device="cpu"))
    with pytest.raises(halconv.InvalidArgumentError, match="channel_axis"):
        halconv.correlate2d(planes[0], kernel, channel_axis=-1)


@pytest.mark.parametrize("operation", ["correlate", "convolve"])
def test_origin_shifts_the_same_mode_result(rng, operation):
    image, kernel = rng.uniform(-1, 1, (23, 31)), rng.uniform(-1, 1, (5, 4))
    function = halconv.correlate2d if operation == "correlate" else halconv.convolve2d
    full = function(image, kernel, "full", "symm", device="cpu")
    same = function(image, kernel, "same", "symm", device="cpu")
    for origin in [(1, -1), (-2, 1), 0, (2, 0)]:
        shifted = function(image, kernel, "same", "symm", device="cpu", origin=origin)
        oy, ox = np.broadcast_to(origin, (2,))
        # the same-mode result at (i - oy, j - ox): a window of the full result moved by the origin
        offsets = [(y, x) for y in range(5) for x in range(4) if np.allclose(full[y:y + 23, x:x + 31], same)]
        assert len(offsets) == 1
        y0, x0 = offsets[0]
        np.testing.assert_allclose(shifted, full[y0 - oy:y0 - oy + 23, x0 - ox:x0 - ox + 31], rtol=0, atol=1e-12)
    if operation == "correlate":
        import scipy.ndimage
        odd = rng.uniform(-1, 1, (5, 3))
        np.testing.assert_allclose(halconv.correlate2d(image, odd, "same", "symm", device="cpu", origin=(1, -1)),
                                   scipy.ndimage.correlate(image, odd, mode="reflect", origin=(1, -1)), atol=1e-12)
    with pytest.raises(halconv.InvalidArgumentError, match="origin"):
        function(image, kernel, "same", device="cpu", origin=(9, 0))
    with pytest.raises(halconv.InvalidArgumentError, match="mode same"):
        function(image, kernel, "full", device="cpu", origin=1)
