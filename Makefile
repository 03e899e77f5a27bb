# bpfsbx - BPF-LSM sandbox for AI coding agents.
#
#   make deps      install every Debian package the build, the tests and the VM need
#   make           build/bpfsbx (the BPF objects are carried inside it)
#   make test      host unit tests (ASan/UBSan), fuzz smoke, e2e, then the VM suite
#   make unit      host unit tests only
#   make vmtest    the kernel suite in a QEMU guest (Debian 6.1, BPF-LSM)
#   make bench     benchmarks in one VM run -> docs/BENCHMARKS.md
#   make install   /usr/local/bin/bpfsbx, shipped policies, systemd unit
#   make demo      a real session, narrated (in the VM if this kernel cannot enforce)
#
# V=1 shows the commands.

BUILD     ?= build
ARCH      ?= x86
CC        ?= cc
CLANG     ?= clang
BPFTOOL   ?= bpftool
PREFIX    ?= /usr/local
DESTDIR   ?=

WARN      := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wformat=2 -Wstrict-prototypes
CFLAGS    ?= -O2 -g
CPPFLAGS  += -D_GNU_SOURCE -I. -I$(BUILD) \
             -DSBX_SHIPPED_POLICY_DIR='"$(PREFIX)/share/bpfsbx/policy"'
LIBS      := -lbpf -lelf -lz -ljansson -lyaml -lcrypto
SANITIZE  := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps test unit vmtest bench bench-helpers install uninstall clean fuzz e2e-deps demo

all: $(BUILD)/bpfsbx

# ---- BPF: one object per concern, statically linked into one skeleton ----

