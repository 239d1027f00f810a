# axle's only build file. Needs a C11 compiler and make, nothing else.
#
#   make          library, tools, examples, test programs
#   make test     every test; ends with "N passed, N failed"
#   make check    the same, built with AddressSanitizer and UBSan
#   make bench    axle beside oneDNN, OpenBLAS, PyTorch, NumPy (bench/run.sh):
#                 one table, results.csv and results.png in build/bench
#   make bench-deps   installs those peers from Debian's packages
#   make bench-detail axle's own benchmarks (bench/detail.sh)
#   make demo     runs the bundled example module
#   make fetch-cuobjdump  cuobjdump + nvdisasm into build/tools/cuda (SASS checks)
#   make fuzz     libFuzzer target for the parser (needs clang); FUZZ_SECONDS=600
#   make install  PREFIX=/usr/local
#
# Any of them builds faster with -jN (N files at a time; .ci/run uses one a
# core). The tests run on every core whatever -j says (JOBS=N to change).

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2
PREFIX  ?= /usr/local
CFLAGS  := -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -g $(OPT) \
           -Iinclude -Isrc/ir -Isrc $(EXTRA_CFLAGS)
LDLIBS  := -lm
ifeq ($(SAN),1)
  SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
  CFLAGS   += $(SANFLAGS)
  LDFLAGS  += $(SANFLAGS)
endif

LIB_SRC   := $(sort $(wildcard src/ir/*.c src/ir/*/*.c src/opt/*.c src/emit_x86/*.c src/emit_ptx/*.c src/runtime/*.c))
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB       := $(BUILD)/libaxle.a
TOOL_SRC  := $(sort $(wildcard tools/*.c))
TOOLS     := $(TOOL_SRC:tools/%.c=$(BUILD)/%)
EX_SRC    := $(sort $(wildcard examples/*.c))
EXAMPLES  := $(EX_SRC:examples/%.c=$(BUILD)/examples/%)
TEST_SRC  := $(sort $(wildcard tests/unit/test_*.c tests/support/*.c))
BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCHES   := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
TESTS     := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(patsubst tests/support/%.c,$(BUILD)/tests/%,$(TEST_SRC)))

.PHONY: all test check bench bench-detail bench-deps demo fuzz install clean fetch-cuobjdump
# Keep object files of tools and tests (make would delete them as intermediates).
.SECONDARY:
FAKE_CUDA := $(BUILD)/tests/fake/libcuda.so.1
all: $(LIB) $(TOOLS) $(EXAMPLES) $(TESTS) $(FAKE_CUDA)

# A fake CUDA driver for the tests of the GPU runtime's error paths (built
# without sanitizers: it stands in for a library that has none).
$(FAKE_CUDA): tests/fake_cuda/fake_libcuda.c $(wildcard tests/fake_cuda/*.h)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -O1 -fPIC -shared $< -o $@ -lm

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/%: $(BUILD)/tools/%.o $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/examples/%: $(BUILD)/examples/%.o $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tests/%: $(BUILD)/tests/support/%.o $(LIB)
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

# XLA's classic example as JAX lowers it, run on NumPy-made inputs and compared
# with NumPy's answer (the corpus case demo_reduce_sum holds both).
DEMO := tests/hlo/demo_reduce_sum
demo: all
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

# cuobjdump for the SASS checks, where the CUDA install has ptxas only
# (tools/fetch-cuobjdump.sh); without it those checks skip with a message.
fetch-cuobjdump:
	@bash tools/fetch-cuobjdump.sh

FUZZ_SECONDS ?= 600
fuzz:
	@mkdir -p $(BUILD)/fuzz/corpus-run tests/fuzz/corpus
	clang -std=c11 -D_DEFAULT_SOURCE -g -O1 -Iinclude -Isrc/ir -Isrc \
	  -fsanitize=fuzzer,address,undefined $(filter src/ir/%,$(LIB_SRC)) tests/fuzz/fuzz_parse.c \
	  -lm -o $(BUILD)/fuzz/fuzz_parse
	cp -n tests/hlo/*.hlo tests/fuzz/corpus/ 2>/dev/null || true
	$(BUILD)/fuzz/fuzz_parse -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	  -max_len=8192 -dict=tests/fuzz/hlo.dict $(BUILD)/fuzz/corpus-run tests/fuzz/corpus

install: all
	install -d $(PREFIX)/lib $(PREFIX)/include $(PREFIX)/bin
	install -m 644 $(LIB) $(PREFIX)/lib/
	install -m 644 include/axle.h $(PREFIX)/include/
	install -m 755 $(TOOLS) $(PREFIX)/bin/

clean:
	rm -rf build

# Tests and examples too: without their .d files a change to ir.h left them
# compiled against the old struct layout.
-include $(LIB_OBJ:.o=.d) $(TOOLS:$(BUILD)/%=$(BUILD)/tools/%.d)
-include $(TEST_SRC:%.c=$(BUILD)/%.d) $(EX_SRC:%.c=$(BUILD)/%.d)
-include $(BENCH_SRC:%.c=$(BUILD)/%.d)
