#!/usr/bin/env python3
"""The GPU targets of issue 27 as one scripts/gpu-run.sh run measured them (Python 3, standard
library only; gpu_summary.py writes the table into each run's summary).

Each target is read from the run's benchmark medians of the device space (data resident) and its
calibration probe, against the bound the issue names:

- streaming kernels (`x ** y`, `x * y`, float32, the largest size; the probe's own copy and
  triad): at least 85% of the vendor's device-to-device copy (the probe's `vendor_copy`; where it
  is missing, its best stream rate for `x ** y` and `x * y`, and the row says so);
- the probe's copy and triad: the triad's time at least 1.5 / 1.15 of the copy's (it moves 1.5x
  the bytes; the issue's 15% tolerance), from their rates;
- distance direct and symmetric (float32, each size with a fill benchmark): at least 70% of the
  fastest fill of the same output (time of the fill / time of the kernel); tiled at least as fast
  as direct (the chunked deck's share is in its deck table, not here);
- regression fused at 10^6 x 51, each precision: at least 70% of one read of X
  (regression-stream-read, the same rows) and faster than `blas`;
- batched-thread (each order and batch benchmarked): at least 50% of the bytes floor (the
  benchmark's bytes at the probe's best stream rate) and no slower than KokkosBatched;
- dense-blocked within 3x of dense-vendor, each order both were benchmarked at.

Beside each workload's kernel, the fastest prepared form of the same benchmark family at the same
arguments (the `<name>-<form>` benchmarks; a dense form whose resident leaves were given up is
left out), so that a sitting shows which form would meet a target. A target whose benchmarks did
not run is a row that says so.

Which bound each kernel hits, from times alone (where a machine gives no hardware counters): each
bound probe (`<kernel>-compute`: the kernel's work with nothing written) beside its kernel and the
time the kernel's bytes take at the probe's best stream rate. A kernel within 15% of the larger
of the two overlaps them and is bound by that one; one taking 85% of their sum or more does them
one after the other.
"""

UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
STREAM_SHARE, DISTANCE_SHARE, READ_SHARE, BYTES_SHARE, VENDOR_RATIO = 0.85, 0.70, 0.70, 0.50, 3.0
TRIAD_BYTES, TOLERANCE = 1.5, 1.15
# Bound probes: a kernel within OVERLAPPED of the larger of its work alone and its bytes alone
# overlaps them; one taking IN_TURN of their sum or more does one after the other.
PROBE, OVERLAPPED, IN_TURN = "-compute", 1.15, 0.85


class Timed:
    """A benchmark's median: name (family/precision/space/args...), seconds, GB/s (or None)."""

    def __init__(self, name, seconds, gbps, solved_again):
        self.name, self.seconds, self.gbps, self.solved_again = name, seconds, gbps, solved_again
        parts = name.split("/")
        self.family, self.precision, self.args = parts[0], parts[1], tuple(parts[3:])


