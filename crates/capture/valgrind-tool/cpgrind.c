/*
 * cpgrind.c: a valgrind tool that records a program's memory accesses as
 * cachepart trace records (docs/trace-format.md), with dependency hints.
 * This file holds the records, the helpers that write them, and the tool's
 * set-up; it includes lackey's event buffer (cpgrind_events.h), the
 * dependency shadows (cpgrind_shadow.h) and the instrumentation
 * (cpgrind_instrument.h).
 *
 * Built by cachepart itself (crates/capture/src/vgtool.rs) against the
 * headers and static libraries of Debian's `valgrind` package, linked as
 * valgrind links its own tools, named `cpgrind-amd64-linux` in a directory
 * that holds symlinks to the rest of valgrind's library directory, and run
 * with
 *   VALGRIND_LIB=DIR valgrind --tool=cpgrind --cp-out=PATH
 *       [--cp-ifetch=yes] [--cp-dep-window=N] PROG ARGS
 *
 * Options:
 *   --cp-out=PATH        file or FIFO the records are written to (required)
 *   --cp-ifetch=yes|no   also record one instruction fetch per executed
 *                        instruction, before its data accesses (lackey's
 *                        trace); default no: instruction gaps
 *   --cp-dep-window=N    mark a load dependent (kind 5) when its address
 *                        was computed from the data of a load that executed
 *                        at most N instructions earlier; 0: no hints and no
 *                        tracking (default 256)
 *
 * Output: the stream of cachepart's qemu plugin: 8-byte little-endian
 * records in the bit layout of cachepart's `Record` (no header):
 *   bits 0-47 address (or event payload), 48-50 kind (0 load, 1 store,
 *   2 instruction fetch, 3 modify, 4 escape, 5 dependent load), 51-57 size
 *   (or event code), 58-63 gap.
 * Escapes written: code 0 InstrGap (gaps above 63 instructions, and the
 * instructions after the last access; a gap of 2^48 or more is split over
 * consecutive escapes, as `Record::after_gap` does: cp_gap.h, shared with
 * the qemu plugin), code 1 ThreadSwitch (valgrind's
 * thread id less 1, written when another thread than the previous one
 * starts running). Records go to a buffer of 1 Mi records written in one
 * piece when full, at a thread switch and at the end.
 *
 * The records are lackey's (valgrind 3.19, lackey/lk_main.c, --trace-mem):
 * the same events in the same order (an instruction's fetch, then its
 * data accesses; a store of the same address expression and size right
 * after a load of the same instruction, with no side exit in between, is
 * one modify), collected in lackey's buffer of four events so that the
 * merging is the same. Sizes above 127 bytes (dirty helpers' FXSAVE-like
 * areas) are written as 127.
 *
 * Instruction counting: a 64-bit counter of the instructions completed
 * before the running superblock, read at its start; an access of the k-th
 * instruction of the block is instruction base + k. Each side exit stores
 * base + k (guarded by the exit's condition) and the block's end stores
 * base + n. A block left by a fault does not count its instructions.
 *
 * Dependency hints: every IR temp and every 64-bit integer guest register
 * has a shadow, the instruction number at which the youngest load whose
 * value flowed into it executed (0: none). Shadow temps are new IR temps;
 * register shadows live in valgrind's shadow guest state (guest offset +
 * the guest state's size, as memcheck's). A load's result gets its own
 * instruction number; unary, binary, ternary and quaternary operations,
 * pure helper calls and ITE take the largest (youngest) of their operands'
 * shadows; a 64-bit PUT of a register writes its shadow, a narrower PUT or
 * one of a vector or x87 register overlapping it clears it, as do the
 * register writes of dirty helpers; a GET of an integer type from a
 * register reads its shadow. Memory carries no shadow (a pointer stored
 * and reloaded is the reload's), nor do flags, vector and floating-point
 * registers. A load whose address shadow s is non-zero and within the
 * window (now - s <= N) is written as a dependent load.
 */
#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vkiscnums.h"
#include "libvex_guest_amd64.h"
#include "cp_gap.h"

typedef IRExpr IRAtom;

#if !defined(VGA_amd64)
#error "cpgrind tracks the integer registers of amd64 only"
#endif

