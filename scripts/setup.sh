#!/usr/bin/env bash
# Installs everything GLLM Workbench needs on Debian 12 (as root, or with sudo): idempotent, and
# quick when already done. Called by scripts/build.sh; safe to run by hand. With
# GLLM_COMPILE_CHECKS=1 (what .ci/run sets) it also fetches the LibTorch 2.x headers of the CI-only
# compile check (scripts/fetch-torch2-headers.sh) and the tools that fetch needs; with
# GLLM_DEV_TOOLS=1 (what scripts/test.sh sets) it adds clang-format for the format check.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache git
  qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl-dev
  libtorch-dev libopenblas0-openmp
  libeigen3-dev nlohmann-json3-dev libsentencepiece-dev libcli11-dev libgloo-dev
  zlib1g-dev libzstd-dev sentencepiece
  xvfb xauth python3-torch ca-certificates
  slurmctld slurmd slurm-client munge  # scripts/slurm-local.sh: the one-node SLURM the slow tests submit to
)
compile_checks=${GLLM_COMPILE_CHECKS:-0}
if [ "${GLLM_DEV_TOOLS:-0}" = 1 ] || [ "$compile_checks" = 1 ]; then
  packages+=(clang-format)  # scripts/check-format.sh, run by scripts/test.sh
fi
if [ "$compile_checks" = 1 ]; then
  packages+=(curl gpgv xz-utils debian-archive-keyring)  # scripts/fetch-torch2-headers.sh
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
command -v npm >/dev/null 2>&1 || missing+=(npm)

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo_cmd=(sudo); else
    echo "setup: run as root (or install sudo) to install: ${missing[*]}" >&2; exit 1
  fi
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi

# Debian's LibTorch links libblas.so.3 through the alternatives system; make sure it is OpenBLAS
# (the reference BLAS is ~15x slower on a 2048² matmul here).
alt=libblas.so.3-x86_64-linux-gnu
openblas=/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3
if [ -e "$openblas" ] && [ "$(readlink -f /etc/alternatives/$alt 2>/dev/null)" != "$(readlink -f $openblas)" ]; then
  echo "setup: selecting OpenBLAS for $alt"
  "${sudo_cmd[@]}" update-alternatives --set "$alt" "$openblas"
fi
alt=liblapack.so.3-x86_64-linux-gnu
openlapack=/usr/lib/x86_64-linux-gnu/openblas-openmp/liblapack.so.3
if [ -e "$openlapack" ] && [ "$(readlink -f /etc/alternatives/$alt 2>/dev/null)" != "$(readlink -f $openlapack)" ]; then
  "${sudo_cmd[@]}" update-alternatives --set "$alt" "$openlapack"
fi

# Headers of LibTorch 2.x releases (Debian trixie's 2.6 and sid's newest libtorch-dev,
# signature-checked) for CI's LibTorch 2.x compile checks; without them (no network) a check is
# skipped, not failed. A user's build has
# no use for them, so they are fetched only when the compile checks are asked for.
if [ "${GLLM_DEV_TOOLS:-0}" = 1 ] || [ "$compile_checks" = 1 ]; then
  packages+=(clang-format)  # scripts/check-format.sh, run by scripts/test.sh
fi
if [ "$compile_checks" = 1 ]; then
  if ! "$(dirname "$0")/fetch-torch2-headers.sh"; then
    echo "setup: no LibTorch 2.x headers; the LibTorch 2.x compile check will be skipped" >&2
  fi
fi