def is_median(b):
    """Whether a Google Benchmark entry is what a summary reads: the median aggregate of
    repetitions, or a plain run (a benchmark run once has no aggregates)."""
    return not (b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median")


def entry_name(b):
    """A Google Benchmark entry's run name without /manual_time: family/precision/space/args..."""
    name = b.get("run_name", b.get("name", ""))
    return name[:-len("/manual_time")] if name.endswith("/manual_time") else name


def entry_seconds(b):
    """A Google Benchmark entry's real time in seconds."""
    return b.get("real_time", 0) * UNIT_SECONDS.get(b.get("time_unit", "ns"), 0)


def on_space(name, space):
    """Whether an entry_name() is a benchmark of space."""
    parts = name.split("/")
    return len(parts) >= 3 and parts[2] == space


def medians(benchmarks, space):
    """{name without /manual_time: Timed} of the space's benchmark medians (or only runs)."""
    out = {}
    for _, b in benchmarks:
        if b.get("error_occurred") or not is_median(b):
            continue
        name, seconds = entry_name(b), entry_seconds(b)
        if not on_space(name, space) or not seconds > 0:
            continue
        gbps = b["GB/s"] / 1e9 if b.get("GB/s") else None
        out[name] = Timed(name, seconds, gbps, b.get("solved_again", 0))
    return out


def fmt_s(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def verdict(ok):
    return "met" if ok else "not met"


def best_form(timed, family, precision, args, allow=lambda t: True):
    """The fastest benchmark of family's forms (family-*) at the same precision and arguments; a
    bound probe (family-*-compute) computes no result and is no form."""
    forms = [t for t in timed.values() if t.family.startswith(family + "-") and t.precision == precision
             and t.args == args and not t.family.endswith(PROBE) and allow(t)]
    return min(forms, key=lambda t: t.seconds, default=None)


def missing(target, what):
    return (target, f"not measured in this run ({what})", "-", "-", "-")


def largest(timed, family, precision):
    """The benchmark of family at precision with the largest first argument."""
    found = [t for t in timed.values() if t.family == family and t.precision == precision and t.args]
    return max(found, key=lambda t: int(t.args[0]) if t.args[0].isdigit() else -1, default=None)


def count(text):
    """A count as the issue writes it: 100000 -> 10^5; others as they are."""
    return f"10^{len(text) - 1}" if text.isdigit() and text.startswith("1") and set(text[1:]) <= {"0"} \
        and len(text) > 2 else text


def streaming_rows(timed, cal):
    rates = cal.stream_rates if cal else {}
    if "vendor_copy" in rates:
        ref, ref_name = rates["vendor_copy"], "the vendor's device-to-device copy"
    elif rates:
        ref = max(rates.values())
        ref_name = f"the probe's {max(rates, key=rates.get).replace('_', ' ')} (no vendor copy measured)"
    else:
        ref, ref_name = None, None
    rows = []
    for label, family in (("`x ** y` float32", "matrix-elementwise-power"), ("`x * y` float32",
                                                                             "matrix-elementwise-multiply")):
        target = f"{label} >= {STREAM_SHARE:.0%} of the vendor copy"
        t = largest(timed, family, "float32")
        if t is None or t.gbps is None or ref is None:
            rows.append(missing(target, f"{family}" if ref else "no calibration probe of the device"))
            continue
        measured = f"{t.gbps:.0f} GB/s ({t.name})"
        best = best_form(timed, family, "float32", t.args)
        if best is not None and best.gbps is not None and best.gbps > t.gbps:
            measured += f"; fastest form {best.gbps:.0f} GB/s ({best.name}, {best.gbps / ref:.0%})"
        rows.append((target, measured, f"{ref:.0f} GB/s, {ref_name}", f"{t.gbps / ref:.0%}",
                     verdict(t.gbps / ref >= STREAM_SHARE)))
    for kernel in ("copy", "triad"):
        if kernel in rates and "vendor_copy" in rates:
            share = rates[kernel] / rates["vendor_copy"]
            rows.append((f"the probe's {kernel} >= {STREAM_SHARE:.0%} of the vendor copy", f"{rates[kernel]:.0f} GB/s",
                         f"{ref:.0f} GB/s, {ref_name}", f"{share:.0%}", verdict(share >= STREAM_SHARE)))
    target = "the probe's copy and triad times grow with their bytes"
    if "copy" in rates and "triad" in rates:
        time_ratio = TRIAD_BYTES * rates["copy"] / rates["triad"]
        rows.append((target, f"triad {rates['triad']:.0f} GB/s, copy {rates['copy']:.0f} GB/s: the triad takes "
                     f"{time_ratio:.2f}x the copy's time", f"{TRIAD_BYTES}x the bytes, within {TOLERANCE - 1:.0%}",
                     f"{time_ratio / TRIAD_BYTES:.0%}", verdict(time_ratio >= TRIAD_BYTES / TOLERANCE)))
    else:
        rows.append(missing(target, "no copy and triad in the calibration probe"))
    return rows


def share_row(target, kernel, bound, bound_name, share_wanted, best=None):
    """kernel against a time bound: the bound's time over the kernel's, and the best form's."""
    share = bound.seconds / kernel.seconds
    measured = f"{fmt_s(kernel.seconds)} ({kernel.name})"
    if best is not None and best.seconds < kernel.seconds:
        measured += f"; fastest form {fmt_s(best.seconds)} ({best.name}, {bound.seconds / best.seconds:.0%})"
    return (target, measured, f"{fmt_s(bound.seconds)}, {bound_name} ({bound.name})", f"{share:.0%}",
            verdict(share >= share_wanted))


def same_result(t):
    """A form that computes the workload's result (distance-direct-squared leaves out the roots)."""
    return not t.family.endswith("-squared")


def distance_rows(timed):
    rows = []
    fills = [t for t in timed.values() if t.family.startswith("fill") and t.precision == "float32"]
    for variant in ("direct", "symmetric"):
        family = f"distance-{variant}"
        target = f"distance {variant} >= {DISTANCE_SHARE:.0%} of writing the output"
        for d in sorted((t for t in timed.values() if t.family == family and t.precision == "float32"),
                        key=lambda t: int(t.args[0])):
            same = [f for f in fills if f.args[:1] == d.args[:1]]
            if same:
                rows.append(share_row(f"{target}, n = {d.args[0]}", d, min(same, key=lambda t: t.seconds),
                                      "the fastest fill", DISTANCE_SHARE,
                                      best_form(timed, family, "float32", d.args, same_result)))
        if not any(r[0].startswith(target) for r in rows):
            rows.append(missing(target, f"{family} float32 beside a fill of its size"))
    directs = sorted((t for t in timed.values() if t.family == "distance-direct" and t.precision == "float32"),
                     key=lambda t: int(t.args[0]))
    for d in directs:
        tiled = timed.get(d.name.replace("distance-direct/", "distance-tiled/", 1))
        if tiled:
            rows.append(share_row(f"distance tiled at least as fast as direct, n = {d.args[0]}", tiled, d, "direct",
                                  1.0, best_form(timed, "distance-tiled", "float32", tiled.args)))
    return rows


def regression_rows(timed, space):
    rows = []
    for precision in ("float64", "float32"):
        args = f"{precision}/{space}/1000000/50/1"
        fused, read = timed.get(f"regression-fused/{args}"), timed.get(f"regression-stream-read/{args}")
        blas = timed.get(f"regression-blas/{args}")
        target = f"regression fused {precision}, 10^6 x 51: >= {READ_SHARE:.0%} of one read of X"
        if fused is None or read is None:
            rows.append(missing(target, f"regression-fused and regression-stream-read at {args}"))
            continue
        rows.append(share_row(target, fused, read, "one read of X", READ_SHARE,
                              best_form(timed, "regression-fused", precision, fused.args)))
        if blas is not None:
            rows.append((f"regression fused {precision}, 10^6 x 51: faster than blas", f"{fmt_s(fused.seconds)}",
                         f"{fmt_s(blas.seconds)} ({blas.name})", f"{blas.seconds / fused.seconds:.2f}x",
                         verdict(fused.seconds < blas.seconds)))
    return rows


def batched_rows(timed, cal):
    rows = []
    floor_rate = cal.stream_GBps if cal else 0
    for t in sorted((t for t in timed.values() if t.family == "solver-batched-thread"),
                    key=lambda t: tuple(int(a) for a in t.args[:2])):
        n, systems = t.args[0], t.args[1]
        label = f"batched {n} x {n} x {count(systems)}"
        if t.gbps and floor_rate:
            best = best_form(timed, "solver-batched-thread", t.precision, t.args[:2])
            measured = f"{fmt_s(t.seconds)}, {t.gbps:.0f} GB/s ({t.name})"
            if best is not None and best.seconds < t.seconds and best.gbps:
                measured += f"; fastest form {fmt_s(best.seconds)} ({best.name}, {best.gbps / floor_rate:.0%})"
            rows.append((f"{label}: >= {BYTES_SHARE:.0%} of the bytes floor", measured,
                         f"{floor_rate:.0f} GB/s, the probe's best stream rate", f"{t.gbps / floor_rate:.0%}",
                         verdict(t.gbps / floor_rate >= BYTES_SHARE)))
        kk = timed.get(t.name.replace("solver-batched-thread/", "solver-batched-kokkos-kernels/", 1))
        if kk is not None:
            rows.append((f"{label}: no slower than KokkosBatched", fmt_s(t.seconds), f"{fmt_s(kk.seconds)} ({kk.name})",
                         f"{kk.seconds / t.seconds:.2f}x", verdict(t.seconds <= kk.seconds)))
    return rows or [missing("batched: bytes floor and KokkosBatched", "solver-batched-thread")]


def dense_rows(timed):
    rows = []
    for vendor in sorted((t for t in timed.values() if t.family == "solver-dense-vendor"),
                         key=lambda t: int(t.args[0])):
        blocked = timed.get(vendor.name.replace("solver-dense-vendor/", "solver-dense-blocked/", 1))
        if blocked is None:
            continue
        ratio = blocked.seconds / vendor.seconds
        measured = f"{fmt_s(blocked.seconds)} ({blocked.name})"
        best = best_form(timed, "solver-dense-blocked", "float64", blocked.args, lambda t: not t.solved_again)
        if best is not None and best.seconds < blocked.seconds:
            measured += f"; fastest form {fmt_s(best.seconds)} ({best.name}, {best.seconds / vendor.seconds:.2f}x)"
        rows.append((f"dense-blocked within {VENDOR_RATIO:g}x of dense-vendor, n = {vendor.args[0]}", measured,
                     f"{fmt_s(vendor.seconds)} ({vendor.name})", f"{ratio:.2f}x", verdict(ratio <= VENDOR_RATIO)))
    return rows or [missing("dense-blocked within 3x of dense-vendor", "solver-dense-blocked beside solver-dense-vendor")]


def probe_rows(timed, cal):
    """Each bound probe (a benchmark family ending in -compute: its kernel's work with no output
    written, benchmarks/bench_*.cpp) against its kernel (the same name without -compute) and the
    time the kernel's bytes take at the probe's best stream rate: which of the two bounds it."""
    rate = cal.stream_GBps if cal else 0
    rows = []
    for probe in sorted((t for t in timed.values() if t.family.endswith(PROBE)), key=lambda t: t.name):
        kernel = timed.get(probe.name.replace(probe.family + "/", probe.family[:-len(PROBE)] + "/", 1))
        if kernel is None:
            continue
        work = probe.seconds / kernel.seconds
        if not (kernel.gbps and rate):
            rows.append((kernel.name, fmt_s(kernel.seconds), f"{fmt_s(probe.seconds)} ({work:.0%})", "-",
                         "no bytes or stream rate to set beside the work"))
            continue
        move = kernel.gbps / rate  # the bytes alone at the stream rate, as a share of the kernel's time
        if kernel.seconds <= OVERLAPPED * max(probe.seconds, kernel.seconds * move):
            reading = "overlapped: bound by its " + ("work" if work >= move else "bytes")
        elif work + move >= IN_TURN:
            reading = "work and bytes in turn, not overlapped"
        else:
            reading = "partly overlapped: neither the work nor the bytes alone takes its time"
        rows.append((kernel.name, fmt_s(kernel.seconds), f"{fmt_s(probe.seconds)} ({work:.0%})",
                     f"{fmt_s(kernel.seconds * move)} ({move:.0%}) at {rate:.0f} GB/s", reading))
    return rows


def rows_of(timed, space, cal):
    """The targets' rows from the space's medians (medians())."""
    return (streaming_rows(timed, cal) + distance_rows(timed) + regression_rows(timed, space) + batched_rows(timed, cal)
            + dense_rows(timed))


def section(benchmarks, space, cal, md_table):
    """The summary's section: one row per target, its measurement, bound, share and verdict."""
    head = "## Against issue 27's targets"
    timed = medians(benchmarks, space)
    rows = rows_of(timed, space, cal)
    if not any(r[4] != "-" for r in rows):
        return f"{head}\n\nNo benchmark of `{space}` that a target reads finished in this run."
    met = sum(r[4] == "met" for r in rows)
    measured = sum(r[4] != "-" for r in rows)
    text = (f"{head}\n\nFrom this run's benchmark medians of `{space}` (data resident) and its calibration probe: "
            f"{met} of {measured} measured targets met. Where a prepared form of the same benchmark was faster than "
            "the workload's kernel, it is named with its share.\n\n"
            + md_table(["target", "measured", "bound", "share", ""], rows))
    probes = probe_rows(timed, cal)
    if probes:
        text += ("\n\nWhich bound, from times alone (no hardware counters needed): each bound probe runs its kernel's "
                 "work with no output written; its time and the time the kernel's bytes take at the probe's best "
                 f"stream rate, as shares of the kernel's. Within {OVERLAPPED - 1:.0%} of the larger of the two: "
                 f"overlapped, bound by that one; {IN_TURN:.0%} of their sum or more: one after the other.\n\n"
                 + md_table(["kernel", "time", "work alone", "bytes alone", "reading"], probes))
    return text


if __name__ == "__main__":
    raise SystemExit("issue_targets.py is read by gpu_summary.py")
