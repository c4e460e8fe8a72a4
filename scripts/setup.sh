#!/usr/bin/env bash
# Installs what pmlab needs to build, run and test, idempotently: Debian packages, then Python packages.
# Fast when everything is there (it only asks dpkg and python).
set -euo pipefail
cd "$(dirname "$0")/.."

debs=(cmake ninja-build g++ make pkg-config git dpkg-dev file
      libpmem-dev libpmem2-dev libpmemobj-dev libpmemlog-dev libpmemblk-dev
      libnuma-dev libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev libfmt-dev
      fio likwid linux-perf valgrind python3
      clang-format  # scripts/check_layout.py: the tree as .clang-format lays it out
      chromium  # the report's browser test (python/tests/test_browser.py) renders it headless
      openjdk-17-jdk-headless  # tests/crash/exec: a JVM program crash-tested as it is
      liblmdb-dev lmdb-utils  # subjects/lmdb: a storage engine crash-tested as Debian ships it
      libsqlite3-dev sqlite3  # subjects/sqlite: one that writes its files with pwrite(2)
      libleveldb-dev  # subjects/leveldb: one that names its files as it goes (a --pool directory)
      libtdb-dev  # subjects/tdb: one that maps its file ahead of growing it
      rustc)  # tests/crash/exec: a Rust program crash-tested as it is
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The report renderer and the Python tests run on whatever `python3` is first on PATH.
if ! python3 -c 'import matplotlib, numpy, pytest' 2>/dev/null; then
  echo "setup: installing Python packages from python/requirements.txt"
  if ! python3 -m pip install -q -r python/requirements.txt 2>/tmp/pmlab-pip.log; then
    # Debian's own python3 refuses pip installs (PEP 668): take Debian's packages instead.
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
      python3-matplotlib python3-numpy python3-pytest >/dev/null
  fi
  python3 -c 'import matplotlib, numpy, pytest' || { cat /tmp/pmlab-pip.log >&2; exit 1; }
fi

# scripts/check_layout.py measures functions with lizard, which Debian does not package: pip, into the
# user's site when the system's Python refuses installs (PEP 668).
if ! python3 -c 'import lizard' 2>/dev/null; then
  echo "setup: installing the Python package lizard"
  if ! python3 -m pip --version >/dev/null 2>&1; then
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
  fi
  python3 -m pip install -q lizard 2>/tmp/pmlab-pip.log ||
    python3 -m pip install -q --user --break-system-packages lizard 2>>/tmp/pmlab-pip.log
  python3 -c 'import lizard' || { cat /tmp/pmlab-pip.log >&2; exit 1; }
fi
