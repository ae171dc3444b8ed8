#!/usr/bin/env python3
"""Tests scripts/profile-kernels.sh and scripts/ncu_profile.py, gpu-run.sh's Nsight Compute step,
without a GPU (Python 3, standard library only).

    test_profile.py SOURCE_DIR [MINIAPP_BENCHMARKS]

1. The script against a stand-in `ncu` written here (a shell script that records its arguments and
   writes a report holding a raw page, or prints what the real one prints when it cannot read the
   counters, profiles nothing, or hangs): one profiling run per target with the target's benchmark,
   kernel regex, skip and count, the clocks left alone; each outcome recorded in profile.tsv with
   its exit code (0, 1 or 3), a refusal stopping the rest.
2. The reader on a raw page made here in ncu's layout (header, units row, a row per launch,
   quoted values with thousands separators): medians per kernel, bytes moved, the reading by the
   Speed Of Light rule, kernels of one function numbered; and gpu_summary.py carrying the section.
3. The targets: every function or class a kernel regex names exists in the sources, and every
   benchmark filter whose benchmark is registered for host spaces too matches one in
   MINIAPP_BENCHMARKS --benchmark_list_tests (with the device space's name swapped for openmp).
4. The register audit (scripts/ptxas-audit.sh, scripts/ptxas_audit.py) on a ptxas -v log in
   ptxas' own words: registers, stack and spills per kernel, the mark on a stack past a
   reducer's or a spill, the names demangled, the filter, its exit codes; the shell script
   through a Ninja build made here whose compiler is a stand-in nvcc that prints that log.
"""

import csv
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import unittest

SOURCE_DIR = None
BENCHMARKS = None

FAKE_NCU = r"""#!/usr/bin/env bash
# A stand-in for ncu: records its arguments; FAKE_NCU_MODES="target=mode,..." picks what it does
# for the run whose report is OUT/target (default ok).
printf '%s\n' "$*" >>"$FAKE_NCU_CALLS"
if [ "$1" = --import ]; then
  [[ "$*" == *--print-kernel-base* && -n "${FAKE_NCU_NO_KERNEL_BASE:-}" ]] && { echo "==ERROR== unrecognised option '--print-kernel-base'" >&2; exit 1; }
  cat "$2"; exit 0
fi
out=""; prev=""
for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done
target=$(basename "$out")
mode=$(printf '%s' ",${FAKE_NCU_MODES:-}," | sed -nE "s/.*,$target=([a-z]+),.*/\1/p")
case "${mode:-ok}" in
  ok) cp "$FAKE_NCU_PAGE" "$out.ncu-rep"; echo "==PROF== Disconnected" ;;
  appfail) cp "$FAKE_NCU_PAGE" "$out.ncu-rep"; echo "benchmark error"; exit 1 ;;
  refuse) echo "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0."; exit 1 ;;
  none) echo "==WARNING== No kernels were profiled." ;;
  hang) sleep 30 ;;
esac
exit 0
"""

HEADER = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
          "Grid Size", "Device", "CC", "dram__bytes_read.sum", "dram__bytes_write.sum",
          "dram__throughput.avg.pct_of_peak_sustained_elapsed",
          "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "gpu__time_duration.sum",
          "launch__block_size", "launch__grid_size", "launch__registers_per_thread",
          "launch__waves_per_multiprocessor", "sm__maximum_warps_per_active_cycle_pct",
          "sm__throughput.avg.pct_of_peak_sustained_elapsed", "sm__warps_active.avg.pct_of_peak_sustained_active",
          "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
          "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
          "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio",
          "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio"]
UNITS = ["", "", "", "", "", "", "", "", "", "", "", "byte", "byte", "%", "%", "nsecond", "", "", "register/thread",
         "", "%", "%", "%", "inst", "inst", "inst", "inst"]
