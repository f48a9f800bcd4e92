#!/usr/bin/env bash
# Installs the Debian packages opreg builds against. Idempotent: it only calls apt-get when a
# package is missing, and prints nothing when everything is already there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  clang-14 libclang-rt-14-dev        # libFuzzer + sanitizer runtimes for the fuzz target
  libabsl-dev libspdlog-dev catch2 libbenchmark-dev libdlpack-dev libopenblas-dev
  nlohmann-json3-dev                 # the JSON reader of `opreg plan`
  openmpi-bin libopenmpi-dev         # MPI bootstrap of symm_mem groups + MPI_Allreduce baseline
  libsleef-dev                       # SLEEF, which vLLM's CPU kernels include (real-source test)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "install_deps: installing ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
