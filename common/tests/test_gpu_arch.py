#!/usr/bin/env python3
"""Host test of common/gpu_arch.py: the architectures chosen for each captured nvcc.

Feeds the `nvcc --list-gpu-code` outputs in nvcc_gpu_code/ (CUDA 12.4, 12.8, 13.0)
and a list of visible GPUs, and checks the machine code, the PTX target and the
errors. Runs without a GPU and without those toolkits.
"""
import contextlib
import io
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import gpu_arch  # noqa: E402


def supported(version):
    with open(os.path.join(HERE, "nvcc_gpu_code", f"cuda-{version}.txt")) as f:
        return gpu_arch.parse_gpu_code(f.read())


def choose(choice, version, gpus=(), emulate="none"):
    probe = "test" if gpus else "no GPU in the test"
    return gpu_arch.choose(choice, supported(version), [("GPU", gpu_arch.cc_to_arch(c)) for c in gpus], probe,
                           emulate, version)


class CapturedLists(unittest.TestCase):
    def test_what_each_toolkit_builds(self):
        self.assertEqual(supported("12.4"), [50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90])
        self.assertEqual(supported("12.8")[-3:], [100, 101, 120])
        self.assertEqual(supported("13.0"), [75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121])


class NoGpu(unittest.TestCase):
    """auto without a GPU and portable: the portable set, cut to what nvcc builds."""

    def test_cuda_12_4_leaves_out_blackwell(self):
        for choice in ("auto", "portable"):
            sass, ptx, why = choose(choice, "12.4")
            self.assertEqual((sass, ptx), ([75, 80, 90], 90))
            self.assertIn("sm_100, sm_120 left out", why)
        self.assertIn("no GPU visible", choose("auto", "12.4")[2])

    def test_cuda_12_8_and_13_0_build_the_whole_set(self):
        # PTX for compute_100, from which sm_120's machine code is compiled too.
        for version in ("12.8", "13.0"):
            sass, ptx, why = choose("auto", version)
            self.assertEqual((sass, ptx), ([75, 80, 90, 100, 120], 100))
            self.assertIn("PTX for compute_100 (sm_120 from that PTX)", why)
            self.assertNotIn("left out", why)

    def test_printed_lines_name_what_sm_120_is_compiled_from(self):
        def printed(version):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = gpu_arch.main(["portable", "--gpu-code-file",
                                      os.path.join(HERE, "nvcc_gpu_code", f"cuda-{version}.txt")])
            return [code] + out.getvalue().splitlines()

        self.assertEqual(printed("13.0")[:3], [0, "sass=75,80,90,100,120:100", "ptx=100"])
        self.assertEqual(printed("12.4")[:3], [0, "sass=75,80,90", "ptx=90"])


class VisibleGpu(unittest.TestCase):
    """auto with GPUs: their compute capabilities only, no PTX."""

    def test_one_gpu(self):
        for version in ("12.4", "12.8", "13.0"):
            self.assertEqual(choose("auto", version, ["9.0"])[:2], ([90], None))
        self.assertEqual(choose("auto", "13.0", ["7.5"])[:2], ([75], None))

    def test_two_models(self):
        sass, ptx, why = choose("auto", "12.8", ["8.6", "9.0", "8.6"])
        self.assertEqual((sass, ptx), ([86, 90], None))
        self.assertIn("sm_86, sm_90 for the visible GPU", why)

    def test_gpu_newer_than_nvcc_gets_ptx(self):
        # An RTX 5090 (12.0) with CUDA 12.4: PTX of sm_90, compiled by the driver.
        sass, ptx, why = choose("auto", "12.4", ["12.0"])
        self.assertEqual((sass, ptx), ([], 90))
        self.assertIn("newer than nvcc 12.4 knows", why)
        self.assertEqual(choose("auto", "12.4", ["12.0", "8.9"])[:2], ([89], 90))

    def test_gpu_older_than_nvcc_is_an_error(self):
        # A GTX 1080 (6.1) with CUDA 13.0, which starts at sm_75.
        with self.assertRaisesRegex(gpu_arch.ArchError, "older than anything nvcc 13.0 builds"):
            choose("auto", "13.0", ["6.1"])


class ExplicitList(unittest.TestCase):
    def test_as_asked(self):
        self.assertEqual(choose("80,90", "12.4")[:2], ([80, 90], None))
        self.assertEqual(choose("9.0", "13.0")[:2], ([90], None))

    def test_unknown_to_this_nvcc(self):
        with self.assertRaisesRegex(gpu_arch.ArchError, "nvcc 12.4 cannot build sm_100"):
            choose("90,100", "12.4")
        with self.assertRaisesRegex(gpu_arch.ArchError, "cannot build sm_61"):
            choose("61", "13.0")

    def test_not_a_capability(self):
        with self.assertRaisesRegex(gpu_arch.ArchError, "not a compute capability"):
            choose("sm90", "13.0")


