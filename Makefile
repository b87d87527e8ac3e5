# vpaudit - one plain Makefile.  `make` builds ./vpaudit; see README.md.
CC      ?= cc
# -fvect-cost-model=dynamic: GCC 12's -O2 vectorises only loops whose trip count is a
# multiple of the vector width; this lets it vectorise the layer loops too.  GCC does not
# reorder floating-point sums without -ffast-math, so the values are the same to the bit
# (README.md, "Reproducible results")
CFLAGS  ?= -O2 -fvect-cost-model=dynamic
WARN    := -std=c11 -Wall -Wextra -Werror -Wno-missing-field-initializers -D_GNU_SOURCE
# (-Wno-missing-field-initializers: key tables leave a key's trailing binding fields
# to their zero, as C guarantees; see config/config.h "Typed options")
YAML_CFLAGS := $(shell pkg-config --cflags yaml-0.1 2>/dev/null)
YAML_LIBS   := $(shell pkg-config --libs yaml-0.1 2>/dev/null || echo -lyaml)
# audio/: libsndfile (audio files), KissFFT (BSD-3, the FFT of the features), libsoxr (resampling)
AUDIO_CFLAGS := $(shell pkg-config --cflags sndfile kissfft-float soxr 2>/dev/null)
AUDIO_LIBS   := $(shell pkg-config --libs sndfile kissfft-float soxr 2>/dev/null || echo -lsndfile -lkissfft-float -lsoxr)
CPPFLAGS += -I. -MMD -MP $(YAML_CFLAGS) $(AUDIO_CFLAGS)
LDLIBS   += $(YAML_LIBS) $(AUDIO_LIBS) -lprotobuf-c -llapacke -lopenblas -lm -lpthread
BUILD   ?= build
# report.pdf: cairo (PDF surface), Pango (text layout), librsvg (SVG figures as vectors)
PDF_PKGS    := pangocairo cairo-pdf librsvg-2.0
PDF_CFLAGS  := $(patsubst -I%,-isystem %,$(shell pkg-config --cflags $(PDF_PKGS) 2>/dev/null))
PDF_LIBS    := $(shell pkg-config --libs $(PDF_PKGS) 2>/dev/null || echo -lpangocairo-1.0 -lpango-1.0 -lrsvg-2 -lgobject-2.0 -lglib-2.0 -lcairo)
LDLIBS   += $(PDF_LIBS)
# audio/asr_ps.c: CMU PocketSphinx (the embedded recogniser, issue 30); its headers as system
# headers (they are not -Wextra clean)
PS_CFLAGS   := $(patsubst -I%,-isystem %,$(shell pkg-config --cflags pocketsphinx sphinxbase 2>/dev/null))
PS_LIBS     := $(shell pkg-config --libs pocketsphinx sphinxbase 2>/dev/null || echo -lpocketsphinx -lsphinxbase)
LDLIBS   += $(PS_LIBS)
# tools/espeak_phones.c alone links libespeak-ng (GPL-3+): ./vpaudit-espeak-phones, the phone
# timing of synth-corpus's espeak-ng utterances (issue 32), run by vpaudit with fork/exec
ESPEAK_LIBS := -lespeak-ng