# sessions.bpf.c defines the maps; libbpf's linker wants the definitions
# before the objects that declare them extern.
BPF_SRCS  := bpf/sessions.bpf.c $(filter-out bpf/sessions.bpf.c,$(sort $(wildcard bpf/*.bpf.c)))
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
BPF_HDRS  := $(wildcard bpf/*.h)
VMLINUX_H := bpf/vmlinux/$(ARCH)/vmlinux.h
# clang -target bpf needs the host's asm/ headers found after its own
CLANG_SYS := $(shell $(CLANG) -v -E - </dev/null 2>&1 | sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) $(VMLINUX_H) | $(BUILD)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -D__BPF__ \
		-I bpf/vmlinux/$(ARCH) -I bpf $(CLANG_SYS) -Wall -Werror -c $< -o $@

$(BUILD)/bpfsbx.bpf.o: $(BPF_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(BUILD)/bpfsbx.skel.h: $(BUILD)/bpfsbx.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name sbx_bpf > $@

# ---- user space ---------------------------------------------------------

POLICY_SRCS := $(sort $(wildcard policy/*.c))
QUEUE_SRCS  := $(sort $(wildcard queue/*.c))
USER_SRCS   := $(sort $(wildcard user/*.c))
LIB_SRCS    := $(POLICY_SRCS) $(QUEUE_SRCS) $(filter-out user/main.c,$(USER_SRCS))
HDRS        := $(wildcard bpf/bpfsbx.h policy/*.h queue/*.h user/*.h)

obj = $(patsubst %.c,$(BUILD)/$(2)/%.o,$(1))

$(BUILD)/obj/%.o: %.c $(HDRS) $(BUILD)/bpfsbx.skel.h
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c $< -o $@

$(BUILD)/san/%.o: %.c $(HDRS) $(BUILD)/bpfsbx.skel.h
	@mkdir -p $(@D)
	$(call msg,CC-SAN,$@)
	$(Q)$(CC) $(CPPFLAGS) -O1 -g $(SANITIZE) $(WARN) -DSBX_UNIT_TEST -c $< -o $@

$(BUILD)/bpfsbx: $(call obj,$(LIB_SRCS) user/main.c,obj)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LIBS)

# ---- tests ----------------------------------------------------------------

UNIT_SRCS := $(sort $(wildcard tests/unit/*.c))

$(BUILD)/unit-tests: $(call obj,$(LIB_SRCS) $(UNIT_SRCS),san)
	$(call msg,LD,$@)
	$(Q)$(CC) $(SANITIZE) -o $@ $^ $(LIBS) -lcunit

# the syscall driver of the kernel suite (runs in the VM)
$(BUILD)/sbxtest: tests/kernel/sbxtest.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< -ljansson -lpthread

# the sanitizer build of the CLI, for host tests that run the binary
$(BUILD)/bpfsbx-san: $(call obj,$(LIB_SRCS) user/main.c,san)
	$(call msg,LD,$@)
	$(Q)$(CC) $(SANITIZE) -o $@ $^ $(LIBS)

unit: $(BUILD)/unit-tests $(BUILD)/bpfsbx-san
	$(Q)ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		$(BUILD)/unit-tests

# libFuzzer targets: tools/fuzz/fuzz_*.c, each linked with the libraries
FUZZ_SRCS := $(sort $(wildcard tools/fuzz/fuzz_*.c))
FUZZ_BINS := $(patsubst tools/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -g -O1

$(BUILD)/fuzz/%: tools/fuzz/%.c $(LIB_SRCS) $(HDRS) $(BUILD)/bpfsbx.skel.h
	@mkdir -p $(@D)
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(CPPFLAGS) $(FUZZ_FLAGS) -DSBX_FUZZ -Wall -Wno-unused-parameter -o $@ $< $(LIB_SRCS) $(LIBS)

fuzz: $(FUZZ_BINS)

test: all $(BUILD)/sbxtest $(BUILD)/unit-tests $(BUILD)/bpfsbx-san fuzz
	$(Q)tests/run

vmtest: all $(BUILD)/sbxtest
	$(Q)tests/run --only vm

bench: all
	$(Q)tools/bench/run

# the benchmark helpers (tools/bench; tools/bench/run builds them itself):
# sbxbench, the driver, links the queue library for its approver
BENCH_SRCS := $(sort $(wildcard tools/bench/sbxbench*.c))
$(BUILD)/bench/sbxbench: $(BENCH_SRCS) tools/bench/bench.h $(call obj,$(QUEUE_SRCS),obj)
	@mkdir -p $(@D)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $(BENCH_SRCS) $(call obj,$(QUEUE_SRCS),obj) \
		$(LIBS) -lm

$(BUILD)/bench/landlock-exec: tools/bench/landlock_exec.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $<

bench-helpers: $(BUILD)/bench/sbxbench $(BUILD)/bench/landlock-exec

demo: all
	$(Q)tools/demo

$(BUILD) $(BUILD)/bpf:
	@mkdir -p $@

# ---- install ----------------------------------------------------------------

install: all
	install -D -m 0755 $(BUILD)/bpfsbx $(DESTDIR)$(PREFIX)/bin/bpfsbx
	install -d $(DESTDIR)$(PREFIX)/share/bpfsbx/policy
	install -m 0644 policy/shipped/*.yaml $(DESTDIR)$(PREFIX)/share/bpfsbx/policy/
	install -D -m 0644 tools/bpfsbx.service $(DESTDIR)/etc/systemd/system/bpfsbx.service

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/bpfsbx $(DESTDIR)/etc/systemd/system/bpfsbx.service
	rm -rf $(DESTDIR)$(PREFIX)/share/bpfsbx

# ---- dependencies (Debian 12) ---------------------------------------------

DEB_BUILD := make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev \
             libjansson-dev libyaml-dev libssl-dev libcunit1-dev pkg-config \
             libclang-rt-14-dev
DEB_TEST  := qemu-system-x86 busybox-static kmod cpio iproute2 bubblewrap \
             python3 git ca-certificates xz-utils
deps:
	DEBIAN_FRONTEND=noninteractive apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(DEB_BUILD) $(DEB_TEST)
	@command -v node >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nodejs npm
	vmtest/fetch-kernel

e2e-deps:
	cd tests/e2e && npm ci --no-audit --no-fund

clean:
	rm -rf $(BUILD)