class Emulation(unittest.TestCase):
    def test_ptx_only_for_the_emulated_gpu(self):
        for version in ("12.4", "12.8", "13.0"):
            self.assertEqual(choose("auto", version, ["9.0"], "t4")[:2], ([], 75))
            self.assertEqual(choose("90", version, [], "sm86")[:2], ([], 86))
        self.assertIn("emulate=t4: PTX for compute_75 only", choose("auto", "13.0", emulate="t4")[2])
        self.assertIn("gpu_arch=90 does not apply", choose("90", "13.0", emulate="t4")[2])

    def test_emulated_gpu_this_nvcc_cannot_build(self):
        cuda_13_without_86 = [a for a in supported("13.0") if a != 86]
        with self.assertRaisesRegex(gpu_arch.ArchError, "needs compute_86"):
            gpu_arch.choose("auto", cuda_13_without_86, [], "", "sm86", "13.0")


class NvidiaSmi(unittest.TestCase):
    """The probe itself, with a stand-in nvidia-smi on the PATH."""

    def probe(self, script, visible=None):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "nvidia-smi"), "w") as f:
                f.write("#!/bin/sh\n" + script + "\n")
            os.chmod(os.path.join(d, "nvidia-smi"), 0o755)
            env = dict(os.environ)
            os.environ["PATH"] = d + os.pathsep + env["PATH"]
            if visible is None:
                os.environ.pop("CUDA_VISIBLE_DEVICES", None)
            else:
                os.environ["CUDA_VISIBLE_DEVICES"] = visible
            try:
                return gpu_arch.visible_gpus()
            finally:
                os.environ.clear()
                os.environ.update(env)

    def test_two_gpus(self):
        gpus, how = self.probe("echo 'NVIDIA H100 80GB HBM3, 9.0'; echo 'Tesla T4, 7.5'")
        self.assertEqual(gpus, [("NVIDIA H100 80GB HBM3", 90), ("Tesla T4", 75)])
        self.assertEqual(how, "nvidia-smi")

    def test_hidden_by_cuda_visible_devices(self):
        gpus, how = self.probe("echo 'Tesla T4, 7.5'", visible="")
        self.assertEqual(gpus, [])
        self.assertIn("CUDA_VISIBLE_DEVICES", how)

    def test_old_driver_without_compute_cap(self):
        gpus, how = self.probe("echo 'Tesla K80, [Field Not Found]'")
        self.assertEqual(gpus, [])
        self.assertIn("does not report compute capabilities", how)

    def test_no_driver(self):
        gpus, how = self.probe("echo 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA "
                               "driver.'; exit 9")
        self.assertEqual(gpus, [])
        self.assertIn("could not communicate", how)


class CommandLine(unittest.TestCase):
    """What meson.build reads: three key=value lines, or exit 1 and one line on stderr."""

    def run_main(self, *args):
        import contextlib
        import io
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = gpu_arch.main(list(args))
        return code, out.getvalue(), err.getvalue()

    def test_lines(self):
        code, out, _ = self.run_main("auto", "--gpu-code-file", os.path.join(HERE, "nvcc_gpu_code", "cuda-12.4.txt"),
                                     "--gpus", "", "--nvcc-version", "12.4")
        self.assertEqual(code, 0)
        lines = out.splitlines()
        self.assertEqual(lines[:2], ["sass=75,80,90", "ptx=90"])
        self.assertTrue(lines[2].startswith("why=gpu_arch=auto: no GPU visible"))
        self.assertEqual(lines[3], "portable=yes")  # the portable set: no GPU here to profile it

    def test_not_portable_where_a_gpu_runs_the_build(self):
        code_file = os.path.join(HERE, "nvcc_gpu_code", "cuda-12.4.txt")
        for args in (("auto", "--gpus", "9.0"), ("90",), ("auto", "--emulate", "t4", "--gpus", "")):
            code, out, _ = self.run_main(*args, "--gpu-code-file", code_file, "--nvcc-version", "12.4")
            self.assertEqual((code, out.splitlines()[3]), (0, "portable=no"), args)
        code, out, _ = self.run_main("portable", "--gpu-code-file", code_file, "--gpus", "9.0")
        self.assertEqual(out.splitlines()[3], "portable=yes")

    def test_error(self):
        code, out, err = self.run_main("100", "--gpu-code-file",
                                       os.path.join(HERE, "nvcc_gpu_code", "cuda-12.4.txt"), "--gpus", "")
        self.assertEqual((code, out), (1, ""))
        self.assertIn("cannot build sm_100", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
