#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets with clang (ASan + UBSan) in build-fuzz and runs each for
# FUZZ_SECONDS (default 600), one after another, then the Python validator's target under atheris.
# Not part of `make test` (which replays the corpus); installs clang and atheris when missing.
#
#   FUZZ_SECONDS=60 make fuzz            # a shorter pass
#   FUZZ_TARGETS="pool_header" make fuzz # some targets only (FUZZ_KEEP_SUMMARY=1 appends to the summary)
#
# New inputs go to build-fuzz/corpus/<target> (tests/fuzz/corpus/<target> is read, never written);
# crashes, hangs and leaks to build-fuzz/findings/<target>/; a summary line per target to
# build-fuzz/fuzz-summary.txt. A finding is fixed, then minimized into tests/fuzz/corpus/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-600}
dir=${FUZZ_DIR:-build-fuzz}
cxx=""
for c in clang++-16 clang++; do command -v "$c" >/dev/null && { cxx=$c; break; }; done
if [ -z "$cxx" ] || ! ls /usr/lib/llvm-16/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ] || command -v sudo >/dev/null; then
    echo "fuzz: installing clang-16 and libclang-rt-16-dev (libFuzzer)"
    sudo_cmd=(); [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends clang-16 libclang-rt-16-dev >/dev/null
    cxx=clang++-16
  else
    echo "fuzz: needs clang with libFuzzer: apt-get install clang-16 libclang-rt-16-dev" >&2
    exit 2
  fi
fi
cc=${cxx/clang++/clang}

if [ ! -f "$dir/build.ninja" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" \
    -DPMLAB_FUZZ=ON -DPMLAB_WERROR=OFF -DBUILD_TESTING=OFF -DPMLAB_SANITIZE=fuzzer-no-link,address,undefined
fi
nice -n 10 ninja -C "$dir" fuzz_targets

targets=${FUZZ_TARGETS:-$(cd tests/fuzz && ls ./*_fuzz.cpp ./*_fuzz.py | sed 's|^\./||; s/_fuzz\.\(cpp\|py\)$//' | sort -u)}
summary="$dir/fuzz-summary.txt"
[ -n "${FUZZ_KEEP_SUMMARY:-}" ] || : > "$summary"
status=0
for t in $targets; do
  mkdir -p "$dir/corpus/$t" "$dir/findings/$t" "tests/fuzz/corpus/$t"
  # Inputs that are files need room for the structures in them: a pool header is 4 KiB, recovery
  # scans a whole pool image, and a results.json seed is tens of KiB.
  case "$t" in
    pool_header) max_len=16384 ;;
    layout_recovery | results_schema) max_len=65536 ;;
    *) max_len=4096 ;;
  esac
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len="$max_len" -close_fd_mask=3
        -artifact_prefix="$dir/findings/$t/" -print_final_stats=1 "$dir/corpus/$t" "tests/fuzz/corpus/$t")
  if [ -f "tests/fuzz/${t}_fuzz.py" ]; then
    python3 -c 'import atheris' 2>/dev/null || python3 -m pip install -q atheris
    cmd=(python3 "tests/fuzz/${t}_fuzz.py" "${args[@]}")
  else
    cmd=("$dir/fuzz_$t" "${args[@]}")
  fi
  echo "fuzz: $t for ${seconds}s"
  log="$dir/findings/$t/fuzz.log"
  rc=0
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    nice -n 10 "${cmd[@]}" >"$log" 2>&1 || rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo "?")
  findings=$(find "$dir/findings/$t" -name 'crash-*' -o -name 'timeout-*' -o -name 'leak-*' -o -name 'oom-*' | wc -l)
  echo "$t: ${seconds}s, $execs executions, coverage $cov, $findings findings, exit $rc" | tee -a "$summary"
  if [ "$rc" -ne 0 ] || [ "$findings" -ne 0 ]; then status=1; fi
done
exit $status
