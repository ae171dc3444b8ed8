"""report.html: one self-contained page (PNGs inlined as data: URIs, styles inline, no scripts,
no external references), so it opens anywhere after `scp`."""

import base64
import datetime
import html
import os
from typing import List

from .advisor import Advice
from .crossover import Crossover
from .plots import Figure
from .prediction import model_check_lines
from .results import ResultSet
from .text import to_text

STYLE = """
body { font-family: DejaVu Sans, Helvetica, Arial, sans-serif; margin: 1.5em auto; max-width: 1280px;
       color: #222; line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.6em; border-bottom: 2px solid #1f77b4; padding-bottom: .2em; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; }
table { border-collapse: collapse; font-size: .8em; margin: .5em 0; }
th, td { border: 1px solid #ccc; padding: .15em .5em; text-align: right; vertical-align: top; }
th { background: #f0f0f0; } td.l, th.l { text-align: left; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: .85em; color: #555; }
.answer { background: #eef6ee; border-left: 4px solid #2ca02c; padding: .5em 1em; }
.answer li { margin: .3em 0; }
.missing { background: #fff6e0; border-left: 4px solid #ff7f0e; padding: .5em 1em; }
.prediction { background: #f3eefa; border-left: 4px solid #9467bd; padding: .5em 1em; }
pre { background: #f7f7f7; padding: .6em; overflow-x: auto; font-size: .78em; }
"""


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _img(out_dir: str, figure: Figure) -> str:
    with open(os.path.join(out_dir, figure.file), "rb") as f:
        data = base64.b64encode(f.read()).decode("ascii")
    return (f'<figure id="{_e(figure.file[:-4])}"><img src="data:image/png;base64,{data}" alt="{_e(figure.title)}">'
            f"<figcaption>{_e(figure.title)}. {_e(figure.caption)}</figcaption></figure>")


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.4g}"


def _medians_table(rs: ResultSet, case: str) -> str:
    rows = sorted((p for p in rs.points if p.case == case),
                  key=lambda p: (p.variant, p.precision, p.generate, p.size, not p.host, p.space, p.threads or 0,
                                 p.policy))
    out = ['<table><tr><th class="l">variant</th><th class="l">precision</th><th>size</th><th class="l">space</th>'
           '<th class="l">policy</th><th>to device ms</th><th>compute ms</th><th>to host ms</th><th>total ms</th>'
           '<th>GFLOP/s</th><th>GB/s</th><th class="l">verified</th></tr>']
    for p in rows:
        verified = "unchecked" if not p.checked else ("pass" if p.passed else "FAIL")
        out.append(f'<tr><td class="l">{_e(p.variant)}</td><td class="l">{_e(p.precision)}</td><td>{p.size}</td>'
                   f'<td class="l">{_e(p.space_label)}</td><td class="l">{_e(p.policy)}</td>'
                   f"<td>{_ms(p.to_device)}</td><td>{_ms(p.compute)}</td><td>{_ms(p.to_host)}</td>"
                   f"<td>{_ms(p.total)}</td><td>{p.gflops:.4g}</td><td>{p.gbps:.4g}</td>"
                   f'<td class="l">{verified}</td></tr>')
    out.append("</table>")
    return "\n".join(out)


