#!/usr/bin/env python3
"""Each prepared form of a GPU sitting against what it is measured against, as one
scripts/gpu-run.sh run measured them (Python 3, standard library only; gpu_summary.py writes the
table into each run's summary).

scripts/lib/benchmark-forms.tsv names, for each `open` family that is a prepared form, the
families it is measured against (its fourth column, comma-separated; `-` for the baselines and
the bound probes, which the targets' "Which bound" table reads). For each pair, at every
precision and arguments both ran at on the device space, the form's median beside the other's:
their ratio and whether the form was faster, slower or the same within the spread (the medians
differ by no more than the two benchmarks' standard deviations over their repetitions together;
gpu-run.sh runs three; where a benchmark ran once there is no spread and the row says so).
docs/results/README.md's "Prepared since" table says what each outcome decides; this table gives
the outcomes in one place.
A form none of whose pairs ran is a row that says so, so a short sitting shows what it left.
"""

import os

import issue_targets

FORMS_TSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "benchmark-forms.tsv")


def pairs(path=FORMS_TSV):
    """[(form, [family it is measured against, ...])] of the table's open rows that name any."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            cells = line.rstrip("\n").split("\t")
            if len(cells) >= 4 and cells[1] == "open" and cells[3] not in ("", "-"):
                out.append((cells[0], [a.strip() for a in cells[3].split(",") if a.strip()]))
    return out


def spreads(benchmarks, space):
    """{name without /manual_time: seconds} of the space's benchmarks' standard deviations over
    their repetitions (Google Benchmark's stddev aggregates)."""
    return {issue_targets.entry_name(b): issue_targets.entry_seconds(b) for _, b in benchmarks
            if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "stddev" and not b.get("error_occurred")
            and issue_targets.on_space(issue_targets.entry_name(b), space)}


def reading(form, base, spread):
    """Faster, slower or the same within the spread; spread is None where either ran once."""
    ratio = form.seconds / base.seconds
    if spread is not None and abs(form.seconds - base.seconds) <= spread:
        return "the same within the spread"
    word = f"faster ({1 / ratio:.2f}x)" if ratio < 1 else f"slower ({ratio:.2f}x)" if ratio > 1 else "the same"
    return word if spread is not None else word + ", one run each: no spread"


def rows_of(timed, spread, form_pairs):
    """One row per form, baseline, precision and arguments both ran at (timed: medians(), spread:
    spreads()); one row per form none of whose pairs ran."""
    rows = []
    for form, against in form_pairs:
        ran = sorted((t for t in timed.values() if t.family == form), key=lambda t: t.name)
        found = False
        for t in ran:
            for other in against:
                base = timed.get("/".join([other] + t.name.split("/")[1:]))
                if base is None:
                    continue
                found = True
                both = (spread[t.name] + spread[base.name]) if t.name in spread and base.name in spread else None
                rows.append((t.name, other, issue_targets.fmt_s(t.seconds), issue_targets.fmt_s(base.seconds),
                             f"{t.seconds / base.seconds:.2f}", reading(t, base, both)))
        if not found:
            what = "did not run" if not ran else "ran, but none of " + ", ".join(against) + " at its arguments"
            rows.append((form, ", ".join(against), "-", "-", "-", f"not measured against it in this run ({what})"))
    return rows


def section(benchmarks, space, md_table, path=FORMS_TSV):
    """The summary's section: every prepared form against its baselines, same run."""
    head = "## Prepared forms against what each is measured against"
    form_pairs = pairs(path)
    if not form_pairs:
        return f"{head}\n\n`{os.path.basename(path)}` names no prepared form with a baseline."
    rows = rows_of(issue_targets.medians(benchmarks, space), spreads(benchmarks, space), form_pairs)
    if all(r[2] == "-" for r in rows):
        return f"{head}\n\nNo prepared form of `{os.path.basename(path)}` ran beside its baseline on `{space}` in this run."
    faster = sum(r[5].startswith("faster") for r in rows)
    return (f"{head}\n\nFrom this run's benchmark medians of `{space}` (data resident): each prepared form of "
            f"`scripts/lib/benchmark-forms.tsv` beside the families it is measured against, at the same precision "
            f"and arguments (ratio = the form's time / the other's; the same where the medians differ by no more "
            f"than the two standard deviations of their repetitions together). {faster} of "
            f"{sum(r[2] != '-' for r in rows)} pairs measured were faster. What each outcome decides: "
            "docs/results/README.md, \"Prepared since\".\n\n"
            + md_table(["form", "against", "form's time", "its time", "ratio", "reading"], rows))


if __name__ == "__main__":
    raise SystemExit("prepared_forms.py is read by gpu_summary.py")