/* Core functions not in the tool headers (libcoregrind exports them). */
extern Int VG_(safe_fd)(Int oldfd);
extern Int VG_(fcntl)(Int fd, Int cmd, Addr arg);

/* ---------------------------------------------------------------------- */
/* Records.                                                               */

#define ADDR_MASK ((1ULL << 48) - 1)
#define KIND_SHIFT 48
#define SIZE_SHIFT 51
#define KIND_LOAD 0ULL
#define KIND_STORE 1ULL
#define KIND_IFETCH 2ULL
#define KIND_MODIFY 3ULL
#define KIND_ESCAPE 4ULL
#define KIND_DEPLOAD 5ULL
#define EV_THREAD_SWITCH 1ULL
#define MAX_SIZE 127

/* Records per buffer (8 MiB); two slots stay free for escapes. */
#define BUF_RECORDS (1u << 20)

static const HChar *clo_out = NULL;
static Bool clo_ifetch = False;
static Long clo_dep_window = 256;

static ULong *buf;
static UInt buf_len;
static Int out_fd = -1;
static Bool failed;   /* a write failed: stop writing */
static Bool disabled; /* a forked child: write nothing */

/* Instructions completed before the running superblock (updated at its
 * exits), and instructions accounted for by records (no --cp-ifetch). */
static ULong icount;
static ULong counted;
/* Valgrind's id of the thread whose records come last. */
static ThreadId last_tid = 1;

static inline ULong escape(ULong code, ULong payload)
{
    return (payload & ADDR_MASK) | KIND_ESCAPE << KIND_SHIFT |
           code << SIZE_SHIFT;
}

static void write_all(const void *data, SizeT n)
{
    const HChar *p = data;
    while (n > 0 && !failed) {
        Int chunk = n > (1u << 30) ? (1 << 30) : (Int)n;
        Int w = VG_(write)(out_fd, p, chunk);
        if (w == -VKI_EINTR) {
            continue;
        }
        if (w <= 0) {
            VG_(umsg)("cpgrind: writing the trace to %s failed (error %d)\n",
                      clo_out, -w);
            failed = True;
            return;
        }
        p += w;
        n -= (SizeT)w;
    }
}

static void flush_buf(void)
{
    if (buf_len > 0 && !disabled) {
        write_all(buf, (SizeT)buf_len * sizeof(ULong));
    }
    buf_len = 0;
}

static inline void put(ULong rec)
{
    buf[buf_len++] = rec;
    if (UNLIKELY(buf_len >= BUF_RECORDS - 2)) {
        flush_buf();
    }
}

/* put() as cp_gap.h's emit callback. */
static inline void emit(void *ctx, uint64_t rec)
{
    (void)ctx;
    put(rec);
}

/* Appends an access record of instruction `now` (after its gap, as
 * cp_after_gap writes it, when not recording fetches). */
static inline void put_access(ULong rec, ULong now)
{
    if (!clo_ifetch) {
        ULong gap = 0;
        if (now > counted) {
            gap = now - counted;
            counted = now;
        }
        cp_after_gap(rec, gap, emit, NULL);
    } else {
        put(rec);
    }
}

/* Writes the instructions no record accounted for as InstrGap escapes. */
static void account_gap(void)
{
    if (!clo_ifetch && icount > counted) {
        cp_instr_gaps(icount - counted, emit, NULL);
        counted = icount;
    }
}

/* ---------------------------------------------------------------------- */
/* Helpers called by the instrumented code.                               */

static VG_REGPARM(1) void cp_ifetch(ULong rec)
{
    put(rec);
}

/* `sk`: the size and kind bits of the record; `prod`: the shadow of the
 * address; `now`: the number of the executing instruction. */
static VG_REGPARM(3) void cp_load(Addr addr, ULong sk, ULong now, ULong prod)
{
    ULong rec = ((ULong)addr & ADDR_MASK) | sk;
    if (prod != 0 && now - prod <= (ULong)clo_dep_window) {
        rec = (rec & ~(7ULL << KIND_SHIFT)) | KIND_DEPLOAD << KIND_SHIFT;
    }
    put_access(rec, now);
}

static VG_REGPARM(3) void cp_access(Addr addr, ULong sk, ULong now)
{
    put_access(((ULong)addr & ADDR_MASK) | sk, now);
}

