/*
 * cachepart_plugin.c: a qemu-user TCG plugin that records a program's
 * memory accesses as cachepart trace records (docs/trace-format.md).
 *
 * Built by cachepart itself (crates/capture/src/plugin.rs, which puts
 * crates/capture/include/cp_gap.h in place of its #include line) with
 *   gcc -O2 -shared -fPIC -fvisibility=hidden -DCP_PLUGIN_API=N
 * and loaded with
 *   qemu-x86_64 -plugin cachepart_plugin.so,out=PATH[,ifetch=on] PROG ARGS
 *
 * Arguments:
 *   out=PATH     file or FIFO the records are written to (required)
 *   ifetch=on    also record one instruction fetch per executed instruction
 *   skip=N       count the first N instructions (all vcpus together) without
 *                recording their accesses, then record as usual
 *   start=M      where the caller's window starts (M >= N): the plugin
 *                aborts if it could not switch to recording before M
 *
 * Output: a plain stream of 8-byte little-endian records in the bit layout
 * of cachepart's `Record` (no header, no compression; the reader on the
 * other end of the FIFO validates and compresses them):
 *   bits 0-47 address (or event payload), 48-50 kind (0 load, 1 store,
 *   2 instruction fetch, 4 escape), 51-57 size (or event code), 58-63 gap.
 * Escapes written: code 0 InstrGap (gaps above 63 instructions, and the
 * instructions after the last access; a gap of 2^48 or more is split over
 * consecutive escapes, as `Record::after_gap` does: cp_gap.h, shared with
 * cpgrind), code 1 ThreadSwitch (qemu vcpu
 * index; written before a chunk of another vcpu than the previous chunk).
 *
 * Instruction counting (without ifetch): each translation block adds its
 * instruction count when it starts; an access made by the k-th instruction
 * of the block carries, as its gap, the instructions up to and including
 * that one that no earlier record accounted for. The total is exact for
 * blocks that run to their end (a fault in the middle of a block
 * overcounts the rest of that block).
 *
 * Fast skip (skip=N): until N instructions have started, blocks are
 * translated with one counting callback each (one per instruction with
 * ifetch=on, counted as recording counts them) and no memory callbacks, and
 * every 2^26 instructions a vcpu writes them as an InstrGap escape (so a
 * reader sees progress). The block that reaches N asks QEMU for a plugin
 * reset (qemu_plugin_reset: the translated code is flushed); when it is
 * done each vcpu writes its uncounted instructions as an InstrGap and
 * blocks are translated with the recording callbacks. The records after
 * that point are the ones a capture without skip=N writes: the caller
 * drops what precedes its window (N sits some way before it, so the
 * switch, which lands a few blocks after N, is done before the window).
 *
 * Each vcpu (a guest thread in qemu-user) fills its own buffer and writes
 * it in one piece under a lock, so records of different threads are
 * interleaved in chunks of CP_BUF_RECORDS, not access by access.
 *
 * A forked child (qemu-user emulates it in the forked process) writes
 * nothing: the trace covers the process that was started.
 *
 * The few declarations of the QEMU plugin C API this file uses are written
 * below (Debian ships no qemu-plugin.h), as in plugin API version 1
 * (QEMU 7.2, Debian bookworm's qemu-user, the one tested); later versions
 * keep these signatures per the API documentation.
 * CP_PLUGIN_API selects the version this plugin declares: QEMU loads a
 * plugin whose version lies in its [QEMU_PLUGIN_MIN_VERSION,
 * QEMU_PLUGIN_VERSION] range, which is [0, 1] for QEMU 7.2 to 8.1 and
 * starts at 2 from QEMU 8.2.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cp_gap.h"

/* ---------------------------------------------------------------------- */
/* QEMU plugin API declarations (the subset used here).                   */

#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t; /* never dereferenced here */
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef uint32_t qemu_plugin_meminfo_t;

enum qemu_plugin_cb_flags {
    QEMU_PLUGIN_CB_NO_REGS,
    QEMU_PLUGIN_CB_R_REGS,
    QEMU_PLUGIN_CB_RW_REGS,
};

