"""halconv.dask on a LocalCluster: images split into many chunks of odd sizes, every mode
and boundary, against SciPy on the whole image."""

import numpy as np
import pytest
import scipy.ndimage
import scipy.signal

import halconv
from conftest import BOUNDARIES, MODES, reference

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
hd = pytest.importorskip("halconv.dask")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        with distributed.Client(c) as client:
            yield client


@pytest.mark.parametrize("operation", ["correlate", "convolve"])
def test_chunked_correlation_is_the_whole_images(client, rng, operation):
    image = rng.uniform(-1, 1, (101, 87))
    x = da.from_array(image, chunks=(17, 23))
    function = hd.correlate2d if operation == "correlate" else hd.convolve2d
    for kernel_shape in [(5, 4), (7, 7), (1, 3)]:
        kernel = rng.uniform(-1, 1, kernel_shape)
        for mode in MODES:
            futures = {b: client.compute(function(x, kernel, mode, b, 0.5)) for b in BOUNDARIES}
            for boundary, future in futures.items():
                expected = reference(image, kernel, mode, boundary, 0.5, operation)
                result = future.result()
                assert result.shape == expected.shape, (mode, boundary)
                np.testing.assert_allclose(result, expected, rtol=0, atol=1e-12, err_msg=f"{mode} {boundary}")


def test_chunks_smaller_than_the_kernel(client, rng):
    image = rng.random((40, 33))
    kernel = rng.random((9, 11))
    x = da.from_array(image, chunks=(3, 4))
    for boundary in ["fill", "symm", "wrap"]:
        expected = scipy.signal.correlate2d(image, kernel, "same", boundary)
        result = client.compute(hd.correlate2d(x, kernel, "same", boundary)).result()
        np.testing.assert_allclose(result, expected, rtol=0, atol=1e-12)


def test_chunked_gaussian_is_scipy_ndimage(client, rng):
    image = rng.random((90, 71)).astype(np.float32)
    x = da.from_array(image, chunks=(19, 13))
    for mode in ["constant", "nearest", "reflect", "mirror", "wrap"]:
        expected = scipy.ndimage.gaussian_filter(image.astype(np.float64), (1.5, 2.5), mode=mode, cval=0.25)
        result = client.compute(hd.gaussian_filter(x, (1.5, 2.5), mode, 0.25)).result()
        assert result.dtype == np.float32
        np.testing.assert_allclose(result, expected, rtol=0, atol=1e-5)
    with pytest.raises(halconv.InvalidArgumentError, match="whole rows"):
        hd.gaussian_filter(x, 2.0, method="recursive")