#include "cpgrind_events.h"
#include "cpgrind_shadow.h"

#include "cpgrind_instrument.h"

/* ---------------------------------------------------------------------- */
/* Threads, forks, start and end.                                         */

static void cp_start_client_code(ThreadId tid, ULong blocks)
{
    (void)blocks;
    if (tid != last_tid) {
        account_gap();
        put(escape(EV_THREAD_SWITCH, (ULong)tid - 1));
        last_tid = tid;
    }
}

static void cp_atfork_child(ThreadId tid)
{
    (void)tid;
    /* the child's records would repeat and interleave with the parent's */
    disabled = True;
    buf_len = 0;
}

/* An exec replaces the process (valgrind runs an exec'ed program natively
 * or under a new valgrind, without this tool's fini): the records so far
 * are written before it; a failed exec loses nothing. */
static void cp_pre_syscall(ThreadId tid, UInt syscallno, UWord *args, UInt nArgs)
{
    (void)tid, (void)args, (void)nArgs;
    if (syscallno == __NR_execve || syscallno == __NR_execveat) {
        account_gap();
        flush_buf();
    }
}

static void cp_post_syscall(ThreadId tid, UInt syscallno, UWord *args, UInt nArgs,
                            SysRes res)
{
    (void)tid, (void)syscallno, (void)args, (void)nArgs, (void)res;
}

static Bool cp_process_cmd_line_option(const HChar *arg)
{
    if VG_STR_CLO (arg, "--cp-out", clo_out) {
    } else if VG_BOOL_CLO (arg, "--cp-ifetch", clo_ifetch) {
    } else if VG_BINT_CLO (arg, "--cp-dep-window", clo_dep_window, 0, 1LL << 40) {
    } else {
        return False;
    }
    return True;
}

static void cp_print_usage(void)
{
    VG_(printf)("    --cp-out=PATH             file or FIFO for the records [required]\n"
                "    --cp-ifetch=yes|no        record instruction fetches [no]\n"
                "    --cp-dep-window=N         dependency hints within N instructions, 0: none [256]\n");
}

static void cp_print_debug_usage(void)
{
    VG_(printf)("    (none)\n");
}

static void cp_post_clo_init(void)
{
    if (clo_out == NULL) {
        VG_(fmsg_bad_option)("--cp-out", "cpgrind needs --cp-out=PATH\n");
    }
    SysRes r = VG_(open)(clo_out, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_TRUNC, 0666);
    if (sr_isError(r)) {
        VG_(fmsg)("cpgrind: cannot open %s (error %lu)\n", clo_out, sr_Err(r));
        VG_(exit)(1);
    }
    out_fd = VG_(safe_fd)(sr_Res(r));
    /* a bigger pipe means fewer wake-ups; failure is harmless */
    (void)VG_(fcntl)(out_fd, VKI_F_SETPIPE_SZ, 1 << 20);
    buf = VG_(malloc)("cpgrind.buf", BUF_RECORDS * sizeof(ULong));
    VG_(atfork)(NULL, NULL, cp_atfork_child);
}

static void cp_fini(Int exitcode)
{
    (void)exitcode;
    account_gap();
    flush_buf();
    if (out_fd >= 0 && !disabled) {
        VG_(close)(out_fd);
        out_fd = -1;
    }
}

static void cp_pre_clo_init(void)
{
    VG_(details_name)("cpgrind");
    VG_(details_version)(NULL);
    VG_(details_description)("cachepart's memory trace recorder");
    VG_(details_copyright_author)("cachepart authors; event handling after lackey, (C) Julian Seward and Nicholas Nethercote");
    VG_(details_bug_reports_to)("the cachepart project");
    VG_(details_avg_translation_sizeB)(400);
    VG_(basic_tool_funcs)(cp_post_clo_init, cp_instrument, cp_fini);
    VG_(needs_command_line_options)(cp_process_cmd_line_option, cp_print_usage,
                                    cp_print_debug_usage);
    VG_(track_start_client_code)(cp_start_client_code);
    VG_(needs_syscall_wrapper)(cp_pre_syscall, cp_post_syscall);
}

VG_DETERMINE_INTERFACE_VERSION(cp_pre_clo_init)