enum qemu_plugin_mem_rw {
    QEMU_PLUGIN_MEM_R = 1,
    QEMU_PLUGIN_MEM_W,
    QEMU_PLUGIN_MEM_RW,
};

typedef void (*qemu_plugin_simple_cb_t)(qemu_plugin_id_t id);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_simple_cb_t)(qemu_plugin_id_t id,
                                             unsigned int vcpu_index);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index,
                                            void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
                                               struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_syscall_cb_t)(
    qemu_plugin_id_t id, unsigned int vcpu_index, int64_t num, uint64_t a1,
    uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
    uint64_t a7, uint64_t a8);
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index,
                                          qemu_plugin_meminfo_t info,
                                          uint64_t vaddr, void *userdata);

void qemu_plugin_register_vcpu_init_cb(qemu_plugin_id_t id,
                                       qemu_plugin_vcpu_simple_cb_t cb);
void qemu_plugin_register_vcpu_exit_cb(qemu_plugin_id_t id,
                                       qemu_plugin_vcpu_simple_cb_t cb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                           qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
                                          qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags,
                                          void *userdata);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
                                            qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags,
                                            void *userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn,
                                      qemu_plugin_vcpu_mem_cb_t cb,
                                      enum qemu_plugin_cb_flags flags,
                                      enum qemu_plugin_mem_rw rw,
                                      void *userdata);
void qemu_plugin_register_vcpu_syscall_cb(qemu_plugin_id_t id,
                                          qemu_plugin_vcpu_syscall_cb_t cb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
                                    qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
                                                 size_t idx);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);
void qemu_plugin_outs(const char *string);
void qemu_plugin_reset(qemu_plugin_id_t id, qemu_plugin_simple_cb_t cb);

#ifndef CP_PLUGIN_API
#define CP_PLUGIN_API 1
#endif

QEMU_PLUGIN_EXPORT int qemu_plugin_version = CP_PLUGIN_API;

/* ---------------------------------------------------------------------- */
/* Records.                                                               */

#define ADDR_MASK ((UINT64_C(1) << 48) - 1)
#define KIND_SHIFT 48
#define SIZE_SHIFT 51
#define KIND_LOAD UINT64_C(0)
#define KIND_STORE UINT64_C(1)
#define KIND_IFETCH UINT64_C(2)
#define KIND_ESCAPE UINT64_C(4)
#define EV_THREAD_SWITCH UINT64_C(1)

/* Records per vcpu buffer (8 MiB); two slots stay free for escapes. */
#define CP_BUF_RECORDS (1u << 20)
#define CP_MAX_VCPUS 4096

struct vcpu {
    uint64_t *buf;
    uint32_t len;
    unsigned index; /* the vcpu's index */
    /* instructions started (at block entry) and accounted for by records */
    uint64_t icount;
    uint64_t counted;
    /* icount when the current block started */
    uint64_t tb_start;
};

static struct vcpu *vcpus[CP_MAX_VCPUS];
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int out_fd = -1;
static pid_t owner_pid;
static unsigned last_vcpu; /* vcpu of the last chunk written */
static bool failed;        /* a write failed: stop writing */
static bool ifetch;

/* Fast skip (skip=N, start=M; 0 when off). */
static uint64_t skip_until;
static uint64_t window_start;
static bool skipping;          /* blocks translated for counting only */
static uint64_t skipped_total; /* instructions started while skipping */
static int reset_asked;
static qemu_plugin_id_t plugin_id;
/* While skipping, a vcpu writes its instructions every this many. */
#define SKIP_REPORT (UINT64_C(1) << 26)

static uint64_t escape(uint64_t code, uint64_t payload)
{
    return (payload & ADDR_MASK) | KIND_ESCAPE << KIND_SHIFT |
           code << SIZE_SHIFT;
}

static void report(const char *what)
{
    char msg[256];
    snprintf(msg, sizeof msg, "cachepart plugin: %s: %s\n", what,
             strerror(errno));
    qemu_plugin_outs(msg);
}

