"""CuPy arrays and PyTorch tensors: the same kind of result on the same device, zero-copy,
on the array library's current stream. Runs where a CUDA device, and CuPy or PyTorch, is
present; skips with the reason elsewhere."""

import numpy as np
import pytest

import halconv
from conftest import BOUNDARIES, MODES, assert_within

if not halconv.cuda_info()["devices"]:
    pytest.skip(f"no CUDA device: {halconv.cuda_info()['unavailable_reason'] or 'this halconv has no CUDA'}",
                allow_module_level=True)


def _cupy():
    return pytest.importorskip("cupy")


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return torch


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("mode", MODES)
def test_cupy_in_cupy_out_every_boundary(rng, mode, dtype):
    cp = _cupy()
    image = rng.uniform(-1, 1, (61, 90)).astype(dtype)
    kernel = rng.uniform(-1, 1, (7, 6))
    for boundary in BOUNDARIES:
        result = halconv.correlate2d(cp.asarray(image), kernel, mode, boundary, 0.5)
        assert isinstance(result, cp.ndarray) and result.dtype == dtype
        assert result.device.id == cp.cuda.Device().id
        assert_within(cp.asnumpy(result), image, kernel, mode, boundary, 0.5, "correlate", dtype)


@pytest.mark.parametrize("mode", MODES)
def test_torch_in_torch_out_every_boundary(rng, mode):
    torch = _torch()
    image = rng.uniform(-1, 1, (45, 64)).astype(np.float32)
    kernel = rng.uniform(-1, 1, (5, 5))
    for boundary in BOUNDARIES:
        result = halconv.convolve2d(torch.from_numpy(image).cuda(), torch.from_numpy(kernel), mode, boundary, 0.25)
        assert isinstance(result, torch.Tensor) and result.is_cuda and result.dtype == torch.float32
        assert_within(result.cpu().numpy(), image, kernel, mode, boundary, 0.25, "convolve", np.float32)


def test_torch_cpu_tensors_stay_on_the_cpu(rng):
    torch = pytest.importorskip("torch")
    image = torch.from_numpy(rng.random((20, 30)).astype(np.float32))
    result = halconv.correlate2d(image, np.ones((3, 3)), "same", device="cpu")
    assert isinstance(result, torch.Tensor) and not result.is_cuda


def test_numpy_on_the_gpu_with_copies(rng):
    image, kernel = rng.uniform(-1, 1, (77, 64)).astype(np.float32), rng.uniform(-1, 1, (9, 9))
    result = halconv.correlate2d(image, kernel, "same", "reflect", device="cuda")
    assert isinstance(result, np.ndarray)
    assert_within(result, image, kernel, "same", "reflect", 0.0, "correlate", np.float32)


