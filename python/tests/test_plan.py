"""halconv.Plan: the free functions' results bit for bit, checks on every apply, several
threads at once, and the GIL released while the library computes."""

import threading
import time

import numpy as np
import pytest
import scipy.signal

import halconv


def test_a_plan_gives_the_free_functions_results_bit_for_bit(rng):
    kernel = rng.random((5, 6))
    plan = halconv.Plan((31, 40), kernel, "same", "symm", operation="convolve", dtype=np.float32, device="cpu")
    assert plan.output_shape == (31, 40) and plan.image_shape == (31, 40) and plan.precision == "f32"
    assert set(plan.dispatch) >= {"device", "algorithm", "variant", "reason"} and plan.dispatch["device"] == "cpu"
    for _ in range(3):
        image = rng.random((31, 40)).astype(np.float32)
        out = np.full((31, 40), np.nan, np.float32)
        assert plan(image, out=out) is out
        np.testing.assert_array_equal(out, halconv.convolve2d(image, kernel, "same", "symm", device="cpu"))
    assert "Plan(" in repr(plan)


def test_a_plan_checks_every_image(rng):
    plan = halconv.Plan((16, 16), np.ones((3, 3)), dtype=np.float32, device="cpu")
    assert plan.output_shape == (18, 18), "full by default, as SciPy"
    with pytest.raises(halconv.InvalidArgumentError, match="float64"):
        plan(rng.random((16, 16)))
    with pytest.raises(halconv.InvalidArgumentError):
        plan(rng.random((16, 17)).astype(np.float32))
    with pytest.raises(halconv.InvalidArgumentError, match="image_shape"):
        halconv.Plan((16,), np.ones((3, 3)))
    with pytest.raises(halconv.InvalidArgumentError, match="kernel"):
        halconv.Plan((16, 16), np.full((3, 3), np.inf))


def test_a_plan_for_batches(rng):
    """An (images, rows, columns) shape plans for batches of that many (Auto weighs them;
    the plan takes any batch and single images); a shape of another length or no images is refused."""
    kernel = rng.random((3, 3))
    plan = halconv.Plan((6, 20, 24), kernel, "same", dtype=np.float32, device="cpu")
    assert plan.image_shape == (20, 24) and "x 6 images" in plan.dispatch["reason"]
    batch = rng.random((4, 20, 24)).astype(np.float32)
    got = plan(batch)
    for i in range(4):
        np.testing.assert_allclose(got[i], scipy.signal.correlate2d(batch[i], kernel, "same"), rtol=2e-5, atol=2e-5)
        np.testing.assert_array_equal(got[i], plan(batch[i]))
    for shape in [(0, 20, 24), (2, 2, 20, 24), (20,)]:
        with pytest.raises(halconv.InvalidArgumentError, match="image_shape"):
            halconv.Plan(shape, kernel, device="cpu")


def test_separable_and_gaussian_plans(rng):
    image = rng.random((30, 26))
    row, col = rng.random(5), rng.random(3)
    plan = halconv.Plan.separable(image.shape, row, col, "valid", device="cpu")
    np.testing.assert_array_equal(plan(image), halconv.separable_correlate2d(image, row, col, "valid", device="cpu"))
    np.testing.assert_allclose(plan(image), scipy.signal.correlate2d(image, np.outer(col, row), "valid"),
                               rtol=1e-13)
    gaussian = halconv.Plan.gaussian(image.shape, 2.0, "mirror", device="cpu")
    np.testing.assert_array_equal(gaussian(image), halconv.gaussian_filter(image, 2.0, "mirror", device="cpu"))


def test_threads_may_apply_one_plan_at_once(rng):
    kernel = rng.random((7, 7))
    plan = halconv.Plan((128, 96), kernel, "same", "wrap", dtype=np.float32, device="cpu")
    images = [rng.random((128, 96)).astype(np.float32) for _ in range(8)]
    expected = [plan(x) for x in images]
    results = [None] * len(images)

    def work(i):
        for _ in range(5):
            results[i] = plan(images[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(images))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r, e in zip(results, expected):
        np.testing.assert_array_equal(r, e)


def test_the_gil_is_released_while_computing(rng):
    # A call of about a second (a naive f64 sum of 31 x 31 taps over 640^2): other
    # Python threads must run meanwhile.
    image, kernel = rng.random((640, 640)), rng.random((31, 31))
    done = threading.Event()

    def filter_once():
        halconv.correlate2d(image, kernel, "same", algorithm="naive", device="cpu")
        done.set()

    worker = threading.Thread(target=filter_once)
    start = time.perf_counter()
    worker.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    elapsed = time.perf_counter() - start
    worker.join()
    assert elapsed > 0.05, "the call was too short to tell"
    # with the GIL held, the loop could not tick while the call ran
    assert ticks >= 0.05 * elapsed / 0.001


def test_cpu_threads_can_be_set_and_reset(rng):
    initial = halconv.cpu_threads()
    image, kernel = rng.random((200, 150)).astype(np.float32), rng.random((5, 5))
    many = halconv.correlate2d(image, kernel, "same", device="cpu")
    assert halconv.set_cpu_threads(1) == initial
    try:
        assert halconv.cpu_threads() == 1
        np.testing.assert_array_equal(halconv.correlate2d(image, kernel, "same", device="cpu"), many)
    finally:
        assert halconv.set_cpu_threads(0) == 1
    assert halconv.cpu_threads() == initial
    with pytest.raises(halconv.InvalidArgumentError, match="out of range"):
        halconv.set_cpu_threads(-2)
