#!/usr/bin/env bash
# Sweeps the tile shape of the matrix workload's gemm-tiled variant on one space, one run of the
# mini-app per shape and precision (a shape the space cannot launch, too much scratch or too many
# threads per team, fails its own run only), and writes a table of the measured rates:
#
#   scripts/tune-gemm-tiles.sh MINIAPP [--space SPACE] [--size N] [--m LIST] [--n LIST] [--k LIST]
#                              [--precision LIST] [--output DIR]
#
#   MINIAPP      the mini-app binary
#   --space      the space to tune (default cuda)
#   --size       the square GEMM's n (default 2048)
#   --m, --n     tile rows and columns of C, multiples of 32 (default 32,64,128)
#   --k          tile depth (default 8,16,32)
#   --precision  default float32,float64
#   --output     default tune-gemm-tiles-SPACE
#
# DIR/tiles.tsv: one row per run (precision, tile_m, tile_n, tile_k, status, exit code, median
# compute seconds, GFLOP/s, verified, and the form gemm-tiled ran: resident or streaming on a GPU,
# where a tile too big for the resident form's team falls back to streaming; host on the host),
# the space default (tile 0 0 0) and gemm-kokkos-kernels first as the references.
# DIR/runs/<name>/ keeps each run's deck, results and log. The fastest verified shape per
# precision is printed. Every run verifies its product as any deck does.
#
# Exit codes: 0 every run passed; 1 some run failed (tiles.tsv says which); 2 bad arguments.
set -uo pipefail

usage_error() { echo "tune-gemm-tiles: $*" >&2; exit 2; }

# Every option takes a value: its name (without the dashes) keys the table of defaults.
# shellcheck source=lib/options.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/options.sh"
declare -A OPT=([space]=cuda [size]=2048 [m]=32,64,128 [n]=32,64,128 [k]=8,16,32 [precision]=float32,float64 [output]="")
parse_options "$@"
[ ${#POSITIONAL[@]} -le 1 ] || usage_error "more than one binary given"
MINIAPP=${POSITIONAL[0]:-}
SPACE=${OPT[space]} SIZE=${OPT[size]} MS=${OPT[m]} NS=${OPT[n]} KS=${OPT[k]} PRECISIONS=${OPT[precision]} OUT=${OPT[output]}
[ -n "$MINIAPP" ] || usage_error "no mini-app binary given (try --help)"
[ -x "$MINIAPP" ] || usage_error "$MINIAPP is not an executable"
[[ "$SIZE" =~ ^[1-9][0-9]*$ ]] || usage_error "--size must be a positive integer, not '$SIZE'"
for list in "$MS" "$NS" "$KS"; do
  [[ "$list" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || usage_error "tile lists are comma-separated positive integers, not '$list'"
done
OUT=${OUT:-tune-gemm-tiles-$SPACE}
mkdir -p "$OUT/runs"
TSV="$OUT/tiles.tsv"
printf 'precision\tvariant\ttile_m\ttile_n\ttile_k\tstatus\texit_code\tcompute_seconds\tGFLOPs\tverified\tform\n' >"$TSV.tmp"

# One run: a one-case deck, its results.json read back with Python's standard library.
run_one() {
  local precision=$1 variant=$2 tm=$3 tn=$4 tk=$5
  local name="$precision-$variant-$tm-$tn-$tk" dir
  dir="$OUT/runs/$name"
  mkdir -p "$dir"
  {
    echo "title: gemm tile sweep ($name)"
    echo "cases:"
    echo "  - name: $name"
    echo "    workload: matrix"
    echo "    variant: $variant"
    echo "    sizes: $SIZE"
    echo "    precision: $precision"
    echo "    policies: [all-resident]"
    echo "    generate: device"
    echo "    warmup: 1"
    echo "    repetitions: 5"
    if [ "$tm" != 0 ]; then echo "    tile_m: $tm"; echo "    tile_n: $tn"; echo "    tile_k: $tk"; fi
  } >"$dir/deck.yaml"
  "$MINIAPP" "$dir/deck.yaml" --spaces "$SPACE" -o "$dir/out" -q --no-calibrate >"$dir/log" 2>&1
  local rc=$?
  python3 - "$dir/out/results.json" "$precision" "$variant" "$tm" "$tn" "$tk" "$rc" >>"$TSV.tmp" <<'EOF'
import json, re, sys
path, precision, variant, tm, tn, tk, rc = sys.argv[1:]
row = [precision, variant, tm, tn, tk]
try:
    with open(path) as f:
        m = json.load(f)["measurements"][0]
    compute = m["seconds"]["compute"]["median"]
    ok = m["verification"]["passed"]
    form = re.search(r"gemm-tiled ran its (\w+) form", m["verification"].get("detail", ""))
    row += ["ok" if rc == "0" and ok else "failed", rc, f"{compute:.6g}", f"{m['work']['flops'] / compute * 1e-9:.1f}",
            "yes" if ok else "no", form.group(1) if form else "-"]
except (OSError, ValueError, KeyError, IndexError):
    row += ["failed", rc, "", "", "", "-"]
print("\t".join(row))
EOF
  tail -n 1 "$TSV.tmp" >&2
}

IFS=, read -r -a precisions <<<"$PRECISIONS"
IFS=, read -r -a ms <<<"$MS"
IFS=, read -r -a ns <<<"$NS"
IFS=, read -r -a ks <<<"$KS"
for precision in "${precisions[@]}"; do
  run_one "$precision" gemm-kokkos-kernels 0 0 0
  run_one "$precision" gemm-tiled 0 0 0
  for tm in "${ms[@]}"; do for tn in "${ns[@]}"; do for tk in "${ks[@]}"; do
    run_one "$precision" gemm-tiled "$tm" "$tn" "$tk"
  done; done; done
done
mv "$TSV.tmp" "$TSV"

python3 - "$TSV" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
for p in sorted({r["precision"] for r in rows}):
    ok = [r for r in rows if r["precision"] == p and r["status"] == "ok"]
    ref = {(r["variant"], r["tile_m"]): r for r in ok if r["tile_m"] == "0"}
    tiled = [r for r in ok if r["variant"] == "gemm-tiled" and r["tile_m"] != "0"]
    failed = sum(1 for r in rows if r["precision"] == p and r["status"] != "ok")
    if not tiled:
        print(f"{p}: no tile shape ran ({failed} failed)")
        continue
    best = max(tiled, key=lambda r: float(r["GFLOPs"]))
    default = ref.get(("gemm-tiled", "0"))
    vendor = ref.get(("gemm-kokkos-kernels", "0"))
    line = (f"{p}: fastest tile {best['tile_m']} x {best['tile_n']} x {best['tile_k']} ({best['form']} form): "
            f"{best['GFLOPs']} GFLOP/s")
    if default:
        line += f"; space default {default['GFLOPs']} GFLOP/s ({float(best['GFLOPs']) / float(default['GFLOPs']):.2f}x)"
    if vendor:
        line += f"; gemm-kokkos-kernels {vendor['GFLOPs']} GFLOP/s"
    print(line + (f"; {failed} run(s) failed" if failed else ""))
EOF
! grep -q $'\tfailed\t' "$TSV"
