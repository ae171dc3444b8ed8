"""The crossover rule: from which size one configuration beats another for good. The advisor and
scripts/gpu_summary.py both state crossovers through it (standard library only).

crossover of A over B: the smallest measured size from which A is faster than B at every larger
measured size; between the last size where A loses and the first where it wins, the size where the
two runtimes cross on a log-log plot (straight lines between measured points): the estimate. A loss
by no more than the measured spread between two wins is noise, not a crossing back."""

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional


def sizes_text(sizes: List[int], measured: List[int]) -> str:
    """n = 10, 30..80, 100: runs of consecutive measured sizes as ranges."""
    index = {n: i for i, n in enumerate(measured)}
    runs: List[List[int]] = []
    for n in sorted(sizes):
        if runs and index.get(n, -2) == index.get(runs[-1][-1], -5) + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}..{r[-1]}" for r in runs)


@dataclass
class Crossover:
    challenger: str
    incumbent: str
    status: str                 # always | from | never | no-common-size
    sizes: List[int]            # sizes where both were measured
    first_winning: Optional[int] = None
    last_losing: Optional[int] = None
    estimate: Optional[float] = None    # log-log interpolated crossing between last_losing and first_winning
    wins_below: List[int] = field(default_factory=list)  # sizes where the challenger won but lost later
    ignored_losses: List[int] = field(default_factory=list)  # later losses within the measured spread

    def text(self) -> str:
        if self.status == "no-common-size":
            return f"{self.challenger} vs {self.incumbent}: never measured at a common size"
        lo, hi = self.sizes[0], self.sizes[-1]
        measured = f"n = {lo}..{hi}" if lo != hi else f"n = {lo}, the only size measured"
        ignored = (f"; losses within the measured spread ignored at n = {sizes_text(self.ignored_losses, self.sizes)}"
                   if self.ignored_losses else "")
        if self.status == "always":
            return f"{self.challenger} is faster than {self.incumbent} at every measured size ({measured}){ignored}"
        if self.status == "never":
            extra = f" (it wins only at n = {sizes_text(self.wins_below, self.sizes)})" if self.wins_below else ""
            return f"{self.challenger} never beats {self.incumbent} in the measured range ({measured}){extra}"
        est = f"; crossing at n ~ {self.estimate:.4g} (log-log interpolation)" if self.estimate else ""
        extra = f"; it also won at n = {sizes_text(self.wins_below, self.sizes)}" if self.wins_below else ""
        return (f"{self.challenger} beats {self.incumbent} from n = {self.first_winning} "
                f"(loses at n = {self.last_losing}{est}{extra}{ignored}; measured {measured})")


def crossover(challenger: str, a: Dict[int, float], incumbent: str, b: Dict[int, float],
              spread: Optional[Dict[int, float]] = None) -> Crossover:
    """Where the times a(n) of the challenger fall below b(n) of the incumbent for good.

    A loss by no more than spread[n] (the larger standard deviation of the two over their
    repetitions) between two wins is noise, not a crossing back: it is reported, not used."""
    spread = spread or {}
    sizes = sorted(set(a) & set(b))
    if not sizes:
        return Crossover(challenger, incumbent, "no-common-size", [])
    wins = [a[n] < b[n] for n in sizes]
    within = [not w and a[n] - b[n] <= spread.get(n, 0.0) for w, n in zip(wins, sizes)]
    won_later = [any(wins[i + 1:]) for i in range(len(sizes))]
    decisive = [not w and not (within[i] and won_later[i]) for i, w in enumerate(wins)]
    if not any(decisive):
        return Crossover(challenger, incumbent, "always", sizes, first_winning=sizes[0],
                         ignored_losses=[n for i, n in enumerate(sizes) if not wins[i]])
    last_loss = max(i for i, d in enumerate(decisive) if d)
    earlier_wins = [sizes[i] for i in range(last_loss) if wins[i]]
    if last_loss == len(sizes) - 1 or not won_later[last_loss]:
        return Crossover(challenger, incumbent, "never", sizes, wins_below=earlier_wins)
    first_win = next(i for i in range(last_loss + 1, len(sizes)) if wins[i])
    n0, n1 = sizes[last_loss], sizes[first_win]
    # log(a/b) is linear in log n between the two points on a log-log plot; it is >= 0 at n0, < 0 at n1.
    r0, r1 = math.log(a[n0] / b[n0]), math.log(a[n1] / b[n1])
    t = r0 / (r0 - r1)
    estimate = math.exp(math.log(n0) + t * (math.log(n1) - math.log(n0)))
    return Crossover(challenger, incumbent, "from", sizes, first_winning=n1, last_losing=n0, estimate=estimate,
                     wins_below=earlier_wins,
                     ignored_losses=[n for i, n in enumerate(sizes) if i > first_win and not wins[i]])