static void write_all(const void *data, size_t n)
{
    const char *p = data;
    while (n > 0 && !failed) {
        ssize_t w = write(out_fd, p, n);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            report("writing the trace");
            failed = true;
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Writes vcpu v's buffer (with a thread switch first if needed). */
static void flush_vcpu(unsigned v, struct vcpu *c)
{
    if (c->len == 0) {
        return;
    }
    pthread_mutex_lock(&out_lock);
    if (getpid() != owner_pid) {
        /* a forked child: its buffer repeats the parent's records */
        c->len = 0;
        pthread_mutex_unlock(&out_lock);
        return;
    }
    if (v != last_vcpu) {
        uint64_t sw = escape(EV_THREAD_SWITCH, v);
        write_all(&sw, sizeof sw);
        last_vcpu = v;
    }
    write_all(c->buf, (size_t)c->len * sizeof(uint64_t));
    pthread_mutex_unlock(&out_lock);
    c->len = 0;
}

static struct vcpu *vcpu_get(unsigned v)
{
    if (v >= CP_MAX_VCPUS) {
        qemu_plugin_outs("cachepart plugin: more than 4096 vcpus\n");
        abort();
    }
    struct vcpu *c = __atomic_load_n(&vcpus[v], __ATOMIC_ACQUIRE);
    if (c == NULL) {
        c = calloc(1, sizeof *c);
        if (c != NULL) {
            c->index = v;
            c->buf = malloc(CP_BUF_RECORDS * sizeof(uint64_t));
        }
        if (c == NULL || c->buf == NULL) {
            qemu_plugin_outs("cachepart plugin: out of memory\n");
            abort();
        }
        __atomic_store_n(&vcpus[v], c, __ATOMIC_RELEASE);
    }
    return c;
}

/* Appends a record to the buffer of vcpu `ctx` (a struct vcpu), written
 * when full (cp_gap.h's emit callback). */
static inline void emit(void *ctx, uint64_t rec)
{
    struct vcpu *c = ctx;
    c->buf[c->len++] = rec;
    if (c->len >= CP_BUF_RECORDS - 2) {
        flush_vcpu(c->index, c);
    }
}

/* Appends a record that accounts for the instructions up to `upto` (after
 * its gap, as cp_after_gap writes it). */
static inline void push(struct vcpu *c, uint64_t rec, uint64_t upto)
{
    uint64_t gap = 0;
    if (upto > c->counted) {
        gap = upto - c->counted;
        c->counted = upto;
    }
    cp_after_gap(rec, gap, emit, c);
}

/* ---------------------------------------------------------------------- */
/* Callbacks.                                                             */

static void vcpu_init(qemu_plugin_id_t id, unsigned int v)
{
    (void)id;
    vcpu_get(v);
}

/* Writes vcpu v's instructions no record accounted for yet as InstrGap
 * escapes (at its end: the trailing instructions), then its buffer. */
static void account_gap(unsigned v, struct vcpu *c)
{
    if (c->icount > c->counted) {
        cp_instr_gaps(c->icount - c->counted, emit, c);
        c->counted = c->icount;
    }
    flush_vcpu(v, c);
}

/* The same for vcpu v by index, if it exists. */
static void vcpu_finish(unsigned v)
{
    struct vcpu *c = v < CP_MAX_VCPUS ? vcpus[v] : NULL;
    if (c != NULL) {
        account_gap(v, c);
    }
}

static void vcpu_exit(qemu_plugin_id_t id, unsigned int v)
{
    (void)id;
    vcpu_finish(v);
}

/*
 * qemu-user runs no plugin exit callback when the program dies of a
 * signal, so the buffer is written before the signal-sending system calls
 * a program uses to kill itself (abort(), raise(), kill(getpid())): such a
 * trace is then complete. Faults (SIGSEGV...) still lose the buffer.
 */
static void syscall_entry(qemu_plugin_id_t id, unsigned int v, int64_t num,
                          uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
                          uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8)
{
    (void)id, (void)a1, (void)a2, (void)a3, (void)a4;
    (void)a5, (void)a6, (void)a7, (void)a8;
#if defined(__x86_64__)
    /* kill, tkill, tgkill */
    if (num == 62 || num == 200 || num == 234) {
        vcpu_finish(v);
    }
#else
    (void)v, (void)num;
#endif
}

static void tb_exec(unsigned int v, void *udata)
{
    struct vcpu *c = vcpu_get(v);
    c->tb_start = c->icount;
    c->icount += (uintptr_t)udata;
}

static void mem_access(unsigned int v, qemu_plugin_meminfo_t info,
                       uint64_t vaddr, void *udata)
{
    struct vcpu *c = vcpu_get(v);
    uint64_t size = UINT64_C(1) << qemu_plugin_mem_size_shift(info);
    uint64_t kind = qemu_plugin_mem_is_store(info) ? KIND_STORE : KIND_LOAD;
    uint64_t rec = (vaddr & ADDR_MASK) | kind << KIND_SHIFT |
                   size << SIZE_SHIFT;
    /* udata: 1 + index of the instruction in its block */
    push(c, rec, c->tb_start + (uintptr_t)udata);
}

static void mem_access_ifetch(unsigned int v, qemu_plugin_meminfo_t info,
                              uint64_t vaddr, void *udata)
{
    (void)udata;
    struct vcpu *c = vcpu_get(v);
    uint64_t size = UINT64_C(1) << qemu_plugin_mem_size_shift(info);
    uint64_t kind = qemu_plugin_mem_is_store(info) ? KIND_STORE : KIND_LOAD;
    push(c, (vaddr & ADDR_MASK) | kind << KIND_SHIFT | size << SIZE_SHIFT,
         c->counted);
}

/* udata packs the fetch record (address and size, gap 0). */
static void insn_exec(unsigned int v, void *udata)
{
    struct vcpu *c = vcpu_get(v);
    c->icount++;
    /* the fetch record itself counts as its instruction */
    c->counted = c->icount;
    c->buf[c->len++] = (uint64_t)(uintptr_t)udata;
    if (c->len >= CP_BUF_RECORDS - 2) {
        flush_vcpu(v, c);
    }
}

static void register_callbacks(qemu_plugin_id_t id);

/* Runs when QEMU has flushed the code translated for counting only. */
static void skip_done(qemu_plugin_id_t id)
{
    __atomic_store_n(&skipping, false, __ATOMIC_RELAXED);
    uint64_t seen = __atomic_load_n(&skipped_total, __ATOMIC_ACQUIRE);
    if (seen > window_start) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "cachepart plugin: the fast skip ended after %llu "
                 "instructions, past the window's start at %llu\n",
                 (unsigned long long)seen, (unsigned long long)window_start);
        qemu_plugin_outs(msg);
        abort();
    }
    for (unsigned v = 0; v < CP_MAX_VCPUS; v++) {
        vcpu_finish(v);
    }
    register_callbacks(id);
}

