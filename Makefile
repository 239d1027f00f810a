# axle's only build file. Needs a C11 compiler and make, nothing else.
#
#   make          library, tools, examples, test programs
#   make test     every test; ends with "N passed, N failed"
#   make check    the same, built with AddressSanitizer and UBSan
#   make bench    axle beside oneDNN, OpenBLAS, PyTorch, NumPy (bench/run.sh):
#                 one table, results.csv and results.png in build/bench
#   make bench-deps   installs those peers from Debian's packages
#   make test-deps    installs what some tests use (Open MPI), else they skip
#   make bench-detail axle's own benchmarks (bench/detail.sh)
#   make demo     runs the bundled example module
#   make examples the programs of examples/aot, each linking an object axle-aot
#                 wrote and nothing else of axle's (docs/aot.md): built and run
#   make fetch-cuobjdump  cuobjdump + nvdisasm into build/tools/cuda (SASS checks)
#   make fuzz     libFuzzer targets for the parser and for the whole compile
#                 path (needs clang); FUZZ_SECONDS=600 each
#   make install  PREFIX=/usr/local DESTDIR= (libraries, header, tools, docs, axle.pc)
#   make uninstall  the same PREFIX and DESTDIR
#
# Any of them builds faster with -jN (N files at a time; .ci/run uses one a
# core). The tests run on every core whatever -j says (JOBS=N to change).

# No built-in rules or suffixes: with them, and the match-anything rules for
# the programs below, make tried dozens of implicit rules for every header and
# source and took half a minute to find nothing to do.
MAKEFLAGS += -r
.SUFFIXES:

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2
PREFIX  ?= /usr/local
CFLAGS  := -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -g $(OPT) \
           -Iinclude -Isrc/ir -Isrc $(EXTRA_CFLAGS)
# What the library needs from the system: libm for the evaluator's math,
# pthreads for the thread pool, dlopen for the CUDA driver (axle.pc says so).
LDLIBS  := -lm -lpthread -ldl
ifeq ($(SAN),1)
  SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
  CFLAGS   += $(SANFLAGS)
  LDFLAGS  += $(SANFLAGS)
endif