STREAM = "void Kokkos::Impl::cuda_parallel_launch_local_memory<Kokkos::Impl::ParallelFor<miniapp::bench::fill_flat<float, Kokkos::Cuda, 8>, Kokkos::RangePolicy<Kokkos::Cuda>>>(T1)"  # noqa: E501
LEAF = ("void Kokkos::Impl::cuda_parallel_launch_local_memory<Kokkos::Impl::ParallelReduce<__nv_hdl_wrapper_t<false, "
        "false, false, __nv_dl_tag<void (*)(const Kokkos::Cuda &, const miniapp::solver::blocked::Work<double, "
        "Kokkos::Cuda> &, int, int), &miniapp::solver::blocked::factor_leaf_over_device<double, Kokkos::Cuda>, {}u>>>>(T1)")


def launch(i, name, time_ns, dram, memory, sm, achieved, waves, long_sb, barrier, read="1,000,000", written="3,000,000"):
    return [str(i), "77", "miniapp_benchmarks", "node", name, "1", "7", "(256, 1, 1)", "(1024, 1, 1)", "0", "9.0",
            read, written, str(dram), str(memory), f"{time_ns:,}", "256", "1,024", "40", str(waves), "100",
            str(sm), str(achieved), str(long_sb), str(barrier), "9.9", "1.5"]


def write_page(path, rows):
    with open(path, "w", newline="") as f:
        f.write("==PROF== Connected to process 77\n")
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        w.writerow(HEADER)
        w.writerow(UNITS)
        w.writerows(rows)