/* Counts n started instructions while skipping; reports, and asks for the
 * switch to recording once skip_until have started. */
static inline void skip_count(unsigned v, uint64_t n)
{
    struct vcpu *c = vcpu_get(v);
    c->icount += n;
    if (c->icount - c->counted >= SKIP_REPORT) {
        account_gap(v, c);
    }
    uint64_t total = __atomic_add_fetch(&skipped_total, n, __ATOMIC_RELAXED);
    if (total >= skip_until &&
        !__atomic_exchange_n(&reset_asked, 1, __ATOMIC_ACQ_REL)) {
        qemu_plugin_reset(plugin_id, skip_done);
    }
}

/* A block's start while skipping (counted as recording counts it). */
static void tb_exec_skip(unsigned int v, void *udata)
{
    skip_count(v, (uintptr_t)udata);
}

/* An instruction while skipping with ifetch=on, where recording counts
 * executed instructions one by one (a block left in the middle, as when
 * a store hits a page of translated code, counts only what ran). */
static void insn_exec_skip(unsigned int v, void *udata)
{
    (void)udata;
    skip_count(v, 1);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    if (__atomic_load_n(&skipping, __ATOMIC_RELAXED)) {
        if (ifetch) {
            for (size_t i = 0; i < n; i++) {
                qemu_plugin_register_vcpu_insn_exec_cb(
                    qemu_plugin_tb_get_insn(tb, i), insn_exec_skip,
                    QEMU_PLUGIN_CB_NO_REGS, NULL);
            }
        } else {
            qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec_skip,
                                                 QEMU_PLUGIN_CB_NO_REGS,
                                                 (void *)(uintptr_t)n);
        }
        return;
    }
    if (!ifetch) {
        qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS,
                                             (void *)(uintptr_t)n);
    }
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        if (ifetch) {
            uint64_t size = qemu_plugin_insn_size(insn);
            if (size > 127) {
                size = 127;
            }
            uint64_t rec = (qemu_plugin_insn_vaddr(insn) & ADDR_MASK) |
                           KIND_IFETCH << KIND_SHIFT | size << SIZE_SHIFT;
            qemu_plugin_register_vcpu_insn_exec_cb(
                insn, insn_exec, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)rec);
            qemu_plugin_register_vcpu_mem_cb(insn, mem_access_ifetch,
                                             QEMU_PLUGIN_CB_NO_REGS,
                                             QEMU_PLUGIN_MEM_RW, NULL);
        } else {
            qemu_plugin_register_vcpu_mem_cb(insn, mem_access,
                                             QEMU_PLUGIN_CB_NO_REGS,
                                             QEMU_PLUGIN_MEM_RW,
                                             (void *)(uintptr_t)(i + 1));
        }
    }
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
    (void)id;
    (void)udata;
    for (unsigned v = 0; v < CP_MAX_VCPUS; v++) {
        vcpu_finish(v);
    }
    pthread_mutex_lock(&out_lock);
    if (out_fd >= 0 && getpid() == owner_pid) {
        close(out_fd);
        out_fd = -1;
    }
    pthread_mutex_unlock(&out_lock);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
                                           const qemu_info_t *info, int argc,
                                           char **argv)
{
    (void)info;
    const char *out = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "out=", 4) == 0) {
            out = a + 4;
        } else if (strcmp(a, "ifetch=on") == 0 || strcmp(a, "ifetch=true") == 0) {
            ifetch = true;
        } else if (strncmp(a, "skip=", 5) == 0) {
            skip_until = strtoull(a + 5, NULL, 10);
        } else if (strncmp(a, "start=", 6) == 0) {
            window_start = strtoull(a + 6, NULL, 10);
        } else if (strcmp(a, "ifetch=off") == 0 ||
                   strcmp(a, "ifetch=false") == 0) {
            ifetch = false;
        } else {
            char msg[300];
            snprintf(msg, sizeof msg,
                     "cachepart plugin: unknown argument `%s` (expected "
                     "out=PATH, ifetch=on|off, skip=N or start=M)\n",
                     a);
            qemu_plugin_outs(msg);
            return -1;
        }
    }
    if (out == NULL) {
        qemu_plugin_outs("cachepart plugin: missing argument out=PATH\n");
        return -1;
    }
    out_fd = open(out, O_WRONLY | O_CLOEXEC);
    if (out_fd < 0) {
        report("opening the output");
        return -1;
    }
#ifdef F_SETPIPE_SZ
    /* a bigger pipe means fewer wake-ups; failure is harmless */
    (void)fcntl(out_fd, F_SETPIPE_SZ, 1 << 20);
#endif
    if (skip_until > 0 && window_start < skip_until) {
        qemu_plugin_outs("cachepart plugin: start=M must be at least skip=N\n");
        return -1;
    }
    skipping = skip_until > 0;
    owner_pid = getpid();
    plugin_id = id;
    register_callbacks(id);
    return 0;
}

/* The callbacks (again after a fast skip's reset, which drops them all). */
static void register_callbacks(qemu_plugin_id_t id)
{
    qemu_plugin_register_vcpu_init_cb(id, vcpu_init);
    qemu_plugin_register_vcpu_exit_cb(id, vcpu_exit);
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_vcpu_syscall_cb(id, syscall_entry);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
}
