"""scripts/plot on a small made-up result set (numbers chosen so the summary's choices
are known) and on the committed H100 results: every chart is written as a PNG and the
summary picks the best variants and ratios the rows imply."""
import csv
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PLOT = ROOT / "scripts" / "plot"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

TIME_COLUMNS = ["device", "family", "variant", "precision", "width", "height", "K", "status", "median_ms",
                "min_ms", "max_ms", "useful_tflops", "memory_floor_ms", "compute_floor_ms", "roofline_ms",
                "fraction_of_roofline", "extra_bytes", "check_max_err", "note"]


def run_plot(results, out):
    return subprocess.run([sys.executable, str(PLOT), str(results), "--out", str(out)], capture_output=True,
                          text=True)


class PlotTest(unittest.TestCase):
    def test_made_up_results(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = pathlib.Path(tmp)
            rows = [
                ("halconv", "shared_tiled", "f32", 15, "ok", 2.0),
                ("halconv", "naive", "f32", 15, "ok", 8.0),
                ("cufft", "cufft", "f32", 15, "ok", 0.5),
                ("npp", "npp", "f32", 15, "check_failed", 0.1),  # fastest but wrong: not "best"
                ("halconv", "im2tensor_fused", "f16", 15, "ok", 0.25),
                ("cudnn", "cudnn_best", "f16", 15, "ok", 1.0),
                ("halconv", "im2tensor_fused", "f32", 15, "unsupported", None),
                ("halconv", "auto", "f16", 15, "ok", 0.26),  # not "best halconv": a choice among them
            ]
            with open(tmp / "time-test.csv", "w", newline="") as f:
                w = csv.DictWriter(f, TIME_COLUMNS)
                w.writeheader()
                for family, variant, precision, k, status, ms in rows:
                    w.writerow({"device": "TestGPU", "family": family, "variant": variant, "precision": precision,
                                "width": 256, "height": 128, "K": k, "status": status,
                                "median_ms": "" if ms is None else ms,
                                "note": "im2tensor_fused" if variant == "auto" else "",
                                "useful_tflops": "" if ms is None else 1.0 / ms, "roofline_ms": 0.05,
                                "check_max_err": 0.5 if status == "check_failed" else 1e-6})
            with open(tmp / "accuracy.csv", "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["device", "family", "variant", "precision", "photo", "width", "height", "K", "status",
                            "mape_percent", "p95_ape_percent", "max_ape_percent", "note"])
                w.writerow(["TestGPU", "halconv", "naive", "f16", "a", 64, 64, 15, "ok", 0.1, 0.2, 0.3, ""])
                w.writerow(["TestGPU", "halconv", "naive", "f16", "b", 64, 64, 15, "ok", 0.3, 0.4, 0.5, ""])
            out = tmp / "charts"
            r = run_plot(tmp, out)
            self.assertEqual(r.returncode, 0, r.stderr)
            for name in ["time-f32.png", "tflops-f32.png", "time-f16.png", "tflops-f16.png", "accuracy.png",
                         "auto-f16.png"]:
                data = (out / name).read_bytes()
                self.assertTrue(data.startswith(PNG_MAGIC), name)
                self.assertGreater(len(data), 10000, name)
            summary = (out / "summary.md").read_text()
            self.assertIn("| 256x128 | 15 | shared_tiled | 2.000 | cufft | 0.500 | 4.00 |", summary)
            self.assertIn("| 256x128 | 15 | im2tensor_fused | 0.250 | cudnn_best | 1.000 | 0.25 |", summary)
            self.assertIn("| npp | f32 | 256x128 | 15 | check_failed |", summary)
            self.assertIn("| f16 | 256x128 | 1 | 1 | 1.040 | 15 | im2tensor_fused | im2tensor_fused |", summary)
            self.assertIn("| naive | f16 | 2.00e-01 |", summary)  # mean of the two photos' MAPE

    def test_committed_h100_results(self):
        results = ROOT / "bench" / "results" / "h100" / "suite"
        with tempfile.TemporaryDirectory() as tmp:
            r = run_plot(results, pathlib.Path(tmp))
            self.assertEqual(r.returncode, 0, r.stderr)
            for precision in ["f32", "f16f32", "f16"]:
                for kind in ["time", "tflops"]:
                    self.assertTrue((pathlib.Path(tmp) / f"{kind}-{precision}.png").read_bytes().startswith(PNG_MAGIC))
            summary = (pathlib.Path(tmp) / "summary.md").read_text()
            for heading in ["## Median time", "## MAPE", "## Extra device memory"]:
                self.assertIn(heading, summary)

    def test_refuses_a_folder_without_results(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = run_plot(tmp, pathlib.Path(tmp) / "charts")
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("no time-*.csv", r.stderr)


if __name__ == "__main__":
    unittest.main()
