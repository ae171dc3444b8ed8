#!/usr/bin/env python3
"""`miniapp report` and `miniapp advise`, also callable directly:

  report.py report RESULTS_DIR... [-o OUT] [--assume-device NAME] [--link-GBps X]
  report.py advise RESULTS_DIR... [-o DIR] [--assume-device NAME] [--link-GBps X]

report: OUT/report.html (self-contained), the PNGs, plot-data.json (what each figure holds) and
advice.json; OUT defaults to RESULTS_DIR/report (the first one given).
advise: the advisor's text on stdout, advice.json into DIR (default: the first RESULTS_DIR).

Predictions: --assume-device NAME (a profile of devices.json), a described device
('peak64=GFLOPs,peak32=GFLOPs,bandwidth=GBps,link=GBps[,launch=us][,name=X]'), a profile file
(FILE.json, devices.json's shape), or none; without it, results measured on a GPU that a profile
`matches` get that profile's prediction next to the measurements.
  report.py device NAME   checks an --assume-device value and prints its figures (exit 0 or 2)

Exit codes: 0 done; 2 bad input (missing directory, no results.json, another schema, no
measurements, one size only for advise, unknown device); 3 runtime error (matplotlib missing,
output not writable).
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # also under `python3 -I`, which leaves the script's directory out
sys.dont_write_bytecode = True  # nothing written into the source tree or the install prefix

from miniapp_report import advisor, devices, results, text  # noqa: E402
DEVICES = os.path.join(HERE, "devices.json")


class Usage(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write(f"miniapp {self.prog.split()[-1]}: {message} (see --help)\n")
        sys.exit(2)


def write_atomically(path: str, content: str) -> None:
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(content)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def parse(argv):
    parser = Usage(prog="miniapp", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Usage)
    # `device NAME`: checks an --assume-device value and prints the figures it stands for (what
    # `miniapp advise DECK` asks before it spends a sweep on a value that would be refused after).
    sub.add_parser("device").add_argument("name")
    for name in ("report", "advise"):
        p = sub.add_parser(name)
        p.add_argument("directories", nargs="+", metavar="RESULTS_DIR")
        p.add_argument("-o", "--output")
        p.add_argument("--assume-device", metavar="NAME")
        p.add_argument("--link-GBps", type=float, metavar="X")
    args = parser.parse_args(argv)
    if getattr(args, "link_GBps", None) is not None and not args.link_GBps > 0:
        parser.error("--link-GBps must be a positive number")
    return args


def main(argv) -> int:
    args = parse(argv)
    if args.command == "device":
        return check_device(args.name)
    try:
        rs = results.load(args.directories)
        if args.assume_device:
            profile = assumed_profile(args.assume_device)
            source = f"--assume-device {args.assume_device}" if profile else ""
        else:
            profile, source = devices.profile_for_measured_gpu(devices.load_profiles(DEVICES), rs)
        advice = advisor.analyse(rs, profile, args.link_GBps, source)
        if args.command == "advise":
            advisor.require_size_sweep(advice)
    except results.InputError as e:
        sys.stderr.write(f"miniapp {args.command}: {e}\n")
        return 2
    command = "miniapp " + " ".join([args.command] + argv[1:])
    try:
        if args.command == "advise":
            return advise(args, rs, advice)
        return report(args, rs, advice, command)
    except OSError as e:
        sys.stderr.write(f"miniapp {args.command}: cannot write {e.filename or 'the output'}: {e.strerror}\n")
        return 3
    except Exception:  # a bug here must not pass for a verdict on the input: exit 3 with the traceback
        import traceback
        traceback.print_exc()
        sys.stderr.write(f"miniapp {args.command}: internal error (traceback above)\n")
        return 3


def assumed_profile(name: str):
    """The (key, profile) an --assume-device value stands for; None for `none` (no prediction)."""
    if name.lower() == "none":
        return None
    return devices.find_profile(devices.load_profiles(DEVICES), name)


def check_device(name: str) -> int:
    try:
        assumed = assumed_profile(name)
        if assumed:
            key, profile = assumed
            sys.stdout.write(f"{key}: {profile['name']}: {profile['peak_GFLOPs']['float64']:g}/"
                             f"{profile['peak_GFLOPs']['float32']:g} GFLOP/s float64/float32, "
                             f"{profile['memory_GBps']:g} GB/s memory, {profile['link_GBps']:g} GB/s link, "
                             f"{profile['launch_latency_us']:g} us per launch ({devices.figures(profile)})\n")
    except results.InputError as e:
        sys.stderr.write(f"miniapp advise: {e}\n")
        return 2
    return 0


def advise(args, rs, advice) -> int:
    out_dir = args.output or args.directories[0]
    os.makedirs(out_dir, exist_ok=True)
    sys.stdout.write(text.to_text(advice, rs))
    path = os.path.join(out_dir, "advice.json")
    write_atomically(path, json.dumps(advice.to_json(), indent=1) + "\n")
    sys.stderr.write(f"advice: {path}\n")
    return 0


def report(args, rs, advice, command) -> int:
    from miniapp_report import page, plots
    try:
        plots.pyplot()
    except plots.MissingMatplotlib as e:
        sys.stderr.write(f"miniapp report: {e}\n")
        return 3
    out_dir = args.output or os.path.join(args.directories[0], "report")
    os.makedirs(out_dir, exist_ok=True)
    figures = plots.draw_all(rs, advice, out_dir)
    write_atomically(os.path.join(out_dir, "plot-data.json"),
                     json.dumps({"schema": "kokkos-miniapp-plot-data/1",
                                 "figures": [f.to_json() for f in figures]}, indent=1) + "\n")
    write_atomically(os.path.join(out_dir, "advice.json"), json.dumps(advice.to_json(), indent=1) + "\n")
    write_atomically(os.path.join(out_dir, "report.html"), page.render(rs, advice, figures, out_dir, command))
    for r in advice.recommendations:
        sys.stdout.write(r["text"] + "\n")
    sys.stdout.write(f"report: {os.path.join(out_dir, 'report.html')} ({len(figures)} figures)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
