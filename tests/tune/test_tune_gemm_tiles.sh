#!/usr/bin/env bash
# scripts/tune-gemm-tiles.sh on the first compiled space (a host one) at a small size: one run
# per shape, each product verified, the references first, a shape the deck refuses recorded as
# failed (exit 1) without stopping the others, and the fastest verified shape named from the table.
#   test_tune_gemm_tiles.sh MINIAPP SOURCE_DIR
set -uo pipefail
MINIAPP=$1; SRC=$2
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}

# The first compiled space (host spaces come first; a build may leave Serial out).
space=$("$MINIAPP" --version | sed -n 's/^execution spaces: \([a-z]*\).*/\1/p')
[ -n "$space" ] || fail "miniapp --version names no execution space"

# 48 is no multiple of 32: the deck refuses that shape, and only that one.
"$SRC/scripts/tune-gemm-tiles.sh" "$MINIAPP" --space "$space" --size 96 --m 32,48 --n 64 --k 16,32 \
  --precision float64 --output "$OUT/t" >"$OUT/stdout" 2>"$OUT/stderr"
rc=$?
[ "$rc" -eq 1 ] || fail "exit $rc with a refused shape, expected 1"
TSV="$OUT/t/tiles.tsv"
[ -f "$TSV" ] || fail "no tiles.tsv"
[ "$(head -n 1 "$TSV" | cut -f1-6)" = "$(printf 'precision\tvariant\ttile_m\ttile_n\ttile_k\tstatus')" ] || fail "header: $(head -n 1 "$TSV")"
# 2 references + 2 x 1 x 2 shapes.
[ "$(tail -n +2 "$TSV" | wc -l)" -eq 6 ] || fail "expected 6 rows: $(cat "$TSV")"
[ "$(sed -n 2p "$TSV" | cut -f2-5)" = "$(printf 'gemm-kokkos-kernels\t0\t0\t0')" ] || fail "first reference row"
[ "$(sed -n 3p "$TSV" | cut -f2-5)" = "$(printf 'gemm-tiled\t0\t0\t0')" ] || fail "second reference row"
failed=$(awk -F'\t' 'NR > 1 && $6 == "failed" {print $3 "x" $4 "x" $5 ":" $7}' "$TSV" | sort | tr '\n' ' ')
[ "$failed" = "48x64x16:2 48x64x32:2 " ] || fail "failed rows (shape:exit) '$failed', expected the two 48-row shapes with exit 2"
grep -q "expected a multiple of 32" "$OUT/t/runs/float64-gemm-tiled-48-64-16/log" || fail "the refused run's log does not say why"
# Every run that finished verified its product, and its rate is its flops over its time.
awk -F'\t' 'NR > 1 && $6 == "ok" {
  if ($10 != "yes") { print "not verified: " $0; bad = 1 }
  want = 2 * 96 * 96 * 96 / $8 * 1e-9
  if ($9 < want * 0.99 - 0.1 || $9 > want * 1.01 + 0.1) { print "rate " $9 " is not " want ": " $0; bad = 1 }
} END { exit bad }' "$TSV" || fail "rows"
# The form each run took, from its results: gemm-tiled's host form on a host space, none for the
# vendor reference (a GPU's rows say resident or streaming).
forms=$(awk -F'\t' 'NR > 1 && $6 == "ok" {print $2 ":" $11}' "$TSV" | sort -u | tr '\n' ' ')
[ "$forms" = "gemm-kokkos-kernels:- gemm-tiled:host " ] || fail "forms '$forms', expected the host form for gemm-tiled"
grep -q "gemm-tiled ran its host form, tiles 32 x 64 x 16" "$OUT/t/runs/float64-gemm-tiled-32-64-16/out/results.json" \
  || fail "the results do not say the form and tiles that ran"
# The printed fastest shape is the table's fastest ok tiled row.
best=$(awk -F'\t' 'NR > 1 && $6 == "ok" && $2 == "gemm-tiled" && $3 != 0 && $9 + 0 > b {b = $9 + 0; s = $3 " x " $4 " x " $5} END {print s}' "$TSV")
grep -q "^float64: fastest tile $best (host form): " "$OUT/stdout" || fail "stdout does not name $best: $(cat "$OUT/stdout")"
grep -q "1 run(s) failed\|2 run(s) failed" "$OUT/stdout" || fail "stdout does not count the failed runs"

# Bad arguments: exit 2, nothing written.
"$SRC/scripts/tune-gemm-tiles.sh" "$MINIAPP" --tile 3 --output "$OUT/bad" 2>"$OUT/bad.err"
[ $? -eq 2 ] && grep -q "unknown option '--tile'" "$OUT/bad.err" && [ ! -e "$OUT/bad" ] || fail "an unknown option"
"$SRC/scripts/tune-gemm-tiles.sh" "$MINIAPP" --k 8,x --output "$OUT/bad" 2>"$OUT/bad.err"
[ $? -eq 2 ] && grep -q "comma-separated positive integers" "$OUT/bad.err" && [ ! -e "$OUT/bad" ] || fail "a bad list"
"$SRC/scripts/tune-gemm-tiles.sh" "$MINIAPP" --size 2>"$OUT/bad.err"
[ $? -eq 2 ] && grep -q "needs a value" "$OUT/bad.err" || fail "a missing value"
echo "tune-gemm-tiles: ok"
