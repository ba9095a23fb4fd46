# NativeAuth — build, install and test.
#   make                     release libnativeauth.so (static Swift stdlib, only na_* exported, SONAME .so.1)
#   make install PREFIX=…    lib/libnativeauth.so{,.1,.$(VERSION)}, include/nativeauth.h, lib/pkgconfig/nativeauth.pc
#   make deps                install system packages (apt) needed to build and test
#   make demo                the main job: emulator + C and Python tutorials
#   make bench               load time, JSON boundary, cached token, peak memory (measured, never asserted)
#   make lint                swift format (.swift-format) and the 120-column rule; part of make test
#   make test                lint, then every test: swift test, MSAL interop, Python package, ABI checks, C tests
#                            under valgrind, the fuzz corpora replayed
#   make fuzz                each libFuzzer target for FUZZ_SECONDS (default 300); fuzz-ci: 30 s each
#   make clean
SHELL      := /bin/bash
PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
DESTDIR    ?=
SWIFT      ?= swift
CC         ?= cc
PYTHON     ?= python3
EMULATOR   := .build/debug/nativeauth-emulator
VERSION    := $(shell sed -n 's/^\#define NA_VERSION_STRING "\(.*\)"/\1/p' include/nativeauth.h)
SOMAJOR    := 1
RELEASE_SO := .build/release/libnativeauth.so
MAPFILE    := $(CURDIR)/Sources/NativeAuthCABI/nativeauth.map
LIB_FLAGS  := -c release --product nativeauth -Xswiftc -static-stdlib -Xswiftc -cross-module-optimization \
              -Xlinker --version-script=$(MAPFILE) -Xlinker -soname=libnativeauth.so.$(SOMAJOR)
CFLAGS_STRICT := -std=c99 -Wall -Wextra -Werror -pedantic -O1 -g
VALGRIND   := valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite -q
# A per-run scratch directory for installs and binaries (tests stay parallel-safe).
ifndef NA_TMP
NA_TMP     := $(shell mktemp -d 2>/dev/null || echo /tmp/nativeauth-make)
endif
export NA_TMP

.PHONY: all lint deps lib emulator examples demo bench install uninstall test test-swift test-interop test-python test-examples test-abi check-symbols check-ldd test-c clean \
        test-fuzz-corpus fuzz fuzz-ci fuzz-build fuzz-seeds

all: lib

# System packages for building and testing (apt; uses sudo when not root).
deps:
	@bash .ci/deps.sh

lib: $(RELEASE_SO) .build/release/libnativeauth.so.$(SOMAJOR)

# The SONAME next to the library, so programs linked in-tree (bindings/c without an install) find it.
.build/release/libnativeauth.so.$(SOMAJOR): $(RELEASE_SO)
	ln -sf libnativeauth.so $@

$(RELEASE_SO): Package.swift $(shell find Sources -type f) include/nativeauth.h
	@if [ -f $@ ] && [ $(MAPFILE) -nt $@ ]; then rm -f $@; fi  # SwiftPM does not relink for a new version script
	$(SWIFT) build $(LIB_FLAGS)
	@touch $@

install: lib
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include
	install -m 0755 $(RELEASE_SO) $(DESTDIR)$(LIBDIR)/libnativeauth.so.$(VERSION)
	strip --strip-unneeded $(DESTDIR)$(LIBDIR)/libnativeauth.so.$(VERSION)
	ln -sf libnativeauth.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libnativeauth.so.$(SOMAJOR)
	ln -sf libnativeauth.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libnativeauth.so
	install -m 0644 include/nativeauth.h $(DESTDIR)$(PREFIX)/include/nativeauth.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
	    pkgconfig/nativeauth.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/nativeauth.pc

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libnativeauth.so $(DESTDIR)$(LIBDIR)/libnativeauth.so.$(SOMAJOR) \
	      $(DESTDIR)$(LIBDIR)/libnativeauth.so.$(VERSION) $(DESTDIR)$(PREFIX)/include/nativeauth.h \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/nativeauth.pc

test: lint test-swift test-fuzz-corpus test-interop test-python test-abi test-examples
	@rm -rf $(NA_TMP)

# The tree is formatted as .swift-format says, and no line is longer than 120 columns.
lint:
	@bash .ci/lint

# The main job: emulator + the C and Python tutorials (sign in, tokens for two APIs, API calls, sign out).
demo: lib emulator examples
	EMULATOR=$(EMULATOR) bash bindings/demo.sh

# The C examples, against the in-tree library (or an installed one that pkg-config knows).
examples: lib
	$(MAKE) -C bindings/c

# The Python package against the emulator.
test-python: lib emulator
	$(PYTHON) -m venv $(NA_TMP)/venv
	$(NA_TMP)/venv/bin/pip install -q --disable-pip-version-check ./bindings/python
	cd $(NA_TMP) && NATIVEAUTH_LIBRARY=$(CURDIR)/$(RELEASE_SO) $(NA_TMP)/venv/bin/python -c \
	    "import nativeauth; print('pip-installed nativeauth', nativeauth.__version__, 'over libnativeauth', nativeauth.library_version)"
	PYTHONPATH=$(CURDIR)/bindings/python/src NATIVEAUTH_EMULATOR=$(CURDIR)/$(EMULATOR) $(PYTHON) -m pytest -q bindings/python/tests

