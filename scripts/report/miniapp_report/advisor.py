"""The GPU-or-CPU advisor: from measured medians to crossover sizes and a recommendation.

Everything here is a pure function of a ResultSet (and, for predictions, a device profile), so the
report and `miniapp advise` print the same conclusions. Every number the advice rests on is kept
in the returned structures (and so in advice.json). The parts, one module each:

- crossover.py: the crossover rule (shared with scripts/gpu_summary.py);
- devices.py: device profiles (published, described, a file; the one matching the measured GPU);
- prediction.py: the link used, transfer amortisation (seed 003), predictions and their check;
- group.py: one group's advice (a case's variant at one precision, over its sizes);
- recommend.py: the fastest configuration per size of each case;
- text.py: the advice as `miniapp advise` prints it.

Definitions
- best host(n): the fastest host space at size n (Serial, OpenMP/Threads at each measured thread
  count); on a host space the copy policies alias, so one policy stands for the space
  (names.HOST_POLICY_ORDER).
- crossover of A over B: the smallest measured size from which A is faster than B at every larger
  measured size; between the last size where A loses and the first where it wins, the sizes where
  the two runtimes cross on a log-log plot (straight lines between measured points): the estimate.
- transfers amortise (seed 003): copying one value of s bytes over a link of L bytes/s costs s/L;
  computing k flops on it saves k (1/F_host - 1/F_device) seconds. Copies pay from
  k* = s / (L (1/F_host - 1/F_device)) flops per transferred value.
"""

from dataclasses import dataclass, asdict
from typing import Dict, List, Optional, Tuple

from .crossover import Crossover
from .group import GroupAdvice, analyse_group, groups_of
from .names import Policy
from .prediction import FASTER_THAN_PREDICTED, Link, choose_link
from .recommend import recommend, same_problem_families
from .results import Calibration, InputError, ResultSet


@dataclass
class Advice:
    link: Link
    profile: Optional[Tuple[str, dict]]
    groups: List[GroupAdvice]
    recommendations: List[dict]
    notes: List[str]
    calibration: Dict[str, Calibration]
    profile_source: str = ""
    model_check: Optional[dict] = None  # model_check_summary(groups), set once by analyse()

    def to_json(self) -> dict:
        def crossovers(g):
            return [dict(asdict(c), text=c.text()) for c in g.crossovers]
        return {
            "schema": "kokkos-miniapp-advice/1",
            "link": asdict(self.link),
            "assumed_device": None if not self.profile else {"name": self.profile[0], **self.profile[1]},
            "assumed_device_source": self.profile_source,
            "model_check": self.model_check,
            "calibration": "present" if self.calibration else "missing",
            "recommendations": self.recommendations,
            "groups": [{
                "case": g.case, "workload": g.workload, "variant": g.variant, "precision": g.precision,
                "generate": g.generate, "sizes": g.sizes, "failed_verification": g.failed,
                "best_host": {str(n): {"seconds": t, "space": s} for n, (t, s) in sorted(g.best_host.items())},
                "device": {sp: {pol: {str(n): t for n, t in sorted(ts.items())} for pol, ts in pols.items()}
                           for sp, pols in g.device.items()},
                "crossovers": crossovers(g),
                "threads": {sp: {str(n): {str(c): t for c, t in sorted(ts.items())} for n, ts in sorted(per.items())}
                            for sp, per in g.threads.items()},
                "thread_notes": g.thread_notes, "cores_matching_device": g.cores_matching_device,
                "amortisation": g.amortisation, "prediction": g.prediction, "pinned_copy_prediction": g.pinned,
            } for g in self.groups],
            "notes": self.notes,
        }


