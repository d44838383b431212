# The README's commands. Each installs what is missing, configures, builds and runs.
PRESET ?= release
BUILD  := build/$(PRESET)
JOBS   ?= $(shell nproc)

# ccache, where installed (scripts/install-deps installs it), makes recompiling an unchanged file
# free; CCACHE_BASEDIR keys its cache on paths relative to the clone, so two clones share it.
ifneq ($(shell command -v ccache),)
export CMAKE_CXX_COMPILER_LAUNCHER ?= ccache
export CMAKE_C_COMPILER_LAUNCHER ?= ccache
export CCACHE_BASEDIR ?= $(CURDIR)
endif

.PHONY: all deps configure build test unit fuzz fuzz-build fuzz-long fuzz-seeds demo bench clean

all: build

deps:
	@./scripts/install-deps

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Every test: unit, integration (real processes on loopback), namespace (root), then each
# fuzz target briefly.
test: build
	cd $(BUILD) && ctest --output-on-failure -j 2 --timeout 300
	@$(MAKE) --no-print-directory fuzz

unit: build
	cd $(BUILD) && ctest --output-on-failure -L unit

# libFuzzer targets (tests/fuzz), built with clang and ASan+UBSan (preset fuzz). `make fuzz` runs
# each for FUZZ_SECONDS over its seed corpus (CI); `make fuzz-long` until FUZZ_LONG_RUNS
# executions or FUZZ_LONG_SECONDS, whichever comes first, and prints executions and coverage
# per target (docs/fuzzing.md). FUZZ_TARGETS="a_fuzz b_fuzz" runs only those.
FUZZ_SECONDS ?= 3
FUZZ_LONG_RUNS ?= 10000000
FUZZ_LONG_SECONDS ?= 600
FUZZ_TARGETS ?=
fuzz-build: deps
	@if [ ! -f build/fuzz/build.ninja ]; then cmake --preset fuzz >/dev/null; fi
	cmake --build build/fuzz -j $(JOBS) --target fuzzers

fuzz: fuzz-build
	@./scripts/run-fuzzers build/fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-long: fuzz-build
	@FUZZ_RUNS=$(FUZZ_LONG_RUNS) ./scripts/run-fuzzers build/fuzz $(FUZZ_LONG_SECONDS) $(FUZZ_TARGETS)

# Rewrites the seed corpora from the real encoders (tests/fuzz/fuzz_seeds.cc).
fuzz-seeds: fuzz-build
	build/fuzz/tests/fuzz/fuzz_seeds tests/fuzz/corpus

# Builds only what the demo runs (the vsc binary), not the tests and benchmarks; runs the main
# demo, then its ring part (about 8 s).
demo: configure
	cmake --build $(BUILD) -j $(JOBS) --target vsc
	$(BUILD)/src/cli/vsc demo
	$(BUILD)/src/cli/vsc demo --ring

bench: build
	@./scripts/run-bench $(BUILD)

clean:
	rm -rf build