def _calibration_table(rs: ResultSet) -> str:
    def num(v, digits=4):
        return f"{v:.{digits}g}" if isinstance(v, (int, float)) else "-"
    rows = ['<table><tr><th class="l">space</th><th>triad GB/s</th><th>copy GB/s</th><th>deep_copy GB/s</th><th>float64 GEMM GFLOP/s</th>'
            "<th>float32 GEMM GFLOP/s</th><th>launch us</th><th>link h2d GB/s (pageable / pinned)</th>"
            "<th>link d2h GB/s (pageable / pinned)</th><th class=\"l\">measured</th></tr>"]
    for space, c in sorted(rs.calibration.items()):
        bw, gemm, link = c.bandwidth_GBps, c.gemm_GFLOPs, c.link_GBps
        h2d = f"{num(link.get('pageable_to_device'))} / {num(link.get('pinned_to_device'))}" if link else "-"
        d2h = f"{num(link.get('pageable_to_host'))} / {num(link.get('pinned_to_host'))}" if link else "-"
        rows.append(f'<tr><td class="l">{_e(space)}</td><td>{num(bw.get("triad"))}</td><td>{num(bw.get("copy"))}</td>'
                    f'<td>{num(bw.get("vendor_copy"))}</td><td>{num(gemm.get("float64"))}</td><td>{num(gemm.get("float32"))}</td>'
                    f'<td>{num(c.launch_latency_us, 3)}</td><td>{h2d}</td><td>{d2h}</td>'
                    f'<td class="l">{_e(c.measured_at)}</td></tr>')
    rows.append("</table>")
    return ('<p>Calibration (the probe each run makes before measuring, cached in its output directory as '
            "calibration.json): the roofs below. deep_copy is the same copy through Kokkos::deep_copy, the vendor's "
            "device-to-device copy on a GPU; the memory roof is the highest of the three stream rates. The compute roof is the vendor GEMM rate reached through Kokkos "
            "Kernels, not the data sheet's peak, so a kernel can pass it.</p>" + "".join(rows))


def _provenance(rs: ResultSet) -> str:
    out = []
    for s in rs.sources:
        p, deck, gpu = s.provenance, s.deck, s.provenance.gpu
        gpu_text = "none (no GPU backend compiled in)" if not gpu else \
            f"{gpu.name} ({gpu.space} device {gpu.device_id}, {gpu.pci_bus_id})"
        fields = [
            ("results", s.path), ("status", s.status), ("hostname", p.hostname),
            ("CPU", p.cpu_model), ("GPU", gpu_text),
            ("host threads", f"{p.host_threads} ({p.host_threads_source}), {p.cpus_allowed} CPUs allowed"),
            ("miniapp", f"{p.miniapp_version} (git {p.git_commit})"), ("compiler", p.compiler),
            ("Kokkos", p.kokkos_version), ("Kokkos Kernels", p.kokkos_kernels_version),
            ("spaces compiled", ", ".join(p.spaces_compiled)),
            ("command line", " ".join(p.command_line)),
            ("environment", ", ".join(f"{k}={v}" for k, v in sorted(p.environment.items()))),
            ("started / finished", f"{p.started} / {p.finished}"),
            ("deck", f"{deck.file}: {deck.title}"),
        ]
        out.append(f"<h3>{_e(s.path)}</h3><table>")
        out += [f'<tr><th class="l">{_e(k)}</th><td class="l">{_e(v)}</td></tr>' for k, v in fields]
        out.append("</table>")
        if deck.text:
            out.append(f"<details><summary>deck as read</summary><pre>{_e(deck.text)}</pre></details>")
    return "\n".join(out)