LIB_SRC  := $(sort $(wildcard base/*.c formats/*.c learn/*.c metrics/*.c targets/*.c attacks/*.c \
            config/*.c scenarios/*.c reports/*.c audio/*.c onnx/*.c embed/*.c asr/*.c) $(filter-out cli/main.c,$(wildcard cli/*.c)))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
REPLAY_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/replay/%)
BENCH_SRC := $(sort $(wildcard bench/bench_*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all test asan tsan valgrind fuzz bench lint deps clean tests-bin mpi
all: vpaudit vpaudit-espeak-phones

vpaudit: $(BUILD)/cli/main.o $(BUILD)/libvpaudit.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

vpaudit-espeak-phones: $(BUILD)/tools/espeak_phones.o $(BUILD)/libvpaudit.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(ESPEAK_LIBS) $(LDLIBS)

$(BUILD)/libvpaudit.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/reports/pdf_doc.o: CPPFLAGS += $(PDF_CFLAGS)
$(BUILD)/audio/asr_ps.o: CPPFLAGS += $(PS_CFLAGS)
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libvpaudit.a tests/unit/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libvpaudit.a $(LDLIBS)

$(BUILD)/replay/%: tests/fuzz/%.c tests/fuzz/replay.c $(BUILD)/libvpaudit.a
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -DVPA_FUZZ_REPLAY $(LDFLAGS) -o $@ $< tests/fuzz/replay.c $(BUILD)/libvpaudit.a $(LDLIBS)

$(BUILD)/bench/%: bench/%.c $(BUILD)/libvpaudit.a
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libvpaudit.a $(LDLIBS)

tests-bin: vpaudit vpaudit-espeak-phones $(UNIT_BIN) $(REPLAY_BIN)

# ./vpaudit-mpi: the same program with MPI (base/dist.c), mpicc, build-mpi/.
mpi: vpaudit-espeak-phones
	$(MAKE) BUILD=build-mpi CC=mpicc CFLAGS="$(CFLAGS) -DVPA_MPI" vpaudit-mpi

vpaudit-mpi: $(BUILD)/cli/main.o $(BUILD)/libvpaudit.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The whole suite; the last line is "N passed, N failed".  tests/e2e/test_mpi.sh
# runs ./vpaudit-mpi under mpirun.
test: tests-bin mpi
	@BUILD=$(BUILD) VPAUDIT=$(CURDIR)/vpaudit VPAUDIT_MPI=$(CURDIR)/vpaudit-mpi bash tests/run.sh

# Tests under AddressSanitizer + UndefinedBehaviorSanitizer, in their own build folder.
asan: vpaudit-espeak-phones
	$(MAKE) BUILD=build-asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
		LDFLAGS="-fsanitize=address,undefined" VPAUDIT_BIN=vpaudit-asan vpaudit-asan tests-bin-asan
	@ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp BUILD=build-asan VPAUDIT=$(CURDIR)/vpaudit-asan bash tests/run.sh

vpaudit-asan: $(BUILD)/cli/main.o $(BUILD)/libvpaudit.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The parallel loops under ThreadSanitizer: tests/e2e/test_threads.sh (every
# loop with 1 and 2 threads, same records) on a TSan build; any report fails.
tsan: vpaudit-espeak-phones
	$(MAKE) BUILD=build-tsan CFLAGS="-O1 -g -fsanitize=thread" LDFLAGS="-fsanitize=thread" vpaudit-tsan
	@rm -f build-tsan/tsan.*
	@TSAN_OPTIONS="halt_on_error=1 exitcode=66 log_path=$(CURDIR)/build-tsan/tsan" \
		VPAUDIT=$(CURDIR)/vpaudit-tsan bash tests/e2e/test_threads.sh | tee build-tsan/threads.log
	@! ls build-tsan/tsan.* > /dev/null 2>&1 || { cat build-tsan/tsan.*; echo "tsan: data races reported"; exit 1; }
	@tail -n 1 build-tsan/threads.log | grep -q ', 0 failed'

vpaudit-tsan: $(BUILD)/cli/main.o $(BUILD)/libvpaudit.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

tests-bin-asan: $(UNIT_BIN) $(REPLAY_BIN)

valgrind: tests-bin
	@BUILD=$(BUILD) VPAUDIT=$(CURDIR)/vpaudit VPA_WRAP="valgrind -q --error-exitcode=99 --leak-check=full" bash tests/run.sh

# libFuzzer builds (clang from Debian); run e.g. build-fuzz/fuzz_scores tests/fuzz/corpus/scores
fuzz:
	@mkdir -p build-fuzz
	@for f in $(FUZZ_SRC); do \
	  n=$$(basename $$f .c); \
	  clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -I. $(YAML_CFLAGS) $(AUDIO_CFLAGS) $(PDF_CFLAGS) \
	    -o build-fuzz/$$n $$f $(LIB_SRC) $(LDLIBS) || exit 1; \
	  echo "built build-fuzz/$$n"; done

bench: vpaudit $(BENCH_BIN) mpi
	$(MAKE) BUILD=build-mpi CC=mpicc CFLAGS="$(CFLAGS) -DVPA_MPI" build-mpi/bench/bench_mpi_a1 \
		build-mpi/bench/bench_train
	@bash bench/run.sh

# Layering: metrics/ includes only base/base.h; nothing but base/la.c includes cblas/lapacke.
lint:
	@! grep -n '#include' metrics/*.c metrics/*.h | grep -v -e '<' -e 'metrics.h"' -e 'metrics/pld.h"' -e 'base/base.h"' || \
	  { echo "lint: metrics/ may include only base/base.h"; exit 1; }
	@! grep -ln 'cblas.h\|lapacke.h' $$(ls */*.c | grep -v '^base/la.c$$') || \
	  { echo "lint: only base/la.c may include cblas.h / lapacke.h"; exit 1; }
	@! grep -n 'system(\|popen(' $(LIB_SRC) cli/main.c || { echo "lint: no system()/popen()"; exit 1; }
	@echo "lint: ok"

deps:
	sh .ci/deps

clean:
	rm -rf build build-asan build-tsan build-fuzz build-mpi vpaudit vpaudit-asan vpaudit-tsan \
		vpaudit-mpi vpaudit-espeak-phones

-include $(shell find $(BUILD) build-asan build-tsan build-mpi -name '*.d' 2>/dev/null)
