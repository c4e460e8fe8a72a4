# pmlab front door. `make run` and `make test` are the two commands of the README's quick start.
SHELL := /bin/bash

BUILD_DIR ?= build
ASAN_DIR  ?= build-asan
TSAN_DIR  ?= build-tsan
SUITE     ?= all
POOL      ?=
RUN_ID    := $(shell date -u +%Y%m%d-%H%M%S)
OUT       ?= results/$(RUN_ID)
JOBS      ?= $(shell nproc)

PREFIX    ?= /usr/local

.PHONY: all setup build build-asan build-tsan run test test-cpp test-asan test-tsan test-python fuzz install clean

all: build

setup:
	@scripts/setup.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release

$(ASAN_DIR)/build.ninja:
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPMLAB_SANITIZE=address,undefined

# -O1 -g1: races are found the same and reports keep file:line, at half the compile time of -O2 -g (the
# TSan build is the slowest of the three CI builds).
$(TSAN_DIR)/build.ninja:
	cmake -S . -B $(TSAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPMLAB_SANITIZE=thread \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"

build: setup $(BUILD_DIR)/build.ninja
	ninja -C $(BUILD_DIR)

build-asan: setup $(ASAN_DIR)/build.ninja
	ninja -C $(ASAN_DIR)

# The quick tour of every suite on a pool under /dev/shm (or POOL=…), then the report.
run: build
	@rc=0; $(BUILD_DIR)/pmlab run $(SUITE) --quick --out $(OUT) $(if $(POOL),--pool $(POOL)) || rc=$$?; \
	if [ -f $(OUT)/results.json ]; then $(BUILD_DIR)/pmlab report $(OUT) || rc=$$?; fi; \
	echo "results: $(OUT)/results.json"; echo "report:  $(OUT)/report.html"; exit $$rc

test-cpp: build
	cd $(BUILD_DIR) && ctest -j$(JOBS) --output-on-failure

test-asan: build-asan
	cd $(ASAN_DIR) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest -j$(JOBS) --output-on-failure

# Concurrent designs under ThreadSanitizer: the tests named *Concurrent* or *Stress*, in a test program that
# CMake makes of the files holding them (CMakeLists.txt).
build-tsan: setup $(TSAN_DIR)/build.ninja
	ninja -C $(TSAN_DIR) pmlab_tests

test-tsan: build-tsan
	cd $(TSAN_DIR) && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  ctest -j$(JOBS) --output-on-failure -R 'Concurrent|Stress'

# Two sessions: each test folder has its own conftest module.
test-python: build
	python3 -m pytest -q python/tests
	python3 -m pytest -q tests/cli

test: test-cpp test-asan test-tsan test-python

# The command, the runtime crash exec preloads, the published data and the report renderer under PREFIX
# (bin/, lib/pmlab/, share/pmlab/); docs/install.md.
install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

# libFuzzer targets (clang, ASan+UBSan) in build-fuzz, each for FUZZ_SECONDS (default 600); not part of
# `make test`, which replays their corpus (tests/fuzz/corpus). See docs/reliability.md.
fuzz: setup
	scripts/fuzz.sh

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR) build-fuzz
