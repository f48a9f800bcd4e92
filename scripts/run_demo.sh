#!/usr/bin/env bash
# Runs the end-to-end demo on a built tree (scripts/demo.sh builds one, scripts/test.sh reuses its
# release tree):
#   1. the schema check of the whole ATen corpus through `opreg schema` (every schema must print
#      exactly as PyTorch prints it);
#   2. examples/demo: a transformer MLP block of built-in ops run eagerly and as a captured graph
#      replayed on planned memory, and a symmetric-memory all-reduce between two processes.
# Usage: scripts/run_demo.sh BUILD_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
build=${1:?usage: run_demo.sh BUILD_DIR}

out=$(mktemp)
trap 'rm -f "$out" "$out.diff"' EXIT
status=0
"$build/cli/opreg" schema --namespace aten "$OPREG_CORPUS/aten_schemas.txt" >"$out" || status=$?
total=$(wc -l <"$OPREG_CORPUS/aten_schemas.txt")
errors=$(grep -c '^error:' "$out" || true)
if diff -u "$OPREG_CORPUS/aten_schemas.canonical.txt" "$out" >"$out.diff"; then
  echo "opreg schema: $total/$total ATen schemas parse and print exactly as PyTorch prints them"
else
  head -40 "$out.diff"
  echo "opreg schema: $errors parse errors; output differs from PyTorch's canonical form"
  exit 1
fi
[[ $status -eq 0 ]]
echo "example: echo 'mylib::f(Tensor! x, float eps=1e-6, *, int[2] k=1) -> ()' | opreg schema"
echo "mylib::f(Tensor! x, float eps=1e-6, *, int[2] k=1) -> ()" | "$build/cli/opreg" schema
"$build/examples/demo/opreg_demo"