class ScriptAgainstAStandIn(unittest.TestCase):
    """scripts/profile-kernels.sh with the stand-in ncu."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="profile-kernels-")
        self.bin = os.path.join(self.tmp, "bin")
        os.makedirs(self.bin)
        bench = os.path.join(self.bin, "miniapp_benchmarks")
        with open(bench, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        ncu = os.path.join(self.tmp, "ncu")
        with open(ncu, "w") as f:
            f.write(FAKE_NCU)
        for p in (bench, ncu):
            os.chmod(p, os.stat(p).st_mode | stat.S_IXUSR)
        self.page = os.path.join(self.tmp, "page.csv")
        write_page(self.page, [launch(0, STREAM, 30000, 85.2, 86.0, 20.1, 90.0, 12.5, 3.0, 0.0)])
        self.calls = os.path.join(self.tmp, "calls.txt")
        self.out = os.path.join(self.tmp, "profile")
        self.targets = os.path.join(self.tmp, "targets.tsv")
        with open(self.targets, "w") as f:
            f.write("# name\tfilter\tkernel\tskip\tcount\twhy\n"
                    "alpha\t^fill-flat-k8/float32/cuda/8192/\tfill_flat\t1\t1\tthe bound\n"
                    "beta\t^solver-dense-blocked/float64/cuda/2048/\tfactor_leaf|swap_rows\t300\t30\tlaunches\n"
                    "gamma\t^regression-fused/float64/cuda/\tTeamGradient\t2\t2\tone launch\n")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_script(self, *extra, modes="", path_has_ncu=True, env_extra=None):
        env = dict(os.environ, FAKE_NCU_CALLS=self.calls, FAKE_NCU_PAGE=self.page, FAKE_NCU_MODES=modes)
        env.pop("NCU", None)
        env["PATH"] = (self.tmp + os.pathsep if path_has_ncu else "") + "/usr/bin:/bin"
        env.update(env_extra or {})
        cmd = ["bash", os.path.join(SOURCE_DIR, "scripts", "profile-kernels.sh"), self.bin, self.out,
               "--targets", self.targets, *extra]
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)

    def status(self):
        with open(os.path.join(self.out, "profile.tsv"), newline="") as f:
            return {r["target"]: r for r in csv.DictReader(f, delimiter="\t")}

    def calls_made(self):
        if not os.path.isfile(self.calls):
            return []
        with open(self.calls) as f:
            return f.read().splitlines()

    def test_one_run_per_target_with_its_filter_kernels_skip_and_count(self):
        r = self.run_script()
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.out, "profile-plan.txt")) as f:
            self.assertEqual(f.read().split(), ["alpha", "beta", "gamma"])
        profiling = [c for c in self.calls_made() if not c.startswith("--import")]
        self.assertEqual(len(profiling), 3)
        for call, (name, filt, kernels, skip, count) in zip(profiling, [
                ("alpha", "^fill-flat-k8/float32/cuda/8192/", "fill_flat", 1, 1),
                ("beta", "^solver-dense-blocked/float64/cuda/2048/", "factor_leaf|swap_rows", 300, 30),
                ("gamma", "^regression-fused/float64/cuda/", "TeamGradient", 2, 2)]):
            self.assertIn("--clock-control none", call)
            self.assertIn("--kernel-name-base demangled", call)
            self.assertIn(f"-k regex:{kernels} --launch-skip {skip} --launch-count {count}", call)
            for section in ("SpeedOfLight", "LaunchStats", "Occupancy", "WarpStateStats"):
                self.assertIn(f"--section {section}", call)
            self.assertIn(f"-o {os.path.join(self.out, name)} {os.path.join(self.bin, 'miniapp_benchmarks')} "
                          f"--benchmark_filter={filt}", call)
            # one launch a run is enough: as many runs as launches skipped and profiled, at most 8
            self.assertIn(f"--benchmark_repetitions={min(skip + count, 8)}", call)
            self.assertEqual(self.status()[name]["status"], "ok")
            self.assertEqual(self.status()[name]["kernels"], kernels)
            with open(os.path.join(self.out, name + ".csv")) as f, open(self.page) as g:
                self.assertEqual(f.read(), g.read())
        imports = [c for c in self.calls_made() if c.startswith("--import")]
        self.assertEqual(len(imports), 3)
        self.assertTrue(all("--csv --page raw --print-units base --print-kernel-base demangled" in c for c in imports))

    def test_an_ncu_without_kernel_base_on_import_still_exports(self):
        r = self.run_script("--only", "alpha", env_extra={"FAKE_NCU_NO_KERNEL_BASE": "1"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.getsize(os.path.join(self.out, "alpha.csv")) > 0)
        self.assertEqual(list(self.status()), ["alpha"])

    def test_refused_counters_stop_the_rest_with_exit_3(self):
        r = self.run_script(modes="beta=refuse")
        self.assertEqual(r.returncode, 3, r.stderr)
        s = self.status()
        self.assertEqual(s["alpha"]["status"], "ok")
        self.assertEqual(s["beta"]["status"], "refused")
        self.assertIn("ERR_NVGPUCTRPERM", s["beta"]["detail"])
        self.assertEqual(s["gamma"]["status"], "not-run")
        self.assertEqual(len([c for c in self.calls_made() if not c.startswith("--import")]), 2)

    def test_no_kernel_a_failed_benchmark_and_a_hang_are_recorded_with_exit_1(self):
        t0 = time.monotonic()
        r = self.run_script("--per-target", "2", modes="alpha=none,beta=appfail,gamma=hang")
        self.assertLess(time.monotonic() - t0, 20)
        self.assertEqual(r.returncode, 1, r.stderr)
        s = self.status()
        self.assertEqual(s["alpha"]["status"], "no-kernel")
        self.assertIn("fill_flat", s["alpha"]["detail"])
        self.assertEqual(s["beta"]["status"], "failed")
        self.assertIn("exit 1 (report kept)", s["beta"]["detail"])
        self.assertEqual(s["gamma"]["status"], "timed-out")

    def test_no_ncu_records_every_target_not_run_with_exit_3(self):
        r = self.run_script(path_has_ncu=False, env_extra={"NCU": ""})
        if os.path.exists("/usr/local/cuda/bin/ncu"):
            self.skipTest("this machine has /usr/local/cuda/bin/ncu, which the script falls back to")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual({s["status"] for s in self.status().values()}, {"not-run"})
        self.assertIn("no ncu", r.stderr)

    def test_bad_arguments_exit_2(self):
        self.assertEqual(self.run_script("--only", "delta").returncode, 2)
        self.assertEqual(self.run_script("--per-target", "0").returncode, 2)
        r = self.run_script("--bogus", "1")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown option '--bogus'", r.stderr)
        self.assertEqual(self.calls_made(), [])  # refused before ncu ran
        r = subprocess.run(["bash", os.path.join(SOURCE_DIR, "scripts", "profile-kernels.sh"), self.tmp, self.out],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no miniapp_benchmarks", r.stderr)


def load_reader():
    sys.path.insert(0, os.path.join(SOURCE_DIR, "scripts"))
    import ncu_profile  # noqa: E402
    return ncu_profile


class Reader(unittest.TestCase):
    """scripts/ncu_profile.py on a page made here."""

    @classmethod
    def setUpClass(cls):
        cls.ncu = load_reader()
        cls.tmp = tempfile.mkdtemp(prefix="ncu-profile-")
        write_page(os.path.join(cls.tmp, "dense.csv"), [
            # two launches of lambda 2 (medians: 5 us, 12% occupancy) and one of lambda 3
            launch(0, LEAF.format(2), 4000, 3.0, 9.0, 4.0, 10.0, 0.25, 11.5, 4.0),
            launch(1, LEAF.format(3), 2500, 1.0, 2.0, 1.0, 30.0, 0.5, 2.0, 6.5),
            launch(2, LEAF.format(2), 6000, 5.0, 11.0, 6.0, 14.0, 0.25, 12.5, 3.0),
        ])
        write_page(os.path.join(cls.tmp, "fill.csv"), [launch(0, STREAM, 75300, 85.2, 86.0, 20.1, 90.0, 12.5, 3.0, 0.0,
                                                              read="512", written="268,435,456")])
        with open(os.path.join(cls.tmp, "profile.tsv"), "w") as f:
            f.write("target\tkernels\tstatus\tseconds\tdetail\n"
                    "dense\tfactor_leaf|swap_rows\tok\t12\t\n"
                    "fill\tfill_flat\tok\t9\t\n"
                    "lost\tgemm_tiled_resident\ttimed-out\t40\tstopped after 40 s\n")
        with open(os.path.join(cls.tmp, "profile-plan.txt"), "w") as f:
            f.write("dense\nfill\nlost\nunreached\n")  # the step was stopped during the fourth
        cls.md = cls.ncu.section(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def rows(self):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from test_gpu_summary import table_rows  # noqa: E402  (the summary test's table reader)
        return table_rows(self.md, "| target | kernel |")

    def test_the_units_row_and_messages_are_not_launches(self):
        launches = self.ncu.read_raw_page(os.path.join(self.tmp, "dense.csv"))
        self.assertEqual(len(launches), 3)
        self.assertEqual(launches[0][2]["gpu__time_duration.sum"], "nsecond")

    def test_a_row_per_kernel_with_its_medians(self):
        rows = self.rows()
        self.assertEqual([r[:3] for r in rows], [["dense", "`factor_leaf_over_device (1)`", "2"],
                                                ["dense", "`factor_leaf_over_device (2)`", "1"],
                                                ["fill", "`fill_flat`", "1"]])
        first, second, fill = rows
        self.assertEqual(first[3], "5.0 us")  # median of 4 and 6 us
        self.assertEqual(first[5:8], ["4%", "10%", "5%"])
        self.assertEqual(first[8], "12% / 100%")
        self.assertEqual(first[9], "40")
        self.assertEqual(first[10], "256 x 1024 (0.25 waves)")
        self.assertEqual(first[11], "long scoreboard 12.0, barrier 3.5")  # "selected" issues, it does not stall
        self.assertEqual(second[3], "2.5 us")
        self.assertEqual(second[11], "barrier 6.5, long scoreboard 2.0")
        self.assertEqual(fill[3], "75.3 us")
        self.assertEqual(fill[4], "268 MB")

    def test_the_reading_follows_the_speed_of_light_rule(self):
        first, second, fill = self.rows()
        self.assertEqual(fill[12], "bound by DRAM bandwidth (85% of peak)")
        self.assertEqual(first[12], "latency-bound: 0.25 waves: part of the GPU idle, 12% occupancy, "
                                    "warps wait on long scoreboard")
        self.assertEqual(second[12], "latency-bound: 0.50 waves: part of the GPU idle, warps wait on barrier")

    def test_targets_without_launches_are_listed_with_why(self):
        self.assertIn("| lost | timed-out | stopped after 40 s |", self.md)
        self.assertIn("| unreached | not-reached | the profile step was stopped first |", self.md)

    def test_the_gpu_summary_carries_the_section(self):
        run = os.path.join(self.tmp, "run")
        shutil.copytree(os.path.join(SOURCE_DIR, "tests", "offline", "fixtures", "host-run"), run)
        shutil.copytree(self.tmp, os.path.join(run, "profile"), ignore=shutil.ignore_patterns("run"))
        out = run + ".md"
        r = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "gpu_summary.py"), run, "--output", out],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            summary = f.read()
        self.assertIn("## Which bound each kernel hits (Nsight Compute)", summary)
        self.assertIn("bound by DRAM bandwidth (85% of peak)", summary)
        shutil.rmtree(os.path.join(run, "profile"))
        r = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "gpu_summary.py"), run, "--output", out],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            self.assertIn("No profile: the profile step did not run", f.read())


def read_targets():
    with open(os.path.join(SOURCE_DIR, "scripts", "lib", "profile-targets.tsv")) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip() and not line.startswith("#")]


class Targets(unittest.TestCase):
    """scripts/lib/profile-targets.tsv against the sources and the benchmark binary."""

    def test_every_named_function_or_class_exists(self):
        sources = []
        for top in ("miniapp", "benchmarks"):
            for d, _, files in os.walk(os.path.join(SOURCE_DIR, top)):
                for name in files:
                    if name.endswith((".hpp", ".cpp")):
                        with open(os.path.join(d, name), errors="replace") as f:
                            sources.append(f.read())
        text = "\n".join(sources)
        for row in read_targets():
            self.assertEqual(len(row), 6, row)
            for name in row[2].split("|"):
                if name == "gemm":  # the vendor library's kernels (cuBLAS), not ours
                    continue
                self.assertRegex(text, rf"\b(?:void|bool|struct|class)\s+{name}\w*\b", f"{row[0]}: no {name} in the sources")

    def test_filters_of_benchmarks_registered_on_host_spaces_match(self):
        if not BENCHMARKS:
            self.skipTest("no benchmark binary given (MINIAPP_ENABLE_BENCHMARKS off)")
        if not os.access(BENCHMARKS, os.X_OK):  # configured but not built (the offline check builds without it)
            self.skipTest(f"the benchmark binary {BENCHMARKS} is not built")
        listed = subprocess.run([BENCHMARKS, "--benchmark_list_tests"], capture_output=True, text=True,
                                timeout=120).stdout.split()
        # the benchmarks registered on a host space (a CUDA build lists its device ones as well)
        host_bases = {name.split("/")[0] for name in listed if re.search(r"/(openmp|serial)/", name)}
        checked = 0
        for row in read_targets():
            base = row[1].lstrip("^").split("/")[0]
            if base not in host_bases:
                continue  # registered for device spaces only
            pattern = re.compile(row[1].replace("/cuda/", "/openmp/"))
            self.assertTrue(any(pattern.search(n) for n in listed), f"{row[0]}: '{row[1]}' matches no benchmark")
            checked += 1
        self.assertGreaterEqual(checked, 5)


# ptxas -v's lines for three kernels (nvcc 13.0's wording): a clean one, one whose array went to
# the stack, one that spills; the first name is a plain function's, so c++filt's output is known.
PTXAS_LOG = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z3fooi' for 'sm_90'
ptxas info    : Function properties for _Z3fooi
    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 124 registers, used 0 barriers, 16 bytes cumulative stack size
ptxas info    : Compiling entry function '_Z3bard' for 'sm_90'
ptxas info    : Function properties for _Z3bard
    264 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 126 registers, used 0 barriers, 264 bytes cumulative stack size
ptxas info    : Compiling entry function '_Z3bazf' for 'sm_90'
ptxas info    : Function properties for _Z3bazf
    72 bytes stack frame, 80 bytes spill stores, 76 bytes spill loads
ptxas info    : Used 64 registers, used 0 barriers, 72 bytes cumulative stack size
"""


