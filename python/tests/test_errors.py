"""Bad input gets halconv's typed exceptions (each also the built-in one Python code
expects), with the library's message saying what was wrong and what is allowed."""

import numpy as np
import pytest

import halconv
from halconv import _halconv
from halconv._errors import ERROR_TYPES


def test_every_error_code_of_the_library_has_a_class():
    assert set(_halconv.names()["error_code"]) == set(ERROR_TYPES)
    for code, cls in ERROR_TYPES.items():
        assert issubclass(cls, halconv.Error) and cls.code == code


def test_a_non_finite_kernel_is_an_invalid_argument(rng):
    kernel = rng.random((3, 3))
    kernel[1, 2] = np.nan
    with pytest.raises(halconv.InvalidArgumentError, match="kernel") as info:
        halconv.correlate2d(rng.random((8, 8)), kernel, device="cpu")
    assert isinstance(info.value, ValueError) and info.value.code == "invalid_argument"
    assert str(info.value).startswith("halconv: "), "the C++ library's own message"


@pytest.mark.parametrize("kwargs, match", [
    ({"mode": "middle"}, "allowed: valid, same, full"),
    ({"boundary": "clamp"}, "allowed: constant, nearest, reflect, mirror, wrap"),
    ({"algorithm": "fastest"}, "allowed: auto, naive"),
    ({"precision": "f8"}, "allowed: f64, f32, f16, f16f32"),
    ({"device": "gpu"}, "allowed: auto, cpu, cuda"),
    ({"fillvalue": 1j}, "real"),
    ({"fillvalue": "zero"}, "number"),
])
def test_bad_options_name_what_is_allowed(rng, kwargs, match):
    with pytest.raises(halconv.InvalidArgumentError, match=match):
        halconv.correlate2d(rng.random((8, 8)), rng.random((3, 3)), **kwargs)


@pytest.mark.parametrize("image, match", [
    (np.zeros((2, 4, 4, 2)), "2-D array"),
    (np.zeros(5), "2-D array"),
    (np.zeros((4, 4), np.complex128), "complex"),
    (np.zeros((4, 4), np.int32), "int32"),
    (np.zeros((4, 4), bool), "bool"),
    (np.zeros((0, 4)), "empty"),
])
def test_bad_images_are_refused(image, match):
    with pytest.raises(halconv.InvalidArgumentError, match=match):
        halconv.correlate2d(image, np.ones((3, 3)), device="cpu")


def test_an_integer_image_is_filtered_when_a_precision_is_named():
    image = np.arange(30, dtype=np.int32).reshape(5, 6)
    result = halconv.correlate2d(image, np.ones((1, 1)), "same", precision="f64", device="cpu")
    np.testing.assert_array_equal(result, image.astype(np.float64))


def test_a_gpu_algorithm_on_the_cpu_is_unsupported(rng):
    with pytest.raises(halconv.UnsupportedError) as info:
        halconv.correlate2d(rng.random((16, 16)).astype(np.float16), rng.random((3, 3)), "same",
                            algorithm="im2tensor", device="cpu")
    assert isinstance(info.value, ValueError)


def test_cuda_where_there_is_none_is_a_device_error(rng):
    if halconv.cuda_info()["devices"]:
        pytest.skip("this machine has a CUDA device")
    with pytest.raises(halconv.Error) as info:
        halconv.correlate2d(rng.random((16, 16)), rng.random((3, 3)), device="cuda")
    assert info.value.code in ("device", "unsupported")
    assert isinstance(info.value, (RuntimeError, ValueError))


def test_filters_refuse_bad_parameters(rng):
    image = rng.random((16, 16)).astype(np.float32)
    with pytest.raises(halconv.InvalidArgumentError, match="sigma"):
        halconv.gaussian_filter(image, 0.0)
    with pytest.raises(halconv.InvalidArgumentError, match="sigma"):
        halconv.gaussian_filter(image, np.nan)
    with pytest.raises(halconv.InvalidArgumentError, match="one sigma"):
        halconv.gaussian_filter(image, (1.0, 2.0), method="recursive")
    with pytest.raises(halconv.InvalidArgumentError, match="method"):
        halconv.gaussian_filter(image, 1.0, method="box")
    with pytest.raises(halconv.Error, match="sigma"):
        halconv.bilateral_filter(image, 1.0, float("nan"))
    with pytest.raises(halconv.InvalidArgumentError, match="channels"):
        halconv.multichannel_correlate2d(rng.random((8, 8, 3)), rng.random((2, 3, 3, 4)))
    with pytest.raises(halconv.UnsupportedError):
        halconv.gaussian_filter(image.astype(np.float16), 2.0, method="recursive")


def test_unknown_array_types_are_refused():
    class NotAnArray:
        __cuda_array_interface__ = {}

    with pytest.raises(halconv.InvalidArgumentError, match="CuPy arrays and PyTorch tensors"):
        halconv.correlate2d(NotAnArray(), np.ones((3, 3)))
    with pytest.raises(halconv.InvalidArgumentError):
        halconv.correlate2d("an image", np.ones((3, 3)))


def test_the_public_names_are_all_there():
    for name in halconv.__all__:
        assert hasattr(halconv, name), name


def test_cuda_info_lists_the_libraries_opened_on_first_use():
    """cuBLAS and cuFFT are opened when needed, not linked: the module imports with the
    driver alone, and cuda_info says where each was found or why it cannot be used."""
    info = halconv.cuda_info()
    if not info["built"]:
        assert info["libraries"] == []
        return
    assert [lib["name"] for lib in info["libraries"]] == ["cuBLAS", "cuFFT"]
    for lib in info["libraries"]:
        assert lib["file"].startswith("lib") and ".so." in lib["file"]
        if lib["unavailable_reason"]:
            assert lib["path"] == ""
            assert lib["file"] in lib["unavailable_reason"] and "halconv[cuda]" in lib["unavailable_reason"]
        else:
            assert lib["path"].endswith(lib["file"]) or lib["file"] in lib["path"]
