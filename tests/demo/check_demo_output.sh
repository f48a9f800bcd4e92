#!/usr/bin/env bash
# Checks a log of the demo taken through a pipe (scripts/run_demo.sh BUILD | tee LOG): every
# section header and the closing verdict appear exactly once, so no forked rank printed the
# parent's buffered output again. With --with-schema the log is of scripts/run_demo.sh and must
# hold the corpus check's line once too; without it, of examples/demo alone.
# Usage: check_demo_output.sh [--with-schema] LOG
set -euo pipefail
lines=()
if [[ ${1:-} == --with-schema ]]; then
  lines+=('^opreg schema: [0-9]+/[0-9]+ ATen schemas parse and print exactly as PyTorch prints them$')
  shift
fi
log=${1:?usage: check_demo_output.sh [--with-schema] LOG}
status=0
for line in "${lines[@]}" \
  '^== MLP block: built-in ops, eager vs captured graph on planned memory$' \
  '^== symmetric memory: all-reduce between two processes$' \
  '^demo: OK$'; do
  n=$(grep -cE "$line" "$log" || true)
  if [[ $n -ne 1 ]]; then
    echo "check_demo_output: '$line' appears $n times (expected once)" >&2
    status=1
  fi
done
[[ $status -eq 0 ]] && echo "check_demo_output: each section of the demo appears once"
exit $status