def test_work_queued_before_on_the_callers_cupy_stream_is_seen(rng):
    cp = _cupy()
    # A kernel that spins ~50 ms, then writes the image: unless halconv runs after it on the
    # same stream, it reads the zeros.
    spin_fill = cp.RawKernel(r"""
    extern "C" __global__ void spin_fill(float *x, int n, long long cycles) {
        long long start = clock64();
        while (clock64() - start < cycles) {}
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] = 1.0f + (i % 7);
    }""", "spin_fill")
    h, w = 256, 300
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        image = cp.zeros((h, w), cp.float32)
        stream.synchronize()
        spin_fill(((h * w + 255) // 256,), (256,), (image, np.int32(h * w), np.int64(100_000_000)))
        result = halconv.correlate2d(image, np.array([[2.0]]), "same")
        stream.synchronize()
    expected = 2.0 * (1.0 + (np.arange(h * w) % 7)).reshape(h, w)
    np.testing.assert_array_equal(cp.asnumpy(result), expected)


def test_work_queued_before_on_the_callers_torch_stream_is_seen(rng):
    torch = _torch()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        image = torch.zeros((128, 256), device="cuda")
        torch.cuda._sleep(100_000_000)  # ~50 ms of spinning on this stream, then the fill
        image.fill_(3.0)
        result = halconv.correlate2d(image, np.array([[0.5]]), "same")
    stream.synchronize()
    assert torch.all(result == 1.5).item()


def test_no_host_round_trip(rng):
    """Device-only memory (CuPy's cudaMalloc'd arrays have no host side): a call that tried to
    copy it to the host would fail (Halide has no host buffer to copy into); the result must
    stay on the device and match."""
    cp = _cupy()
    image = cp.asarray(rng.random((1024, 768)).astype(np.float32))
    before = cp.cuda.runtime.memGetInfo()[0]
    result = halconv.correlate2d(image, np.ones((5, 5)) / 25, "same", "nearest")
    cp.cuda.Device().synchronize()
    assert isinstance(result, cp.ndarray)
    expected = halconv.correlate2d(cp.asnumpy(image), np.ones((5, 5)) / 25, "same", "nearest", device="cpu")
    np.testing.assert_allclose(cp.asnumpy(result), expected, rtol=0, atol=1e-5)
    assert before > 0


def test_tensor_core_algorithms_from_python(rng):
    cp = _cupy()
    image = rng.uniform(-1, 1, (256, 320)).astype(np.float16)
    kernel = rng.uniform(-1, 1, (31, 31))
    result = halconv.correlate2d(cp.asarray(image), kernel, "same", "symm", algorithm="im2tensor_fused",
                                 precision="f16f32")
    assert result.dtype == np.float32
    assert_within(cp.asnumpy(result), image, kernel, "same", "symm", 0.0, "correlate", np.float16)


def test_a_plan_on_cupy_images(rng):
    cp = _cupy()
    kernel = rng.random((9, 9))
    plan = halconv.Plan((200, 300), kernel, "same", "wrap", dtype=np.float32)
    assert plan.dispatch["device"] == "cuda"
    for _ in range(3):
        image = rng.random((200, 300)).astype(np.float32)
        result = plan(cp.asarray(image))
        assert isinstance(result, cp.ndarray)
        assert_within(cp.asnumpy(result), image, kernel, "same", "wrap", 0.0, "correlate", np.float32)
    np.testing.assert_array_equal(cp.asnumpy(plan(cp.asarray(image))), plan(image))


def test_views_of_device_arrays(rng):
    cp = _cupy()
    base = rng.random((100, 120)).astype(np.float32)
    kernel = rng.random((3, 3))
    g = cp.asarray(base)
    for view, host in [(g[10:70, 5:100], base[10:70, 5:100]), (g.T, base.T), (g[::-1], base[::-1])]:
        result = halconv.correlate2d(view, kernel, "same", "symm")
        assert_within(cp.asnumpy(result), np.ascontiguousarray(host), kernel, "same", "symm", 0.0, "correlate",
                      np.float32)


def test_mixing_libraries_is_refused(rng):
    cp = _cupy()
    image = cp.asarray(rng.random((10, 10)).astype(np.float32))
    with pytest.raises(halconv.InvalidArgumentError, match="library"):
        halconv.correlate2d(image, np.ones((3, 3)), "same", out=np.empty((10, 10), np.float32))


def test_pipelines_and_gaussian_on_cupy(rng):
    cp = _cupy()
    image = rng.random((128, 160)).astype(np.float32)
    g = cp.asarray(image)
    # the same thresholded sums; float32 rounding may differ where a sum lies at the threshold
    assert np.mean(cp.asnumpy(halconv.detect_edges(g)) != halconv.detect_edges(image, device="cpu")) < 1e-3
    np.testing.assert_allclose(cp.asnumpy(halconv.gaussian_filter(g, 3.0)),
                               halconv.gaussian_filter(image, 3.0, device="cpu"), rtol=0, atol=2e-6)
    np.testing.assert_allclose(cp.asnumpy(halconv.gaussian_filter(g, 3.0, method="recursive")),
                               halconv.gaussian_filter(image, 3.0, method="recursive", device="cpu"), rtol=0,
                               atol=2e-6)


def test_a_batch_of_cupy_images(rng):
    cp = _cupy()
    batch = rng.uniform(-1, 1, (12, 64, 96)).astype(np.float16)
    kernel = rng.uniform(-1, 1, (7, 7))
    g = cp.asarray(batch)
    for algorithm in ["auto", "im2tensor_fused", "shared_tiled"]:
        result = halconv.correlate2d(g, kernel, "same", "mirror", algorithm=algorithm, precision="f16f32")
        assert isinstance(result, cp.ndarray) and result.shape == (12, 64, 96)
        for i in (0, 5, 11):
            alone = halconv.correlate2d(g[i], kernel, "same", "mirror", algorithm=algorithm, precision="f16f32")
            np.testing.assert_array_equal(cp.asnumpy(result[i]), cp.asnumpy(alone))


def test_eight_bit_colour_images_on_the_gpu(rng):
    cp = _cupy()
    image = rng.integers(0, 256, (64, 80, 3)).astype(np.uint8)
    kernel = rng.uniform(0, 0.05, (9, 9))
    result = halconv.correlate2d(cp.asarray(image), kernel, "same", "symm", channel_axis=-1, output_dtype=np.uint8)
    assert isinstance(result, cp.ndarray) and result.dtype == np.uint8 and result.shape == image.shape
    expected = halconv.correlate2d(image, kernel, "same", "symm", channel_axis=-1, output_dtype=np.uint8,
                                   device="cpu")
    # float32 sums in another order may round a result lying at .5 the other way
    assert np.abs(cp.asnumpy(result).astype(int) - expected.astype(int)).max() <= 1
