#!/usr/bin/env bash
# The main job: builds opreg and runs the end-to-end demo:
#   1. the schema check of the whole ATen corpus through `opreg schema` (every schema must print
#      exactly as PyTorch prints it);
#   2. examples/demo: a transformer MLP block of built-in ops run eagerly and as a captured graph
#      replayed on planned memory, and a symmetric-memory all-reduce between two processes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bash "$OPREG_ROOT/scripts/install_deps.sh"

build=$OPREG_ROOT/build/release
mkdir -p "$OPREG_ROOT/build"
opreg_build "$build" -DCMAKE_BUILD_TYPE=Release -DOPREG_BUILD_TESTS=OFF \
  -DOPREG_BUILD_BENCHMARKS=OFF >/dev/null

corpus=$OPREG_SHARED/corpus
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
"$build/cli/opreg" schema --namespace aten "$corpus/aten_schemas.txt" >"$out" || status=$?
total=$(wc -l <"$corpus/aten_schemas.txt")
errors=$(grep -c '^error:' "$out" || true)
if diff -u "$corpus/aten_schemas.canonical.txt" "$out" >"$out.diff"; then
  echo "opreg schema: $total/$total ATen schemas parse and print exactly as PyTorch prints them"
else
  head -40 "$out.diff"
  echo "opreg schema: $errors parse errors; output differs from PyTorch's canonical form"
  rm -f "$out.diff"
  exit 1
fi
rm -f "$out.diff"
[[ $status -eq 0 ]]
echo "example: echo 'mylib::f(Tensor! x, float eps=1e-6, *, int[2] k=1) -> ()' | opreg schema"
echo "mylib::f(Tensor! x, float eps=1e-6, *, int[2] k=1) -> ()" | "$build/cli/opreg" schema
"$build/examples/demo/opreg_demo"
