"""The filters built on the convolutions: Gaussian (scipy.ndimage's definition), edges,
unsharp mask, bilateral, multi-channel; each against a float64 definition."""

import numpy as np
import pytest
import scipy.ndimage

import halconv
from conftest import NUMPY_PAD, reference

NDIMAGE_MODES = list(NUMPY_PAD)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mode", NDIMAGE_MODES)
def test_gaussian_filter_is_scipy_ndimage(rng, mode, dtype):
    image = rng.uniform(-1, 1, (45, 38)).astype(dtype)
    for sigma, truncate, radius in [(1.5, 4.0, None), ((0.8, 3.0), 4.0, None), (2.0, 2.5, None), (1.0, 4.0, 6),
                                    ((2.0, 1.0), 4.0, (3, 5))]:
        expected = scipy.ndimage.gaussian_filter(image.astype(np.float64), sigma, mode=mode, cval=0.3,
                                                 truncate=truncate, radius=radius)
        result = halconv.gaussian_filter(image, sigma, mode, 0.3, truncate, radius=radius, device="cpu")
        assert result.dtype == dtype
        u = 2.0**-53 if dtype == np.float64 else 2.0**-24
        taps = np.prod([2 * int(truncate * s + 0.5) + 1 for s in np.broadcast_to(sigma, (2,))])
        # the two passes' sums (each |g| sums to 1) plus the taps' own rounding to the storage type
        bound = 4 * (taps + 4) * u * max(np.abs(image).max(), 0.3)
        np.testing.assert_allclose(result, expected, rtol=0, atol=bound)


@pytest.mark.parametrize("mode", NDIMAGE_MODES)
def test_recursive_gaussian_within_its_stated_bound(rng, mode):
    image = rng.uniform(0, 1, (64, 80))
    for sigma in [1.0, 4.0, 12.5]:
        exact = scipy.ndimage.gaussian_filter(image, sigma, mode=mode, cval=0.5, truncate=12.0)
        result = halconv.gaussian_filter(image, sigma, mode, 0.5, method="recursive", device="cpu")
        bound = halconv.recursive_gaussian_error(sigma) * 1.0 + 1e-12
        assert np.abs(result - exact).max() <= bound


def test_edges_are_the_thresholded_laplacian_of_the_blur(rng):
    image = rng.uniform(0, 1, (50, 61)).astype(np.float32)
    g = np.array([2, 4, 5, 4, 2]) / 17.0
    laplacian = np.array([[0, 1, 0], [1, -4, 1], [0, 1, 0]], np.float64)
    for boundary in NDIMAGE_MODES:
        blur = reference(image, np.outer(g, g), "same", boundary, 0.2)
        lap = reference(blur, laplacian, "same", boundary, 0.2)
        threshold = 0.05
        edges = halconv.detect_edges(image, threshold, boundary=boundary, fillvalue=0.2, device="cpu")
        assert edges.dtype == np.uint8 and edges.shape == image.shape
        certain = np.abs(np.abs(lap) - threshold) > 1e-5  # float32 sums decide the rest
        np.testing.assert_array_equal(edges[certain], (np.abs(lap) > threshold)[certain])
        assert certain.mean() > 0.99


def test_unsharp_mask(rng):
    image = rng.uniform(0, 1, (40, 33)).astype(np.float32)
    kernel = np.outer(*(2 * [halconv.gaussian_taps(1.0)]))
    for boundary in NDIMAGE_MODES:
        result = halconv.unsharp_mask(image, kernel, 0.7, boundary=boundary, device="cpu")
        blur16 = reference(image.astype(np.float16), kernel.astype(np.float16), "same", boundary)
        expected = image + 0.7 * (image - blur16)
        assert result.dtype == np.float32
        # the blur's float16 operands are the definition; float32 sums and combination
        np.testing.assert_allclose(result, expected, rtol=0, atol=1e-5)


def bilateral_reference(image, sigma_s, sigma_r, radius, boundary, fill):
    h, w = image.shape
    pad_kwargs = {"constant_values": fill} if boundary == "constant" else {}
    padded = np.pad(image, radius, NUMPY_PAD[boundary], **pad_kwargs)
    num = np.zeros((h, w))
    den = np.zeros((h, w))
    for dy in range(-radius, radius + 1):
        for dx in range(-radius, radius + 1):
            q = padded[radius + dy:radius + dy + h, radius + dx:radius + dx + w]
            weight = np.exp(-(dx * dx + dy * dy) / (2 * sigma_s**2)) * np.exp(-((image - q) ** 2) / (2 * sigma_r**2))
            num += weight * q
            den += weight
    return num / den


@pytest.mark.parametrize("boundary", NDIMAGE_MODES)
def test_bilateral_filter(rng, boundary):
    image = rng.uniform(0, 1, (23, 30))
    result = halconv.bilateral_filter(image, 1.5, 0.2, 3, boundary=boundary, fillvalue=0.4, device="cpu")
    expected = bilateral_reference(image, 1.5, 0.2, 3, boundary, 0.4)
    n = 49
    np.testing.assert_allclose(result, expected, rtol=0, atol=(3 * n + 12) * 2.0**-53 + 1e-15)
    r32 = halconv.bilateral_filter(image.astype(np.float32), 1.5, 0.2, 3, boundary=boundary, fillvalue=0.4,
                                   device="cpu")
    expected32 = bilateral_reference(image.astype(np.float32).astype(np.float64), 1.5, 0.2, 3, boundary,
                                     float(np.float32(0.4)))
    assert r32.dtype == np.float32
    np.testing.assert_allclose(r32, expected32, rtol=0, atol=(3 * n + 12) * 2.0**-24 + 2.0**-24)


@pytest.mark.parametrize("operation", ["correlate", "convolve"])
def test_multichannel_sums_the_channels(rng, operation):
    image = rng.uniform(-1, 1, (17, 22, 3)).astype(np.float32)
    kernels = rng.uniform(-1, 1, (4, 3, 5, 3))
    function = halconv.multichannel_correlate2d if operation == "correlate" else halconv.multichannel_convolve2d
    for mode in ["valid", "same", "full"]:
        for boundary in NDIMAGE_MODES:
            result = function(image, kernels, mode, boundary, 0.1, device="cpu")
            x, k = image.astype(np.float64), kernels.astype(np.float32).astype(np.float64)
            expected = np.stack([sum(reference(x[..., c], k[n, ..., c], mode, boundary, float(np.float32(0.1)),
                                               operation) for c in range(3)) for n in range(4)], axis=-1)
            magnitude = np.stack([sum(reference(np.abs(x[..., c]), np.abs(k[n, ..., c]), mode, boundary, 0.1,
                                                operation) for c in range(3)) for n in range(4)], axis=-1)
            assert result.shape == expected.shape and result.dtype == np.float32
            assert np.all(np.abs(result - expected) <= 2 * (k[0].size + 4) * 2.0**-24 * magnitude + 1e-7)