LIB_SRC   := $(sort $(wildcard src/ir/*.c src/ir/*/*.c src/opt/*.c src/emit_x86/*.c src/emit_ptx/*.c src/runtime/*.c))
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB       := $(BUILD)/libaxle.a
# The shared library's version comes from include/axle.h; its soname names
# the major version only (libaxle.so.0), the ABI a program is linked to.
AXLE_VERSION := $(shell sed -n 's/^\#define AXLE_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' include/axle.h | paste -sd.)
SONAME    := libaxle.so.$(firstword $(subst ., ,$(AXLE_VERSION)))
SHLIB     := $(BUILD)/libaxle.so
TOOL_SRC  := $(sort $(wildcard tools/*.c))
TOOLS     := $(TOOL_SRC:tools/%.c=$(BUILD)/%)
EX_SRC    := $(sort $(wildcard examples/*.c))
EXAMPLES  := $(EX_SRC:examples/%.c=$(BUILD)/examples/%)
TEST_SRC  := $(sort $(wildcard tests/unit/test_*.c tests/support/*.c))
BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCHES   := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
TESTS     := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(patsubst tests/support/%.c,$(BUILD)/tests/%,$(TEST_SRC)))

.PHONY: all test test-deps check bench bench-detail bench-deps demo fuzz fuzz-parse fuzz-compile install uninstall clean fetch-cuobjdump
# The compile-path fuzz target built with the ordinary compiler and a main
# that replays the files it is given (tests/fuzz/replay_main.c).
FUZZ_REPLAY := $(BUILD)/tests/fuzz_compile_replay
# Keep object files of tools and tests (make would delete them as intermediates).
.SECONDARY:
FAKE_CUDA := $(BUILD)/tests/fake/libcuda.so.1
FAKE_NCCL := $(BUILD)/tests/fake/libnccl.so.2
all: $(LIB) $(LIB_INTERNAL) $(SHLIB) $(TOOLS) $(EXAMPLES) $(TESTS) $(FAKE_CUDA) $(FAKE_NCCL) $(FUZZ_REPLAY)

# A fake CUDA driver for the tests of the GPU runtime's error paths (built
# without sanitizers: it stands in for a library that has none).
$(FAKE_CUDA): tests/fake_cuda/fake_libcuda.c $(wildcard tests/fake_cuda/*.h)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -O1 -fPIC -shared $< -o $@ -lm

# A fake NCCL over the fake driver's simulated devices (tests/fake_cuda/fake_libnccl.c).
$(FAKE_NCCL): tests/fake_cuda/fake_libnccl.c src/runtime/nccl.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -O1 -fPIC -shared -Iinclude -Isrc/ir -Isrc $< -o $@ -ldl -lpthread

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# The library's objects are position-independent: the same objects make the
# static and the shared library. They are compiled with hidden visibility:
# only what include/axle.h marks AXLE_API is exported.
$(LIB_OBJ): CFLAGS += -fPIC -fvisibility=hidden

# Two static archives of the same objects:
#   libaxle.a           what is installed: one object, partially linked
#                       (ld -r) so the modules' calls to one another are
#                       resolved inside it, then every symbol but axle_*
#                       made local (objcopy), so the library's internal
#                       names cannot clash with a program's.
#   libaxle_internal.a  the objects as they are, internal names global (but
#                       hidden): what the tools, tests and benchmarks link,
#                       since they call the modules directly. Never installed.
# The examples use the public API only and link libaxle.a.
LIB_INTERNAL := $(BUILD)/libaxle_internal.a
$(LIB_INTERNAL): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ $(BUILD)/axle.o
	@echo "$(LD) -r (the $(words $^) library objects) -o $(BUILD)/axle-all.o"
	@$(LD) -r $^ -o $(BUILD)/axle-all.o
	objcopy --localize-hidden --wildcard --keep-global-symbol='axle_*' $(BUILD)/axle-all.o $(BUILD)/axle.o
	rm -f $(BUILD)/axle-all.o
	ar rcs $@ $(BUILD)/axle.o

# libaxle.so carries the soname; libaxle.so.0 beside it lets a program linked
# here run with LD_LIBRARY_PATH=build.
$(SHLIB): $(LIB_OBJ)
	@echo "$(CC) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) (the $(words $^) library objects) $(LDLIBS) -o $@"
	@$(CC) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) $^ $(LDLIBS) -o $@
	ln -sf libaxle.so $(BUILD)/$(SONAME)

$(TOOLS): $(BUILD)/%: $(BUILD)/tools/%.o $(LIB_INTERNAL)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(EXAMPLES): $(BUILD)/examples/%: $(BUILD)/examples/%.o $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BENCHES): $(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIB_INTERNAL)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

UNIT_TESTS    := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(filter tests/unit/%,$(TEST_SRC)))
SUPPORT_TESTS := $(patsubst tests/support/%.c,$(BUILD)/tests/%,$(filter tests/support/%,$(TEST_SRC)))
$(UNIT_TESTS): $(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(LIB_INTERNAL)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(SUPPORT_TESTS): $(BUILD)/tests/%: $(BUILD)/tests/support/%.o $(LIB_INTERNAL)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

test: all
	@bash tests/run.sh $(BUILD)

check:
	$(MAKE) BUILD=build/san SAN=1 OPT=-O1 test

# Benchmarks: axle beside the peers installed here, one thread, one table,
# BUILD/bench/results.csv and .png (bench/run.sh; BENCH_QUICK=1 for a quick
# check). The peers' C drivers are built only where their headers exist.
PEER_CFLAGS := -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -O2
PEERS := $(if $(wildcard /usr/include/dnnl.h),$(BUILD)/bench/peers/dnnl_peer) \
         $(if $(wildcard /usr/include/cblas.h /usr/include/*/cblas.h),$(BUILD)/bench/peers/openblas_peer)
