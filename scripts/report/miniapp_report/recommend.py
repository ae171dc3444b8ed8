"""The recommendation per case: the fastest measured configuration per size over the variants that
solve the same problem, as size ranges, with whether copying every iteration pays there."""

from typing import Dict, List, Tuple

from .group import GroupAdvice
from .names import Policy
from .results import Point

Candidate = Tuple[float, float, str, str, str]     # (seconds, stddev, variant, where, kind)
VersusHost = Dict[str, Dict[int, Tuple[float, float]]]  # device space -> n -> (copying seconds, best host seconds)
Range = Tuple[int, int, Tuple[str, str, str]]      # (from n, to n, (variant, where, kind))
MAX_FLOP_RATIO_SAME_PROBLEM = 4.0


def _fmt_sizes(lo: int, hi: int, first: bool, last: bool) -> str:
    if first and last:
        return f"n = {lo}..{hi}" if lo != hi else f"n = {lo}"
    if first:
        return f"n <= {hi}"
    if last:
        return f"n >= {lo}"
    return f"n = {lo}..{hi}" if lo != hi else f"n = {lo}"


def same_problem_families(groups: List[GroupAdvice], points: List[Point]) -> List[List[GroupAdvice]]:
    """Variants of one case that solve the same problem, so that the fastest of them can be
    recommended. A case normally is one problem, but some workloads' variants compute different
    things (matrix: elementwise z = x ** y against GEMM): variants whose flops at a common size
    differ by more than MAX_FLOP_RATIO_SAME_PROBLEM are told apart. (Variants that skip work,
    like distance/symmetric's one entry per pair, stay within it.)"""
    flops: Dict[Tuple[str, int], float] = {}
    for p in points:
        if p.case == groups[0].case:
            flops.setdefault((p.variant, p.size), p.flops)
    families: List[List[GroupAdvice]] = []
    for g in groups:
        for family in families:
            head = family[0]
            common = [n for n in g.sizes if n in head.sizes]
            ratios = [max(flops[(g.variant, n)], flops[(head.variant, n)]) /
                      max(min(flops[(g.variant, n)], flops[(head.variant, n)]), 1e-300) for n in common]
            if common and max(ratios) <= MAX_FLOP_RATIO_SAME_PROBLEM:
                family.append(g)
                break
        else:
            families.append([g])
    return families



def recommend(case: str, precision: str, generate: str, groups: List[GroupAdvice], name_variants: bool = False) -> dict:
    """The fastest configuration per measured size over every variant of the case, as size ranges.
    Going up in size, the choice changes only where another configuration wins by more than the
    spread of the two medians (their larger standard deviation): noise does not split a range."""
    candidates, copy_vs_host, pinned_vs_host = _candidates(groups)
    ranges = _ranges(_winners(candidates))
    parts = [_range_text(i, len(ranges), r, copy_vs_host, pinned_vs_host) for i, r in enumerate(ranges)]
    has_device = any(g.device for g in groups)
    if not has_device:
        parts.append("no device space measured")
    gen = "" if generate == "host" else f", inputs generated on {generate}"
    which = f" [{', '.join(g.variant for g in groups)}]" if name_variants else ""
    line = f"{case}{which} ({groups[0].workload}, {precision}{gen}): " + "; ".join(parts)
    return {"case": case, "workload": groups[0].workload, "precision": precision, "generate": generate,
            "variants": [g.variant for g in groups],
            "ranges": [{"from": lo, "to": hi, "variant": v, "where": w, "kind": k} for lo, hi, (v, w, k) in ranges],
            "text": line}


def _candidates(groups: List[GroupAdvice]) -> Tuple[Dict[int, List[Candidate]], VersusHost, VersusHost]:
    """Per size every host space and every device with data resident; per device space and size
    the fastest copying run (pageable, pinned) next to the best host time."""
    candidates: Dict[int, List[Candidate]] = {}
    copy_vs_host: VersusHost = {}
    pinned_vs_host: VersusHost = {}
    for g in groups:
        for label, times in g.host_times.items():
            for n, t in times.items():
                candidates.setdefault(n, []).append((t, g.stddev.get((label, n), 0.0), g.variant, label, "host"))
        for space, policies in g.device.items():
            for n, t in policies.get(Policy.ALL_RESIDENT, {}).items():
                candidates.setdefault(n, []).append((t, g.stddev.get((f"{space} {Policy.ALL_RESIDENT}", n), 0.0),
                                                     g.variant, space, "device"))
            for policy, table in ((Policy.COPY_EVERY_ITERATION, copy_vs_host),
                                  (Policy.COPY_EVERY_ITERATION_PINNED, pinned_vs_host)):
                for n, t in policies.get(policy, {}).items():
                    if n in g.best_host:
                        prev = table.setdefault(space, {}).get(n)
                        if prev is None or t < prev[0]:
                            table[space][n] = (t, g.best_host[n][0])
    return candidates, copy_vs_host, pinned_vs_host


def _winners(candidates: Dict[int, List[Candidate]]) -> Dict[int, Tuple[float, str, str, str]]:
    """n -> (seconds, variant, where, kind): the fastest, unless the previous size's choice is
    within the spread of the two."""
    winners: Dict[int, Tuple[float, str, str, str]] = {}
    previous = None
    for n in sorted(candidates):
        best = min(candidates[n], key=lambda c: c[0])
        choice = best
        if previous:
            same = [c for c in candidates[n] if c[2:] == previous]
            if same and same[0][0] - best[0] <= max(same[0][1], best[1]):
                choice = same[0]
        winners[n] = (choice[0],) + choice[2:]
        previous = choice[2:]
    return winners


def _ranges(winners: Dict[int, Tuple[float, str, str, str]]) -> List[Range]:
    ranges: List[Range] = []
    for n in sorted(winners):
        who = winners[n][1:]
        if ranges and ranges[-1][2] == who:
            ranges[-1] = (ranges[-1][0], n, who)
        else:
            ranges.append((n, n, who))
    return ranges


def _range_text(i: int, count: int, r: Range, copy_vs_host: VersusHost, pinned_vs_host: VersusHost) -> str:
    lo, hi, (variant, where, kind) = r
    text = f"{_fmt_sizes(lo, hi, i == 0, i == count - 1)}: {where}, {variant}"
    if kind == "device":
        copies = copy_vs_host.get(where, {})
        pays = sorted(m for m, (tc, th) in copies.items() if tc < th and lo <= m <= hi)
        if not copies:
            text += ", data resident (copying every iteration not measured)"
        elif not pays:
            text += ", data resident only (copying every iteration loses to the host here)"
        else:
            text += f", data resident (copying every iteration also pays at n = {', '.join(map(str, pays))})"
        pinned = {m: v for m, v in pinned_vs_host.get(where, {}).items() if lo <= m <= hi}
        if pinned:
            pays = sorted(m for m, (tc, th) in pinned.items() if tc < th)
            text += (f"; through pinned mirrors copying pays at n = {', '.join(map(str, pays))}" if pays
                     else "; through pinned mirrors copying still loses")
    return text