# The C examples built through pkg-config from an install into a temporary prefix, run under valgrind.
test-examples: lib emulator
	$(MAKE) --no-print-directory install PREFIX=$(NA_TMP)/prefix
	PKG_CONFIG_PATH=$(NA_TMP)/prefix/lib/pkgconfig $(MAKE) --no-print-directory -C bindings/c OUT=$(NA_TMP)/examples
	NATIVEAUTH_EXAMPLES_DIR=$(NA_TMP)/examples NATIVEAUTH_EMULATOR=$(CURDIR)/$(EMULATOR) VALGRIND="$(VALGRIND)" \
	    $(PYTHON) -m pytest -q bindings/c/tests

# The flow tests start the emulator executable, so it is built first.
test-swift: emulator
	NATIVEAUTH_EMULATOR=$(CURDIR)/$(EMULATOR) $(SWIFT) test

test-abi: check-symbols check-ldd test-c

# A client nobody here wrote (MSAL for Python) against the emulator in --tls mode.
test-interop: emulator
	env -u REQUESTS_CA_BUNDLE -u CURL_CA_BUNDLE NATIVEAUTH_EMULATOR=$(EMULATOR) $(PYTHON) -m pytest -q Tests/interop

# The emulator executable (debug build, shared with `swift test`).
emulator:
	$(SWIFT) build --product nativeauth-emulator


# The exported na_* symbols equal the header's declarations, and nothing else is exported.
check-symbols: lib
	@nm -D --defined-only $(RELEASE_SO) | awk '$$2 ~ /^[A-Z]$$/ && $$2 != "A" {print $$3}' | sed 's/@.*//' | sort -u > $(NA_TMP)/exported
	@$(CC) -E -P include/nativeauth.h | grep -oE '\bna_[a-z0-9_]+[[:space:]]*\(' | tr -d ' (' | sort -u > $(NA_TMP)/declared
	@if ! diff -u $(NA_TMP)/declared $(NA_TMP)/exported; then echo "check-symbols: exports differ from the header"; exit 1; fi
	@echo "check-symbols: $$(wc -l < $(NA_TMP)/exported) symbols, all na_*, all declared"

# The release .so needs no Swift runtime library.
check-ldd: lib
	@if ldd $(RELEASE_SO) | grep -iE 'swift|Foundation|dispatch'; then echo "check-ldd: Swift runtime linked"; exit 1; fi
	@echo "check-ldd: no Swift runtime dependency ($$(stat -c %s $(RELEASE_SO)) bytes unstripped)"

# Install into a temporary prefix, build the C test through pkg-config, run it under valgrind.
test-c: lib
	$(MAKE) --no-print-directory install PREFIX=$(NA_TMP)/prefix
	$(CC) $(CFLAGS_STRICT) Tests/c/abi_test.c -o $(NA_TMP)/abi_test \
	    $$(PKG_CONFIG_PATH=$(NA_TMP)/prefix/lib/pkgconfig pkg-config --cflags --libs nativeauth) -lpthread
	$(VALGRIND) $(NA_TMP)/abi_test

# Speed and memory, measured (never asserted in tests), beside MSAL for Python in the same run: one table.
bench: lib emulator
	@$(MAKE) --no-print-directory install PREFIX=$(NA_TMP)/prefix > /dev/null
	$(CC) -std=c99 -O2 -Wall -Wextra Tests/bench/bench.c -o $(NA_TMP)/bench -ldl -lpthread
	@$(PYTHON) -m venv $(NA_TMP)/bench-venv
	@$(NA_TMP)/bench-venv/bin/pip install -q --disable-pip-version-check msal
	@echo "libnativeauth.so: $$(stat -c %s $(NA_TMP)/prefix/lib/libnativeauth.so.$(VERSION)) bytes stripped"
	env -u REQUESTS_CA_BUNDLE -u CURL_CA_BUNDLE $(NA_TMP)/bench-venv/bin/python Tests/bench/bench.py \
	    $(CURDIR)/$(EMULATOR) $(NA_TMP)/bench $(NA_TMP)/prefix/lib/libnativeauth.so.$(VERSION)
	@rm -rf $(NA_TMP)

# ---- Fuzzing (Tests/Fuzz/README.md) ---------------------------------------------------------------------------
# One executable, nativeauth-fuzz, holds every target. A plain build replays the committed corpora; the fuzz build
# (its own build path, release + coverage + ASan) is libFuzzer. Working corpora and crash inputs: $(FUZZ_OUT).
FUZZ_SECONDS ?= 300
FUZZ_BUILD   := .build-fuzz
FUZZ_BIN     := $(FUZZ_BUILD)/release/nativeauth-fuzz
FUZZ_OUT     ?= $(FUZZ_BUILD)/out
export FUZZ_OUT

# Every committed corpus file of every target, once, through the debug build (no sanitizer).
test-fuzz-corpus:
	$(SWIFT) build --product nativeauth-fuzz
	SWIFT_BACKTRACE=enable=no .build/debug/nativeauth-fuzz

fuzz-build:
	$(SWIFT) build --build-path $(FUZZ_BUILD) -c release --product nativeauth-fuzz -Xswiftc -enable-testing \
	    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING 2>&1 | grep -v 'Cannot export local symbol' ; \
	    exit $${PIPESTATUS[0]}

fuzz: fuzz-build
	bash .ci/fuzz $(FUZZ_BIN) $(FUZZ_SECONDS)

fuzz-ci: fuzz-build
	bash .ci/fuzz $(FUZZ_BIN) 30

# Rewrites Tests/Fuzz/corpus: the tests' documents, and answers recorded from a fresh emulator.
fuzz-seeds: emulator
	$(SWIFT) build --product nativeauth-fuzz
	bash .ci/fuzz-seeds .build/debug/nativeauth-fuzz $(EMULATOR)

clean:
	rm -rf .build $(FUZZ_BUILD) bindings/c/build bindings/python/build
