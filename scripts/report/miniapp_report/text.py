"""The advice as `miniapp advise` prints it (and the report shows in full)."""

from typing import List

from .advisor import Advice
from .crossover import Crossover, sizes_text
from .devices import figures
from .group import GroupAdvice
from .prediction import amortising_intensity, model_check_lines
from .results import ResultSet


def _spread_out(sizes: List[int], most: int = 8) -> List[int]:
    """At most `most` of the sizes, evenly spread, the first and the last included."""
    if len(sizes) <= most:
        return sizes
    return sorted({sizes[round(i * (len(sizes) - 1) / (most - 1))] for i in range(most)})


def _s(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


def to_text(advice: Advice, rs: ResultSet) -> str:
    out = _header(advice, rs)
    for g in advice.groups:
        out += _measured(g, advice) + _amortisation(g) + _pinned(g) + _prediction(g)
    if advice.notes:
        out += ["", "Notes:"] + ["  " + n for n in advice.notes]
    return "\n".join(out) + "\n"


def _header(advice: Advice, rs: ResultSet) -> List[str]:
    def known(value):
        return "?" if value is None else value
    hosts = sorted({(known(s.provenance.hostname), known(s.provenance.cpu_model)) for s in rs.sources})
    out = ["miniapp advise: " + ", ".join(sorted({s.directory for s in rs.sources}))]
    out += [f"  measured on {h} ({cpu})" for h, cpu in hosts]
    out += ["", "Recommendation (fastest measured configuration per size; measurements only):"]
    out += ["  " + r["text"] for r in advice.recommendations]
    out += ["", f"Link bandwidth used: {advice.link.gbps:.4g} GB/s ({advice.link.source})"]
    if advice.profile and advice.profile_source:
        out.append(f"Predictions for {advice.profile[1]['name']}: {advice.profile_source}")
    out.append("Seed 003's worked example: 15 GB/s link, 1 TFLOP/s device, 1 GFLOP/s host, float64 values: copies pay "
               f"from {amortising_intensity(8, 15e9, 1e9, 1e12):.2f} flops per transferred value")
    return out


def _measured(g: GroupAdvice, advice: Advice) -> List[str]:
    plural = "s" if len(g.sizes) != 1 else ""
    out = ["", f"== {g.label} ({len(g.sizes)} size{plural}: n = {sizes_text(g.sizes, g.sizes)})"]
    if g.failed:
        out.append(f"  left out (verification failed): {'; '.join(g.failed)}")
    shown = _spread_out(sorted(g.best_host))
    more = "" if len(shown) == len(g.best_host) else f" ({len(shown)} of {len(g.best_host)} sizes; all in advice.json)"
    host = ", ".join(f"n={n}: {g.best_host[n][1]} {_s(g.best_host[n][0])}" for n in shown)
    if host:
        out.append(f"  best host per size{more}: {host}")
    for space, pols in sorted(g.device.items()):
        for pol, ts in sorted(pols.items()):
            out.append(f"  {space} {pol}: " + ", ".join(f"n={n}: {_s(ts[n])}" for n in _spread_out(sorted(ts))))
    if not g.device:
        out.append("  no device space measured: the crossover against a device cannot be measured here"
                   + (" (see the prediction below)" if advice.profile else
                      " (--assume-device H100|A100|MI250X predicts one)"))
    out += ["  " + c.text() for c in g.crossovers]
    out += ["  " + line for line in g.thread_notes + g.cores_matching_device]
    return out


def _amortisation(g: GroupAdvice) -> List[str]:
    a = g.amortisation
    if not a:
        return []
    k_star = a["amortising_flops_per_value"]
    k = a["workload_flops_per_value"]
    dev = "inf" if a["device_GFLOPs"] is None else f"{a['device_GFLOPs']:.4g}"
    out = [f"  transfers (seed 003) at n = {a['size']}: {a['value_bytes']}-byte values, link {a['link_GBps']:.4g} GB/s,"
           f" host {a['host_GFLOPs']:.4g} GFLOP/s ({a['host']}), device {dev} GFLOP/s ({a['device_source']})"]
    if k_star is None:
        out.append("    the device computes no faster than the host: copying every iteration never pays")
        return out
    verdict = "" if k is None else (
        f"; this workload does {k:.4g} flops per transferred value "
        f"({a['flops_per_iteration']:.4g} flops over {a['transfer_bytes_per_iteration']:.4g} bytes, "
        f"{a['transfer_bytes_source']}): " +
        (("copies amortise" if a["amortises"] else "copies do not amortise; keep the data resident")
         if a["device_GFLOPs"] is not None else
         ("copies could pay on a device fast enough" if a["amortises"] else
          "copies cannot pay even on an infinitely fast device; keep the data resident")))
    out.append(f"    copies pay from k* = {k_star:.4g} flops per transferred value{verdict}")
    return out


def _pinned(g: GroupAdvice) -> List[str]:
    out = []
    for pp in g.pinned:
        pageable = ""
        if pp["pageable_to_device_GBps"] and pp["pageable_to_host_GBps"]:
            pageable = (f"; the measured copies went through pageable mirrors, probed at "
                        f"{pp['pageable_to_device_GBps']:.4g} / {pp['pageable_to_host_GBps']:.4g} GB/s")
        out.append(f"  PREDICTION, {pp['space']} copying every iteration through pinned host memory (not a measurement): "
                   f"the measured copy-every-iteration times with their copies at the pinned link that the calibration "
                   f"probe measured, {pp['pinned_to_device_GBps']:.4g} GB/s to the device and "
                   f"{pp['pinned_to_host_GBps']:.4g} GB/s back" + pageable)
        cross = Crossover(**pp["crossover"])
        keep = set(_spread_out([r["size"] for r in pp["rows"]]))
        keep.update(n for n in (cross.last_losing, cross.first_winning) if n is not None)
        out.append("    " + ", ".join(f"n={r['size']}: measured {_s(r['measured_s'])} (copies {_s(r['measured_copies_s'])}), "
                                      f"predicted {_s(r['predicted_s'])}"
                                      + (f", measured through pinned mirrors {_s(r['measured_pinned_s'])}"
                                         if r.get("measured_pinned_s") else "")
                                      for r in pp["rows"] if r["size"] in keep))
        out.append("    " + cross.text())
    return out


def _prediction(g: GroupAdvice) -> List[str]:
    pr = g.prediction
    if not pr:
        return []
    prof = pr["profile"]
    rows = pr["rows"]
    sources = ["launches: " + "/".join(sorted({r["launches_source"] for r in rows})),
               "bytes copied: " + "/".join(sorted({r["transfer_bytes_source"] for r in rows}))]
    out = [f"  PREDICTION for {prof['name']} (not a measurement): roofline at the {figures(prof)} "
           f"{prof['peak_GFLOPs'][g.precision]:.4g} GFLOP/s {g.precision} and {prof['memory_GBps']:.4g} GB/s, "
           f"link {pr['link_GBps']:.4g} GB/s, {prof['launch_latency_us']} us per launch; "
           + "; ".join(sources)]
    keep = set(_spread_out([r["size"] for r in rows]))
    for c in pr["crossovers"]:
        keep.update(n for n in (c["last_losing"], c["first_winning"]) if n is not None)
    if len(keep) < len(rows):
        out.append(f"    ({len(keep)} of {len(rows)} sizes shown, those around the crossings included; all in advice.json)")
    for r in (r for r in rows if r["size"] in keep):
        # The device's own measurements at this size, whichever policies were run, so the
        # model can be judged (a sweep may have measured only copy-every-iteration).
        seen = [f"{label} {_s(r[key])}" for label, key in (("resident", "measured_resident_s"),
                                                            ("copying", "measured_copy_s"))
                if r[key] is not None]
        measured = "; measured on the device: " + ", ".join(seen) if seen else ""
        out.append(f"    n={r['size']}: predicted resident {_s(r['resident_s'])}, copying every iteration "
                   f"{_s(r['copy_every_iteration_s'])} ({r['transfer_bytes']:.4g} B, {r['launches']} launch(es)); "
                   f"measured best host {_s(r['best_host_s'])} ({r['best_host']}){measured}")
    out += ["    " + Crossover(**c).text() for c in pr["crossovers"]]
    out += [f"    model check, measured / predicted: {line}" for line in model_check_lines(pr["model_check"])]
    return out
