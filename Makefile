# The README's commands. Each installs what is missing, configures, builds and runs.
PRESET ?= release
BUILD  := build/$(PRESET)
JOBS   ?= $(shell nproc)

.PHONY: all deps configure build test unit fuzz demo bench clean

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

# libFuzzer targets, built with clang, each run for FUZZ_SECONDS over its seed corpus.
FUZZ_SECONDS ?= 10
fuzz: deps
	@if [ ! -f build/fuzz/build.ninja ]; then cmake --preset fuzz >/dev/null; fi
	cmake --build build/fuzz -j $(JOBS)
	@./scripts/run-fuzzers build/fuzz $(FUZZ_SECONDS)

# Builds only what the demo runs (the vsc binary), not the tests and benchmarks.
demo: configure
	cmake --build $(BUILD) -j $(JOBS) --target vsc
	$(BUILD)/src/cli/vsc demo

bench: build
	@./scripts/run-bench $(BUILD)

clean:
	rm -rf build
