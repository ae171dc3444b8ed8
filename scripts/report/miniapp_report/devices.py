"""Device profiles for predictions: the published ones of scripts/report/devices.json, a device
described by its figures on the command line, or a profile file; and the profile that matches the
GPU the results were measured on."""

import json
import math
import os
import re
from typing import Dict, List, Optional, Tuple

from .results import InputError, ResultSet


def load_profiles(path: str) -> Dict[str, dict]:
    with open(path, encoding="utf-8") as f:
        return json.load(f)["devices"]


# A described device: --assume-device 'peak64=9700,peak32=19500,bandwidth=2039,link=25[,launch=5][,name=X]'
# (GFLOP/s, GB/s, GB/s one direction, us), or the path of a JSON file holding one profile in
# devices.json's shape.
DESCRIBED_KEYS = {"peak64": "float64 peak, GFLOP/s", "peak32": "float32 peak, GFLOP/s",
                  "bandwidth": "memory bandwidth, GB/s", "link": "host link, GB/s one direction"}
DEFAULT_LAUNCH_US = 5.0


def _positive(value, what: str, where: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"--assume-device {where}: {what} is {value!r}, not a number")
    if not (x > 0 and math.isfinite(x)):
        raise InputError(f"--assume-device {where}: {what} must be a positive number, not {value!r}")
    return x


def described_profile(text: str) -> Tuple[str, dict]:
    """The profile of a device described by its figures on the command line."""
    fields: Dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(f"--assume-device {text!r}: '{part}' is not key=value (keys: "
                             f"{', '.join(DESCRIBED_KEYS)}, launch, name)")
        if key not in DESCRIBED_KEYS and key not in ("launch", "name"):
            raise InputError(f"--assume-device {text!r}: unknown key {key!r} (keys: {', '.join(DESCRIBED_KEYS)}, "
                             "launch, name)")
        if key in fields:
            raise InputError(f"--assume-device {text!r}: {key} given twice")
        fields[key] = value.strip()
    missing = [f"{k} ({what})" for k, what in DESCRIBED_KEYS.items() if k not in fields]
    if missing:
        raise InputError(f"--assume-device {text!r}: missing {', '.join(missing)}")
    v = {k: _positive(fields[k], k, repr(text)) for k in DESCRIBED_KEYS}
    launch = _positive(fields["launch"], "launch", repr(text)) if "launch" in fields else DEFAULT_LAUNCH_US
    return "described", {
        "name": fields.get("name") or "the described device",
        "peak_GFLOPs": {"float64": v["peak64"], "float32": v["peak32"]},
        "memory_GBps": v["bandwidth"], "link_GBps": v["link"], "link": "host link, one direction",
        "launch_latency_us": launch, "figures": "described",
        "source": f"--assume-device {text}" + ("" if "launch" in fields else f" (launch {DEFAULT_LAUNCH_US:g} us assumed)"),
    }


def profile_file(path: str) -> Tuple[str, dict]:
    """A profile in devices.json's shape, from a file of its own."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise InputError(f"--assume-device {path}: cannot read it as JSON: {e}")
    if not isinstance(doc, dict):
        raise InputError(f"--assume-device {path}: expected one device profile (an object)")
    peaks = doc.get("peak_GFLOPs")
    if not isinstance(peaks, dict) or not {"float64", "float32"} <= set(peaks):
        raise InputError(f"--assume-device {path}: peak_GFLOPs must hold float64 and float32 (GFLOP/s)")
    where = path
    profile = dict(doc)
    profile["peak_GFLOPs"] = {p: _positive(peaks[p], f"peak_GFLOPs.{p}", where) for p in ("float64", "float32")}
    for key in ("memory_GBps", "link_GBps"):
        if key not in doc:
            raise InputError(f"--assume-device {path}: missing {key}")
        profile[key] = _positive(doc[key], key, where)
    profile["launch_latency_us"] = _positive(doc.get("launch_latency_us", DEFAULT_LAUNCH_US), "launch_latency_us", where)
    profile.setdefault("name", os.path.splitext(os.path.basename(path))[0])
    profile.setdefault("figures", "described")
    profile.setdefault("link", "host link, one direction")
    profile.setdefault("source", path)
    return os.path.basename(path), profile


def find_profile(profiles: Dict[str, dict], name: str) -> Tuple[str, dict]:
    """A named profile of devices.json, a described device (key=value figures), or a profile file."""
    if "=" in name:
        return described_profile(name)
    if name.endswith(".json"):
        return profile_file(name)
    for key, profile in profiles.items():
        if key.lower() == name.lower():
            return key, profile
    raise InputError(f"--assume-device: unknown device {name!r}; known: {', '.join(sorted(profiles))} "
                     f"(profiles in scripts/report/devices.json), none, a described device "
                     f"('peak64=GFLOPs,peak32=GFLOPs,bandwidth=GBps,link=GBps[,launch=us][,name=X]') or a profile "
                     "file (.json)")


def figures(profile: dict) -> str:
    """'published' for the profiles of devices.json, 'described' for a device given by its figures."""
    return profile.get("figures", "published")


def measured_gpu_names(rs: ResultSet) -> List[str]:
    """The GPUs the results' device measurements ran on (provenance.gpu.name of the files that hold
    a device measurement)."""
    with_device = {p.source for p in rs.points if not p.host}
    names = set()
    for s in rs.sources:
        gpu = s.provenance.gpu
        if s.path in with_device and gpu and gpu.name:
            names.add(gpu.name)
    return sorted(names)


def profile_for_measured_gpu(profiles: Dict[str, dict], rs: ResultSet) -> Tuple[Optional[Tuple[str, dict]], str]:
    """The profile whose `matches` (regular expressions, matched in full) names the one GPU the
    results were measured on, so that a device run gets its prediction printed next to its
    measurements without being asked; (None, why) otherwise."""
    names = measured_gpu_names(rs)
    if not names:
        return None, ""
    if len(names) > 1:
        return None, f"no profile chosen: the results were measured on {len(names)} GPUs ({', '.join(names)})"
    for key, profile in profiles.items():
        if any(re.fullmatch(pattern, names[0]) for pattern in profile.get("matches", [])):
            return (key, profile), f"chosen from the measured GPU's name, {names[0]!r} (--assume-device none: no prediction)"
    return None, (f"no published profile matches the measured GPU {names[0]!r} (known: {', '.join(sorted(profiles))}; "
                  "--assume-device NAME predicts for one of them)")