class RegisterAudit(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.log = os.path.join(self.tmp, "ptxas.log")
        with open(self.log, "w") as f:
            f.write(PTXAS_LOG)

    def audit(self, *args):
        return subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "ptxas_audit.py"), *args],
                              capture_output=True, text=True, timeout=60)

    def test_the_table_of_a_log(self):
        r = self.audit(self.log)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 3, r.stdout)
        self.assertRegex(lines[0], r"^\s*124 regs\s+16 B stack\s+0/0\s+B spilled\s{3}foo\(int\)$")
        self.assertRegex(lines[1], r"^\s*126 regs\s+264 B stack\s+0/0\s+B spilled ! bar\(double\)$")
        self.assertRegex(lines[2], r"^\s*64 regs\s+72 B stack\s+80/76\s+B spilled ! baz\(float\)$")

    def test_the_filter_and_the_exit_codes(self):
        r = self.audit(self.log, r"ba[rz]\(")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([l.split()[-1] for l in r.stdout.splitlines()], ["bar(double)", "baz(float)"])
        r = self.audit(self.log, "qux")
        self.assertEqual(r.returncode, 1)
        self.assertIn("matches 'qux'", r.stderr)
        self.assertEqual(self.audit(self.log, "(").returncode, 2)
        self.assertEqual(self.audit(os.path.join(self.tmp, "absent.log")).returncode, 2)
        empty = os.path.join(self.tmp, "empty.log")
        open(empty, "w").close()
        r = self.audit(empty)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no kernel", r.stderr)

    def build(self, compiler):
        """A Ninja build directory whose one rule compiles unit.cpp with `compiler`."""
        build = os.path.join(self.tmp, "build")
        os.makedirs(build, exist_ok=True)
        source = os.path.join(self.tmp, "unit.cpp")
        open(source, "w").close()
        with open(os.path.join(build, "build.ninja"), "w") as f:
            f.write(f"rule cc\n  command = {compiler} -c $in -o $out\nbuild unit.o: cc {source}\n")
        return build, source

    def script(self, *args):
        return subprocess.run(["bash", os.path.join(SOURCE_DIR, "scripts", "ptxas-audit.sh"), *args],
                              capture_output=True, text=True, timeout=60)

    def test_the_script_compiles_the_unit_as_the_build_does(self):
        if shutil.which("ninja") is None:
            self.skipTest("ninja is not installed (apt-get install ninja-build)")
        fake = os.path.join(self.tmp, "fake-nvcc")
        with open(fake, "w") as f:
            f.write(f"#!/bin/sh\necho \"$*\" > {self.tmp}/args\ncat {self.log} >&2\n")
        os.chmod(fake, 0o755)
        build, source = self.build(fake)
        r = self.script(build, source, "bar")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"126 regs\s+264 B stack")
        with open(os.path.join(self.tmp, "args")) as f:
            args = f.read().split()
        self.assertIn("-Xptxas", args)
        self.assertNotIn("unit.o", args)  # its own object, not the build's
        self.assertFalse(os.path.exists(os.path.join(build, "unit.o")))
        plain, plain_source = self.build("g++")
        r = self.script(plain, plain_source)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a CUDA build", r.stderr)
        other = os.path.join(self.tmp, "other.cpp")
        open(other, "w").close()
        r = self.script(build, other)  # a source the build does not compile
        self.assertEqual(r.returncode, 2)
        self.assertIn("compiles no", r.stderr)
        self.assertEqual(self.script(build, os.path.join(self.tmp, "absent.cpp")).returncode, 2)
        self.assertEqual(self.script(self.tmp, source).returncode, 2)  # no build.ninja
        self.assertEqual(self.script(build).returncode, 2)


if __name__ == "__main__":
    SOURCE_DIR = os.path.abspath(sys.argv[1])
    BENCHMARKS = sys.argv[2] if len(sys.argv) > 2 else None
    unittest.main(argv=[sys.argv[0], "-v"])