bench: all $(BENCHES) $(PEERS)
	@bash bench/run.sh $(BUILD)

$(BUILD)/bench/peers/dnnl_peer: bench/peers/dnnl_peer.c bench/peers/peer_timing.h
	@mkdir -p $(dir $@)
	$(CC) $(PEER_CFLAGS) $< -ldnnl -o $@

$(BUILD)/bench/peers/openblas_peer: bench/peers/openblas_peer.c bench/peers/peer_timing.h
	@mkdir -p $(dir $@)
	$(CC) $(PEER_CFLAGS) $< -lopenblas -o $@

# axle's own benchmarks, no peers: optimizer time, the corpus models, SGEMM
# against the FMA peak, the CPU backend at 1 and 2 threads (bench/detail.sh).
bench-detail: all $(BENCHES)
	@bash bench/detail.sh $(BUILD)

# The peers of make bench, from Debian's packages (needs root): oneDNN,
# OpenBLAS, PyTorch, NumPy, and gnuplot for the chart.
bench-deps:
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
	  libdnnl-dev libopenblas-dev python3-torch python3-numpy gnuplot-nox

# What make test uses where it is installed, and skips with a reason where
# not: Open MPI for the tests across MPI ranks (tests/devices/mpi.sh).
test-deps:
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openmpi-bin libopenmpi-dev

# XLA's classic example as JAX lowers it, run on NumPy-made inputs and compared
# with NumPy's answer (the corpus case demo_reduce_sum holds both).
# It builds only what it runs (the library, axle-run, npycmp), on every core
# unless a -j was given.
DEMO := tests/hlo/demo_reduce_sum
DEMO_PROGRAMS := $(BUILD)/axle-run $(BUILD)/tests/npycmp
JOBS = $(shell nproc 2>/dev/null || echo 2)
demo:
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS)) $(DEMO_PROGRAMS)
	@echo "== examples/reduce_sum.hlo: reduce_sum(x + y*z) over f32[1024], as JAX lowers it"
	@cat examples/reduce_sum.hlo
	@echo "== axle-run: the CPU backend, x86-64 code axle generated (3 inputs from $(DEMO)/in*.npy)"
	@$(BUILD)/axle-run --in $(DEMO)/in0.npy --in $(DEMO)/in1.npy \
	  --in $(DEMO)/in2.npy --out $(BUILD)/demo-out --time 20 examples/reduce_sum.hlo
	@echo "== the same on the reference evaluator (--backend interp)"
	@$(BUILD)/axle-run --backend interp --in $(DEMO)/in0.npy --in $(DEMO)/in1.npy \
	  --in $(DEMO)/in2.npy --time 20 examples/reduce_sum.hlo
	@echo "== compared with NumPy (float64 sum, rounded to f32): $(DEMO)/out0.npy"
	@$(BUILD)/tests/npycmp $(DEMO)/out0.npy $(BUILD)/demo-out/out0.npy 1e-4 1e-4 && echo "same as NumPy"

# The programs of examples/aot (docs/aot.md): axle-aot writes BUILD/aot/NAME.o
# and NAME.h from examples/aot/NAME.hlo; examples/aot/NAME.c links that object
# and nothing else of axle's. hello is the baseline of their footprint, built
# the same way. AOT_CPU=sse4|avx2|avx512 targets another level (default: this
# machine's).
AOT_EXAMPLES := mlp_classifier lstm
AOT_CPU      ?= native
AOT_EX_CFLAGS := -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -O2
.PHONY: examples
examples: $(AOT_EXAMPLES:%=$(BUILD)/examples/aot/%) $(BUILD)/examples/aot/hello
	@for e in $(AOT_EXAMPLES); do echo "== $(BUILD)/examples/aot/$$e"; $(BUILD)/examples/aot/$$e || exit 1; done

$(BUILD)/aot/%.o: examples/aot/%.hlo $(BUILD)/axle-aot
	@mkdir -p $(dir $@)
	$(BUILD)/axle-aot --cpu $(AOT_CPU) $< -o $@ --header $(BUILD)/aot/$*.h

