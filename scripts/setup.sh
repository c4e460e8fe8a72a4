#!/usr/bin/env bash
# Installs what pmlab needs to build, run and test, idempotently: Debian packages, then Python packages.
# Fast when everything is there (it only asks dpkg and python).
set -euo pipefail
cd "$(dirname "$0")/.."

debs=(cmake ninja-build g++ make pkg-config git dpkg-dev file
      libpmem-dev libpmem2-dev libpmemobj-dev libpmemlog-dev libpmemblk-dev
      libnuma-dev libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev libfmt-dev
      fio likwid linux-perf python3
      chromium)  # the report's browser test (python/tests/test_browser.py) renders it headless
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
