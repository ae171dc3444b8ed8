"""Raw result files as they are kept: FILE, or FILE.xz where a results directory was compacted
(scripts/compact_results.py: the committed runs in docs/results keep their large raw files
xz-compressed). Every reader of raw files opens them through here, so either form reads the same.
Standard library only."""

import glob
import json
import lzma
import os
from typing import Any, Dict, List, Optional, Tuple

SUFFIX = ".xz"


def find(path: str) -> Optional[str]:
    """The file kept for PATH: PATH itself, else PATH.xz, else None."""
    for candidate in (path, path + SUFFIX):
        if os.path.isfile(candidate):
            return candidate
    return None


def open_text(path: str, errors: str = "strict"):
    """PATH (or PATH.xz) opened as UTF-8 text; FileNotFoundError naming PATH where neither is kept."""
    found = find(path)
    if found is None:
        raise FileNotFoundError(2, "No such file", path)
    if found.endswith(SUFFIX):  # PATH.xz found for PATH, or PATH.xz named
        return lzma.open(found, "rt", encoding="utf-8", errors=errors, newline="")
    return open(found, encoding="utf-8", errors=errors, newline="")


def plain(path: str) -> str:
    """The name a kept file stands for (PATH.xz -> PATH)."""
    return path[:-len(SUFFIX)] if path.endswith(SUFFIX) else path


def matching(pattern: str) -> List[str]:
    """The files a glob PATTERN names, plain or compressed, by their plain names, sorted."""
    return sorted({plain(p) for p in glob.glob(pattern) + glob.glob(pattern + SUFFIX)})


def read_env(path: str) -> Dict[str, str]:
    """A run directory's KEY=VALUE file (gpu-run.sh's run.env, build.env) as a dict, quotes around
    a value dropped and # lines left out; {} where PATH is not there."""
    values = {}
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if "=" in line and not line.startswith("#"):
                    key, value = line.split("=", 1)
                    values[key] = value.strip('"')
    return values


def read_benchmarks(path: str) -> Tuple[Any, bool]:
    """A Google Benchmark JSON file of miniapp_benchmarks (--benchmark_out) as (data, stopped).
    Google Benchmark flushes its file after each benchmark, so a run stopped at its time limit
    (gpu-run.sh's parts) leaves a file that ends after the last benchmark it finished, or after the
    list's opening (ctest benchmark.stopped-part checks it): that file is closed here and stopped
    is True. FileNotFoundError where PATH is not kept; json.JSONDecodeError (or
    UnicodeDecodeError) where it reads neither way."""
    with open_text(path) as f:
        text = f.read()
    try:
        return json.loads(text), False
    except json.JSONDecodeError as whole:
        cut = text.rstrip()
        if cut.endswith("}") or cut.endswith("["):
            try:
                return json.loads(cut + "\n  ]\n}\n"), True
            except json.JSONDecodeError:
                pass
        raise whole