$(BUILD)/examples/aot/hello: examples/aot/hello.c
	@mkdir -p $(dir $@)
	$(CC) $(AOT_EX_CFLAGS) $< -o $@

$(BUILD)/examples/aot/%: examples/aot/%.c $(BUILD)/aot/%.o
	@mkdir -p $(dir $@)
	$(CC) $(AOT_EX_CFLAGS) -I$(BUILD)/aot $< $(BUILD)/aot/$*.o -o $@

# cuobjdump for the SASS checks, where the CUDA install has ptxas only
# (tools/fetch-cuobjdump.sh); without it those checks skip with a message.
fetch-cuobjdump:
	@bash tools/fetch-cuobjdump.sh

FUZZ_SECONDS ?= 600
fuzz: fuzz-parse fuzz-compile
fuzz-parse:
	@mkdir -p $(BUILD)/fuzz/corpus-run tests/fuzz/corpus
	clang -std=c11 -D_DEFAULT_SOURCE -g -O1 -Iinclude -Isrc/ir -Isrc -include tests/fuzz/clang_compat.h \
	  -fsanitize=fuzzer,address,undefined $(filter src/ir/%,$(LIB_SRC)) tests/fuzz/fuzz_parse.c \
	  -lm -o $(BUILD)/fuzz/fuzz_parse
	cp -n tests/hlo/*.hlo tests/fuzz/corpus/ 2>/dev/null || true
	$(BUILD)/fuzz/fuzz_parse -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	  -max_len=8192 -dict=tests/fuzz/hlo.dict $(BUILD)/fuzz/corpus-run tests/fuzz/corpus

# The whole compile path (tests/fuzz/fuzz_compile.c): the library built
# apart with clang, ASan, UBSan and libFuzzer's coverage, one object a
# file (so -jN helps); tests/fuzz/clang_compat.h gives clang 14 CMPLX.
FUZZ_CFLAGS := -std=c11 -D_DEFAULT_SOURCE -g -O1 -Iinclude -Isrc/ir -Isrc -include tests/fuzz/clang_compat.h \
               -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_OBJ    := $(LIB_SRC:%.c=$(BUILD)/fuzz/obj/%.o)
$(BUILD)/fuzz/obj/%.o: %.c tests/fuzz/clang_compat.h
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/fuzz/fuzz_compile: tests/fuzz/fuzz_compile.c $(FUZZ_OBJ)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer $^ -lm -o $@
fuzz-compile: $(BUILD)/fuzz/fuzz_compile
	@mkdir -p $(BUILD)/fuzz/compile-corpus-run tests/fuzz/corpus
	cp -n tests/hlo/*.hlo tests/fuzz/corpus/ 2>/dev/null || true
	$(BUILD)/fuzz/fuzz_compile -max_total_time=$(FUZZ_SECONDS) -timeout=30 -rss_limit_mb=4096 \
	  -max_len=8192 -dict=tests/fuzz/hlo.dict $(BUILD)/fuzz/compile-corpus-run tests/fuzz/corpus

$(FUZZ_REPLAY): $(BUILD)/tests/fuzz/fuzz_compile.o $(BUILD)/tests/fuzz/replay_main.o $(LIB_INTERNAL)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# make install [PREFIX=/usr/local] [DESTDIR=stage]: the libraries (the shared
# one as libaxle.so.VERSION with the soname's and the linker's symlinks), the
# header, the tools, the docs and axle.pc for pkg-config. DESTDIR is a staging
# root: files go to $(DESTDIR)$(PREFIX)/... but say $(PREFIX) inside.
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DOCDIR     ?= $(PREFIX)/share/doc/axle
PCDIR      ?= $(LIBDIR)/pkgconfig
# The docs keep their layout (README.md links docs/NAME.md).
DOCS       := README.md LICENSE CHANGELOG.md
DOCS_DOCS  := $(sort $(wildcard docs/*.md))

$(BUILD)/axle.pc: axle.pc.in include/axle.h
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(AXLE_VERSION)|' -e '/^#/d' $< >$@

# The .pc file holds PREFIX, so it is remade for every install.
.PHONY: $(BUILD)/axle.pc
install: $(LIB) $(LIB_INTERNAL) $(SHLIB) $(TOOLS) $(BUILD)/axle.pc
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
	  $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(PCDIR)
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/libaxle.a
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/libaxle.so.$(AXLE_VERSION)
	ln -sf libaxle.so.$(AXLE_VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libaxle.so
	install -m 644 include/axle.h $(DESTDIR)$(INCLUDEDIR)/axle.h
	install -m 755 $(TOOLS) $(DESTDIR)$(BINDIR)/
	install -m 644 $(DOCS) $(DESTDIR)$(DOCDIR)/
	install -m 644 $(DOCS_DOCS) $(DESTDIR)$(DOCDIR)/docs/
	install -m 644 $(BUILD)/axle.pc $(DESTDIR)$(PCDIR)/axle.pc

# Removes what install put there (the same PREFIX and DESTDIR), and the
# directories install made for axle alone.
uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libaxle.a $(DESTDIR)$(LIBDIR)/libaxle.so.$(AXLE_VERSION) \
	  $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libaxle.so \
	  $(DESTDIR)$(INCLUDEDIR)/axle.h $(DESTDIR)$(PCDIR)/axle.pc \
	  $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(TOOLS))) \
	  $(addprefix $(DESTDIR)$(DOCDIR)/,$(DOCS) $(DOCS_DOCS))
	-rmdir $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DOCDIR) 2>/dev/null

# The Python package (python/axle, pure Python over libaxle.so) goes to
# PREFIX's site-packages as Debian's python3 lays them out (python/site_dir.py;
# PYTHONDIR overrides), with axle/_install.py naming LIBDIR so that it finds
# the library installed beside it. Without a python3 it is left out, with a note.
PYTHON ?= $(firstword $(wildcard /usr/bin/python3) python3)
PY_FILES := python/axle/__init__.py python/axle/_capi.py
.PHONY: install-python uninstall-python
install: install-python
uninstall: uninstall-python
install-python:
	@dir=$${PYTHONDIR:-$$($(PYTHON) python/site_dir.py $(PREFIX) 2>/dev/null)}; \
	if [ -z "$$dir" ]; then echo "note: no $(PYTHON): the Python package is not installed"; exit 0; fi; \
	echo "install python/axle -> $(DESTDIR)$$dir/axle"; \
	install -d $(DESTDIR)$$dir/axle && install -m 644 $(PY_FILES) $(DESTDIR)$$dir/axle/ && \
	printf '# Written by make install: where libaxle.so was installed.\nLIBDIR = "%s"\nSOVERSION = "%s"\n' \
	  '$(LIBDIR)' '$(subst libaxle.so.,,$(SONAME))' >$(DESTDIR)$$dir/axle/_install.py
uninstall-python:
	@dir=$${PYTHONDIR:-$$($(PYTHON) python/site_dir.py $(PREFIX) 2>/dev/null)}; \
	if [ -n "$$dir" ] && [ -d $(DESTDIR)$$dir/axle ]; then \
	  rm -rf $(DESTDIR)$$dir/axle/__pycache__ && \
	  rm -f $(addprefix $(DESTDIR)$$dir/axle/,$(notdir $(PY_FILES)) _install.py) && rmdir $(DESTDIR)$$dir/axle; fi

clean:
	rm -rf build

# Tests and examples too: without their .d files a change to ir.h left them
# compiled against the old struct layout.
-include $(LIB_OBJ:.o=.d) $(TOOLS:$(BUILD)/%=$(BUILD)/tools/%.d)
-include $(TEST_SRC:%.c=$(BUILD)/%.d) $(EX_SRC:%.c=$(BUILD)/%.d)
-include $(BENCH_SRC:%.c=$(BUILD)/%.d)
-include $(FUZZ_OBJ:.o=.d) $(BUILD)/tests/fuzz/fuzz_compile.d $(BUILD)/tests/fuzz/replay_main.d