def _case_table(advice: Advice, case: str) -> str:
    """Per variant and precision: what the advisor found, measured and predicted apart."""
    predicted = advice.profile is not None
    out = ['<table><tr><th class="l">variant</th><th class="l">precision</th><th class="l">crossovers (measured)</th>'
           '<th class="l">threads</th><th class="l">transfers (seed 003)</th>'
           + (f'<th class="l">PREDICTION for {_e(advice.profile[0])} (not measured)</th>' if predicted else "")
           + "</tr>"]
    for g in advice.groups:
        if g.case != case:
            continue
        crossings = "<br>".join(_e(c.text()) for c in g.crossovers) or "nothing to compare"
        if g.failed:
            crossings += "<br>left out, verification failed: " + _e("; ".join(g.failed))
        threads = "<br>".join(_e(t) for t in g.thread_notes + g.cores_matching_device) or "-"
        a = g.amortisation
        transfers = "-"
        if a and a["amortising_flops_per_value"] is None:
            transfers = "the device computes no faster than the host: copying every iteration never pays"
        elif a and a["workload_flops_per_value"] is not None:
            verdict = ("amortise" if a["amortises"] else "do not amortise") if a["device_GFLOPs"] is not None else \
                ("could amortise on a fast enough device" if a["amortises"] else
                 "cannot amortise even on an infinitely fast device")
            transfers = _e(f"copies pay from {a['amortising_flops_per_value']:.3g} flops per transferred value; "
                           f"this workload does {a['workload_flops_per_value']:.3g} at n = {a['size']}: they {verdict} "
                           f"(link {a['link_GBps']:.3g} GB/s: {a['link_source']}; host {a['host_GFLOPs']:.3g} "
                           f"GFLOP/s, {a['host']}; device: {a['device_source']}; bytes: {a['transfer_bytes_source']})")
        row = (f'<tr><td class="l">{_e(g.variant)}</td><td class="l">{_e(g.precision)}</td>'
               f'<td class="l">{crossings}</td><td class="l">{threads}</td><td class="l">{transfers}</td>')
        if predicted:
            pred = "<br>".join([_e(Crossover(**c).text()) for c in g.prediction["crossovers"]] +
                               [_e("measured / predicted: " + line)
                                for line in model_check_lines(g.prediction["model_check"])]) if g.prediction else "-"
            row += f'<td class="l prediction">{pred}</td>'
        out.append(row + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def render(rs: ResultSet, advice: Advice, figures: List[Figure], out_dir: str, command: str) -> str:
    cases = []
    for p in rs.points:
        if p.case not in cases:
            cases.append(p.case)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")
    h = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
         "<title>miniapp report</title>", f"<style>{STYLE}</style></head><body>",
         "<h1>miniapp report: is a GPU (or more CPU cores) worth it?</h1>",
         f"<p>Made {now} by <code>{_e(command)}</code> from "
         + ", ".join(f"<code>{_e(s.path)}</code>" for s in rs.sources) + ".</p>",
         "<p>Cases: " + ", ".join(f'<a href="#case-{_e(c)}">{_e(c)}</a>' for c in cases) + "</p>"]

    h.append('<h2 id="answer">The answer</h2><div class="answer"><p>Fastest measured configuration per size '
             "(the advisor, measurements only):</p><ul>")
    h += [f"<li>{_e(r['text'])}</li>" for r in advice.recommendations]
    h.append("</ul></div>")
    if advice.profile:
        h.append(f'<div class="prediction"><p>Predictions for {_e(advice.profile[1]["name"])} (assumed, not '
                 f"measured; {_e(advice.profile_source)}) are in the advisor's full text below and in each case's "
                 "section, with measured / predicted wherever the device was measured too.</p></div>")

    for case in cases:
        h.append(f'<h2 id="case-{_e(case)}">Case {_e(case)}</h2>')
        for r in advice.recommendations:
            if r["case"] == case:
                h.append(f'<p class="answer">{_e(r["text"])}</p>')
        h.append(_case_table(advice, case))
        for f in figures:
            if f.case == case:
                h.append(_img(out_dir, f))
        h.append(f"<details><summary>medians of {_e(case)} (ms per iteration)</summary>{_medians_table(rs, case)}"
                 "</details>")

    h.append('<h2 id="roofline">Roofline</h2>')
    roofs = [f for f in figures if f.kind == "roofline"]
    if rs.calibration:
        h.append(_calibration_table(rs))
    if roofs:
        h += [_img(out_dir, f) for f in roofs]
    else:
        h.append('<p class="missing">No calibration data in these results, so no roofline: they were made with '
                 "<code>--no-calibrate</code> or by an older mini-app. Without that option, a run first probes each "
                 "space (memory bandwidth, vendor GEMM rate, launch latency, link bandwidth) and every measurement "
                 "is placed under those roofs here.</p>")

    h.append('<h2 id="advisor">The advisor, in full</h2>')
    h.append(f"<pre>{_e(to_text(advice, rs))}</pre>")
    h.append('<h2 id="provenance">Provenance</h2>')
    h.append(_provenance(rs))
    h.append("</body></html>")
    return "\n".join(h) + "\n"
