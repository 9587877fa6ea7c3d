#!/usr/bin/env bash
# Installs the Debian packages lexpack needs to build, test and benchmark.
# Idempotent: installs only what is missing. Usage: scripts/install-deps.sh [--ci]
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config git
  libxxhash-dev liblmdb-dev libcli11-dev libgtest-dev libbenchmark-dev
  clang-14 libclang-rt-14-dev            # libFuzzer runs of the lexer
  llvm-14-linker-tools                   # clang's LTO link (LLVM gold plugin) in the link tests
  g++-aarch64-linux-gnu qemu-user        # ARM64 lexer tests under qemu
  strace
  libhiredis-dev libzstd-dev libcurl4-openssl-dev    # the remote tier
  openssl                                            # https tests make a certificate
  redis-server nginx libnginx-mod-http-dav-ext distcc # their tests start real servers
  libboost-dev                           # exact-scan tests on computed includes
)
if [[ ${1:-} != --ci ]]; then
  packages+=(ccache libclang-14-dev clang-tools-14 hyperfine meson)  # benchmarks compare against these
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo=""
if [[ $(id -u) != 0 ]]; then sudo=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