def model_check_summary(groups: List[GroupAdvice], device: str) -> Optional[dict]:
    """Measured over predicted, per policy, over every group and size where both exist."""
    checks = [dict(c, group=g.label) for g in groups if g.prediction for c in g.prediction["model_check"]]
    if not checks:
        return None
    summary = {"device": device}
    for policy in (Policy.ALL_RESIDENT, Policy.COPY_EVERY_ITERATION):
        mine = sorted((c for c in checks if c["policy"] == policy), key=lambda c: c["measured_over_predicted"])
        if mine:
            summary[policy] = {
                "points": len(mine), "groups": len({c["group"] for c in mine}),
                "median": mine[len(mine) // 2]["measured_over_predicted"],
                "lowest": mine[0], "highest": mine[-1],
                "faster_than_predicted": [c for c in mine if c["measured_over_predicted"] < 1],
            }
    return summary


def analyse(rs: ResultSet, profile: Optional[Tuple[str, dict]] = None, link_gbps: Optional[float] = None,
            profile_source: str = "") -> Advice:
    link = choose_link(rs, link_gbps, profile)
    groups = [analyse_group(k, pts, link, profile, rs.calibration) for k, pts in sorted(groups_of(rs.points).items())]
    by_case: Dict[Tuple[str, str, str], List[GroupAdvice]] = {}
    for g in groups:
        by_case.setdefault((g.case, g.precision, g.generate), []).append(g)
    recs = []
    for (c, prec, gen), gs in sorted(by_case.items(), key=lambda kv: kv[0]):
        families = same_problem_families(gs, rs.points)
        recs += [recommend(c, prec, gen, family, len(families) > 1) for family in families]
    notes = []
    if rs.duplicates:
        notes.append(f"{len(rs.duplicates)} measurement(s) appear in more than one results file (Serial runs in every "
                     "run of a thread sweep, for one); the first read is used, e.g. " + "; ".join(rs.duplicates[:3]))
    fenced = [s.path for s in rs.sources if s.kernels_fenced]
    if fenced:
        notes.append(f"{len(fenced)} results file(s) come from runs with --kernel-times ({fenced[0]}, ...): Kokkos "
                     "fenced after every kernel, so their times are a profile's, slower than a plain run's where "
                     "launches dominate; advise on a run without it")
    if not rs.calibration:
        notes.append("no calibration in these results (made with --no-calibrate, or by an older mini-app): no "
                     "roofline, and the link bandwidth cannot come from the probe")
    single = [g.label for g in groups if len(g.sizes) == 1]
    if single:
        notes.append("measured at one size only, so no crossover can be located: " + "; ".join(single))
    summary = model_check_summary(groups, profile[0]) if profile else None
    if summary:
        notes += model_check_notes(summary, profile[0], link)
    elif profile_source and not profile:
        notes.append(profile_source)
    notes += pinned_notes(groups)
    return Advice(link=link, profile=profile, groups=groups, recommendations=recs, notes=notes,
                  calibration=rs.calibration, profile_source=profile_source, model_check=summary)


def model_check_notes(summary: dict, device: str, link: Link) -> List[str]:
    """The model check summed up per policy: the median, lowest and highest measured / predicted."""
    notes = []
    for policy, what in ((Policy.ALL_RESIDENT, "data resident"),
                         (Policy.COPY_EVERY_ITERATION, "copying every iteration")):
        m = summary.get(policy)
        if not m:
            continue
        low, high = m["lowest"], m["highest"]
        line = (f"the {device} prediction against the device's measurements, {what}: measured/predicted "
                f"median {m['median']:.3g}x over {m['points']} size(s) in {m['groups']} group(s); lowest "
                f"{low['measured_over_predicted']:.3g}x ({low['group']}, n = {low['size']}), highest "
                f"{high['measured_over_predicted']:.3g}x ({high['group']}, n = {high['size']})")
        faster = m["faster_than_predicted"]
        if faster:
            line += (f"; faster than predicted at {len(faster)} size(s) ({FASTER_THAN_PREDICTED[policy]}"
                     + (f", {link.gbps:.4g} GB/s" if policy == Policy.COPY_EVERY_ITERATION else "") + "), e.g. "
                     + "; ".join(f"{c['group']} n = {c['size']}" for c in faster[:3]))
        notes.append(line)
    return notes


def pinned_notes(groups: List[GroupAdvice]) -> List[str]:
    """Where copying every iteration through pinned memory would win (predicted) against the best
    host space at more sizes than the measured copies through pageable mirrors did."""
    notes = []
    for g in groups:
        for pp in g.pinned:
            pinned = Crossover(**pp["crossover"])
            measured = next((c for c in g.crossovers
                             if c.challenger == f"{pp['space']} (copying every iteration)"), None)
            # The sizes won for good: from first_winning on ("always": all of them; "never": none).
            wins = lambda c: 0 if c is None or c.first_winning is None else sum(n >= c.first_winning for n in c.sizes)
            if wins(pinned) <= wins(measured):
                continue
            where = ("at every measured size" if pinned.status == "always"
                     else f"from n = {pinned.first_winning}")
            was = ("it never did" if measured is None or measured.status == "never"
                   else f"only from n = {measured.first_winning}")
            notes.append(f"{g.label}: copying every iteration through pinned host memory would beat the best host "
                         f"space {where} (predicted from the probe's pinned link, "
                         f"{pp['pinned_to_device_GBps']:.3g} GB/s to the device); measured through the pageable "
                         f"mirrors, {was}")
    return notes


def require_size_sweep(advice: Advice) -> None:
    """`miniapp advise` needs at least one group with two sizes; otherwise there is nothing to advise."""
    if all(len(g.sizes) < 2 for g in advice.groups):
        sizes = sorted({n for g in advice.groups for n in g.sizes})
        raise InputError("every case was measured at one size only (n = " + ", ".join(map(str, sizes)) +
                         "): a crossover needs a size sweep; give the case several sizes, e.g. "
                         "sizes: {from: 64, to: 4096, factor: 2}")

