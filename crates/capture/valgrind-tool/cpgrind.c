/*
 * cpgrind.c: a valgrind tool that records a program's memory accesses as
 * cachepart trace records (docs/trace-format.md), with dependency hints.
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
 * instructions after the last access), code 1 ThreadSwitch (valgrind's
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
#include "libvex_guest_amd64.h"

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
#define GAP_SHIFT 58
#define MAX_GAP 63ULL
#define KIND_LOAD 0ULL
#define KIND_STORE 1ULL
#define KIND_IFETCH 2ULL
#define KIND_MODIFY 3ULL
#define KIND_ESCAPE 4ULL
#define KIND_DEPLOAD 5ULL
#define EV_INSTR_GAP 0ULL
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

/* Appends an access record of instruction `now` (with its gap when not
 * recording fetches). */
static inline void put_access(ULong rec, ULong now)
{
    if (!clo_ifetch) {
        ULong gap = 0;
        if (now > counted) {
            gap = now - counted;
            counted = now;
        }
        if (gap > MAX_GAP) {
            buf[buf_len++] = escape(EV_INSTR_GAP, gap);
            gap = 0;
        }
        rec |= gap << GAP_SHIFT;
    }
    put(rec);
}

/* Writes the instructions no record accounted for as an InstrGap. */
static void account_gap(void)
{
    if (!clo_ifetch && icount > counted) {
        put(escape(EV_INSTR_GAP, icount - counted));
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

/* ---------------------------------------------------------------------- */
/* Lackey's event buffer.                                                 */

typedef enum { Event_Ir, Event_Dr, Event_Dw, Event_Dm } EventKind;

typedef struct {
    EventKind ekind;
    IRAtom *addr;
    Int size;
    IRAtom *guard; /* NULL: unconditional */
    IRAtom *now;   /* the instruction's number (I64) */
    IRAtom *prod;  /* the address's shadow (I64), NULL: none */
} Event;

#define N_EVENTS 4
static Event events[N_EVENTS];
static Int events_used = 0;

static ULong size_kind(Int size, ULong kind)
{
    ULong s = size > MAX_SIZE ? MAX_SIZE : (ULong)size;
    return kind << KIND_SHIFT | s << SIZE_SHIFT;
}

static void flushEvents(IRSB *sb)
{
    for (Int i = 0; i < events_used; i++) {
        Event *ev = &events[i];
        IRDirty *di;
        if (ev->ekind == Event_Ir) {
            tl_assert(ev->addr->tag == Iex_Const);
            ULong a = ev->addr->Iex.Const.con->Ico.U64;
            ULong rec = (a & ADDR_MASK) | size_kind(ev->size, KIND_IFETCH);
            di = unsafeIRDirty_0_N(1, "cp_ifetch", VG_(fnptr_to_fnentry)(cp_ifetch),
                                   mkIRExprVec_1(IRExpr_Const(IRConst_U64(rec))));
        } else if (ev->ekind == Event_Dr && clo_dep_window > 0) {
            IRExpr *sk = IRExpr_Const(IRConst_U64(size_kind(ev->size, KIND_LOAD)));
            IRExpr *prod = ev->prod ? ev->prod : IRExpr_Const(IRConst_U64(0));
            di = unsafeIRDirty_0_N(3, "cp_load", VG_(fnptr_to_fnentry)(cp_load),
                                   mkIRExprVec_4(ev->addr, sk, ev->now, prod));
        } else {
            ULong kind = ev->ekind == Event_Dr   ? KIND_LOAD
                         : ev->ekind == Event_Dw ? KIND_STORE
                                                 : KIND_MODIFY;
            IRExpr *sk = IRExpr_Const(IRConst_U64(size_kind(ev->size, kind)));
            di = unsafeIRDirty_0_N(3, "cp_access", VG_(fnptr_to_fnentry)(cp_access),
                                   mkIRExprVec_3(ev->addr, sk, ev->now));
        }
        if (ev->guard) {
            di->guard = ev->guard;
        }
        addStmtToIRSB(sb, IRStmt_Dirty(di));
    }
    events_used = 0;
}

static Event *new_event(IRSB *sb)
{
    if (events_used == N_EVENTS) {
        flushEvents(sb);
    }
    tl_assert(events_used >= 0 && events_used < N_EVENTS);
    Event *ev = &events[events_used++];
    ev->guard = NULL;
    ev->prod = NULL;
    ev->now = NULL;
    return ev;
}

static void addEvent_Ir(IRSB *sb, IRAtom *iaddr, UInt isize)
{
    Event *ev = new_event(sb);
    ev->ekind = Event_Ir;
    ev->addr = iaddr;
    ev->size = isize;
}

static void addEvent_Dr(IRSB *sb, IRAtom *daddr, Int dsize, IRAtom *guard,
                        IRAtom *now, IRAtom *prod)
{
    tl_assert(isIRAtom(daddr));
    Event *ev = new_event(sb);
    ev->ekind = Event_Dr;
    ev->addr = daddr;
    ev->size = dsize;
    ev->guard = guard;
    ev->now = now;
    ev->prod = prod;
}

static void addEvent_Dw(IRSB *sb, IRAtom *daddr, Int dsize, IRAtom *guard,
                        IRAtom *now)
{
    tl_assert(isIRAtom(daddr));
    /* lackey: merge with the preceding read of the same address by the
     * same instruction (with fetches recorded, lackey's Ir event of the
     * next instruction stands between them otherwise) */
    Event *last = &events[events_used - 1];
    if (guard == NULL && events_used > 0 && last->ekind == Event_Dr &&
        last->size == dsize && last->guard == NULL &&
        eqIRAtom(last->addr, daddr) && eqIRAtom(last->now, now)) {
        last->ekind = Event_Dm;
        return;
    }
    Event *ev = new_event(sb);
    ev->ekind = Event_Dw;
    ev->addr = daddr;
    ev->size = dsize;
    ev->guard = guard;
    ev->now = now;
}

/* ---------------------------------------------------------------------- */
/* Shadows.                                                               */

#define GPR_FIRST offsetof(VexGuestAMD64State, guest_RAX)
#define GPR_END (offsetof(VexGuestAMD64State, guest_R15) + 8)

/* The per-superblock state of the instrumentation. */
typedef struct {
    IRSB *sb;
    IRTemp *shadow;  /* per input temp: its shadow temp, or IRTemp_INVALID */
    Int n_temps;
    Int shadow_base; /* offset of the shadow guest state */
    IRTemp base;     /* instructions before this block */
    IRTemp now;      /* the current instruction's number, or INVALID */
    ULong insn;      /* the current instruction's index in the block, 1-based */
    Bool track;      /* dependency tracking on */
} Instr;

static IRTemp new_tmp(Instr *in, IRType ty, IRExpr *e)
{
    IRTemp t = newIRTemp(in->sb->tyenv, ty);
    addStmtToIRSB(in->sb, IRStmt_WrTmp(t, e));
    return t;
}

/* The current instruction's number as an atom. */
static IRAtom *now_atom(Instr *in)
{
    if (in->now == IRTemp_INVALID) {
        in->now = new_tmp(in, Ity_I64,
                          IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(in->base),
                                       IRExpr_Const(IRConst_U64(in->insn))));
    }
    return IRExpr_RdTmp(in->now);
}

/* The youngest of two shadows (IRTemp_INVALID: none). */
static IRTemp shadow_max(Instr *in, IRTemp a, IRTemp b)
{
    if (a == IRTemp_INVALID || a == b) {
        return b;
    }
    if (b == IRTemp_INVALID) {
        return a;
    }
    IRTemp lt = new_tmp(in, Ity_I1,
                        IRExpr_Binop(Iop_CmpLT64U, IRExpr_RdTmp(a), IRExpr_RdTmp(b)));
    return new_tmp(in, Ity_I64,
                   IRExpr_ITE(IRExpr_RdTmp(lt), IRExpr_RdTmp(b), IRExpr_RdTmp(a)));
}

static IRTemp shadow_of_atom(Instr *in, IRExpr *a)
{
    if (a != NULL && a->tag == Iex_RdTmp) {
        return in->shadow[a->Iex.RdTmp.tmp];
    }
    return IRTemp_INVALID;
}

static Bool is_int_type(IRType ty)
{
    return ty == Ity_I1 || ty == Ity_I8 || ty == Ity_I16 || ty == Ity_I32 ||
           ty == Ity_I64;
}

/* The 8-byte register slot that a read of `size` bytes at `off` lies in,
 * or -1 when it is not inside one integer register. */
static Int gpr_slot(Int off, Int size)
{
    if (off < (Int)GPR_FIRST || off + size > (Int)GPR_END) {
        return -1;
    }
    Int slot = off - (off - (Int)GPR_FIRST) % 8;
    return off + size <= slot + 8 ? slot : -1;
}

/* The shadow of a (flat) expression, the value of a WrTmp. */
static IRTemp shadow_of_expr(Instr *in, IRExpr *e)
{
    switch (e->tag) {
    case Iex_RdTmp:
    case Iex_Const:
        return shadow_of_atom(in, e);
    case Iex_Get: {
        if (!is_int_type(e->Iex.Get.ty)) {
            return IRTemp_INVALID;
        }
        Int slot = gpr_slot(e->Iex.Get.offset, sizeofIRType(e->Iex.Get.ty));
        if (slot < 0) {
            return IRTemp_INVALID;
        }
        return new_tmp(in, Ity_I64, IRExpr_Get(slot + in->shadow_base, Ity_I64));
    }
    case Iex_Unop:
        return shadow_of_atom(in, e->Iex.Unop.arg);
    case Iex_Binop:
        return shadow_max(in, shadow_of_atom(in, e->Iex.Binop.arg1),
                          shadow_of_atom(in, e->Iex.Binop.arg2));
    case Iex_Triop: {
        IRTriop *t = e->Iex.Triop.details;
        IRTemp s = shadow_max(in, shadow_of_atom(in, t->arg1), shadow_of_atom(in, t->arg2));
        return shadow_max(in, s, shadow_of_atom(in, t->arg3));
    }
    case Iex_Qop: {
        IRQop *q = e->Iex.Qop.details;
        IRTemp s = shadow_max(in, shadow_of_atom(in, q->arg1), shadow_of_atom(in, q->arg2));
        s = shadow_max(in, s, shadow_of_atom(in, q->arg3));
        return shadow_max(in, s, shadow_of_atom(in, q->arg4));
    }
    case Iex_ITE:
        return shadow_max(in, shadow_of_atom(in, e->Iex.ITE.iftrue),
                          shadow_of_atom(in, e->Iex.ITE.iffalse));
    case Iex_CCall: {
        IRTemp s = IRTemp_INVALID;
        for (Int i = 0; e->Iex.CCall.args[i] != NULL; i++) {
            s = shadow_max(in, s, shadow_of_atom(in, e->Iex.CCall.args[i]));
        }
        return s;
    }
    default: /* Iex_GetI (x87 registers), Iex_Load (done by the caller) */
        return IRTemp_INVALID;
    }
}

/* Clears the shadows of the integer registers that a write of `size`
 * bytes at guest offset `off` overlaps (all of them when not a 64-bit
 * write of one register, which sets the shadow instead). */
static void shadow_put(Instr *in, Int off, Int size, IRTemp value)
{
    if (off + size <= (Int)GPR_FIRST || off >= (Int)GPR_END) {
        return;
    }
    if (size == 8 && (off - (Int)GPR_FIRST) % 8 == 0) {
        IRExpr *v = value == IRTemp_INVALID ? IRExpr_Const(IRConst_U64(0))
                                            : IRExpr_RdTmp(value);
        addStmtToIRSB(in->sb, IRStmt_Put(off + in->shadow_base, v));
        return;
    }
    Int lo = off < (Int)GPR_FIRST ? (Int)GPR_FIRST : off;
    Int hi = off + size > (Int)GPR_END ? (Int)GPR_END : off + size;
    for (Int s = lo - (lo - (Int)GPR_FIRST) % 8; s < hi; s += 8) {
        addStmtToIRSB(in->sb, IRStmt_Put(s + in->shadow_base, IRExpr_Const(IRConst_U64(0))));
    }
}

static void set_shadow(Instr *in, IRTemp t, IRTemp s)
{
    if (t != IRTemp_INVALID && t < in->n_temps) {
        in->shadow[t] = s;
    }
}

/* ---------------------------------------------------------------------- */
/* Instrumentation.                                                       */

static IRTemp *shadow_array;
static Int shadow_array_len;

static IRSB *cp_instrument(VgCallbackClosure *closure, IRSB *sbIn,
                           const VexGuestLayout *layout,
                           const VexGuestExtents *vge,
                           const VexArchInfo *archinfo_host, IRType gWordTy,
                           IRType hWordTy)
{
    (void)closure, (void)vge, (void)archinfo_host;
    if (gWordTy != hWordTy || gWordTy != Ity_I64) {
        VG_(tool_panic)("cpgrind: host/guest word size mismatch");
    }
    IRTypeEnv *tyenv = sbIn->tyenv;
    IRSB *sbOut = deepCopyIRSBExceptStmts(sbIn);

    Instr in;
    in.sb = sbOut;
    in.n_temps = tyenv->types_used;
    if (shadow_array_len < in.n_temps) {
        if (shadow_array != NULL) {
            VG_(free)(shadow_array);
        }
        shadow_array_len = in.n_temps * 2 + 64;
        shadow_array = VG_(malloc)("cpgrind.shadow", shadow_array_len * sizeof(IRTemp));
    }
    in.shadow = shadow_array;
    for (Int t = 0; t < in.n_temps; t++) {
        in.shadow[t] = IRTemp_INVALID;
    }
    in.shadow_base = layout->total_sizeB;
    in.now = IRTemp_INVALID;
    in.insn = 0;
    in.track = clo_dep_window > 0;

    /* Copy verbatim any IR preamble preceding the first IMark. */
    Int i = 0;
    while (i < sbIn->stmts_used && sbIn->stmts[i]->tag != Ist_IMark) {
        addStmtToIRSB(sbOut, sbIn->stmts[i]);
        i++;
    }
    events_used = 0;
    in.base = new_tmp(&in, Ity_I64,
                      IRExpr_Load(Iend_LE, Ity_I64,
                                  IRExpr_Const(IRConst_U64((ULong)(Addr)&icount))));

    for (; i < sbIn->stmts_used; i++) {
        IRStmt *st = sbIn->stmts[i];
        if (!st || st->tag == Ist_NoOp) {
            continue;
        }
        switch (st->tag) {
        case Ist_AbiHint:
        case Ist_MBE:
            addStmtToIRSB(sbOut, st);
            break;
        case Ist_Put:
            if (in.track) {
                IRExpr *d = st->Ist.Put.data;
                shadow_put(&in, st->Ist.Put.offset,
                           sizeofIRType(typeOfIRExpr(tyenv, d)), shadow_of_atom(&in, d));
            }
            addStmtToIRSB(sbOut, st);
            break;
        case Ist_PutI:
            /* x87 registers and tags: no integer register */
            addStmtToIRSB(sbOut, st);
            break;
        case Ist_IMark:
            in.insn++;
            in.now = IRTemp_INVALID;
            if (clo_ifetch) {
                addEvent_Ir(sbOut, mkIRExpr_HWord((HWord)st->Ist.IMark.addr),
                            st->Ist.IMark.len);
            }
            addStmtToIRSB(sbOut, st);
            break;
        case Ist_WrTmp: {
            IRExpr *data = st->Ist.WrTmp.data;
            IRTemp dst = st->Ist.WrTmp.tmp;
            if (data->tag == Iex_Load) {
                IRExpr *addr = data->Iex.Load.addr;
                IRTemp prod = in.track ? shadow_of_atom(&in, addr) : IRTemp_INVALID;
                IRAtom *now = now_atom(&in);
                addEvent_Dr(sbOut, addr, sizeofIRType(data->Iex.Load.ty), NULL, now,
                            prod == IRTemp_INVALID ? NULL : IRExpr_RdTmp(prod));
                if (in.track) {
                    set_shadow(&in, dst, in.now);
                }
            } else if (in.track) {
                set_shadow(&in, dst, shadow_of_expr(&in, data));
            }
            addStmtToIRSB(sbOut, st);
            break;
        }
        case Ist_Store: {
            IRExpr *data = st->Ist.Store.data;
            IRType type = typeOfIRExpr(tyenv, data);
            tl_assert(type != Ity_INVALID);
            addEvent_Dw(sbOut, st->Ist.Store.addr, sizeofIRType(type), NULL,
                        now_atom(&in));
            addStmtToIRSB(sbOut, st);
            break;
        }
        case Ist_StoreG: {
            IRStoreG *sg = st->Ist.StoreG.details;
            IRType type = typeOfIRExpr(tyenv, sg->data);
            tl_assert(type != Ity_INVALID);
            addEvent_Dw(sbOut, sg->addr, sizeofIRType(type), sg->guard, now_atom(&in));
            addStmtToIRSB(sbOut, st);
            break;
        }
        case Ist_LoadG: {
            IRLoadG *lg = st->Ist.LoadG.details;
            IRType type = Ity_INVALID, typeWide = Ity_INVALID;
            typeOfIRLoadGOp(lg->cvt, &typeWide, &type);
            tl_assert(type != Ity_INVALID);
            IRTemp prod = in.track ? shadow_of_atom(&in, lg->addr) : IRTemp_INVALID;
            IRAtom *now = now_atom(&in);
            addEvent_Dr(sbOut, lg->addr, sizeofIRType(type), lg->guard, now,
                        prod == IRTemp_INVALID ? NULL : IRExpr_RdTmp(prod));
            if (in.track) {
                IRTemp alt = shadow_of_atom(&in, lg->alt);
                IRExpr *altx = alt == IRTemp_INVALID ? IRExpr_Const(IRConst_U64(0))
                                                     : IRExpr_RdTmp(alt);
                set_shadow(&in, lg->dst,
                           new_tmp(&in, Ity_I64, IRExpr_ITE(lg->guard, now, altx)));
            }
            addStmtToIRSB(sbOut, st);
            break;
        }
        case Ist_Dirty: {
            IRDirty *d = st->Ist.Dirty.details;
            if (d->mFx != Ifx_None) {
                tl_assert(d->mAddr != NULL);
                tl_assert(d->mSize != 0);
                if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify) {
                    IRTemp prod = in.track ? shadow_of_atom(&in, d->mAddr) : IRTemp_INVALID;
                    addEvent_Dr(sbOut, d->mAddr, d->mSize, NULL, now_atom(&in),
                                prod == IRTemp_INVALID ? NULL : IRExpr_RdTmp(prod));
                }
                if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify) {
                    addEvent_Dw(sbOut, d->mAddr, d->mSize, NULL, now_atom(&in));
                }
            }
            addStmtToIRSB(sbOut, st);
            if (in.track) {
                /* its result and the registers it writes have no shadow */
                for (Int k = 0; k < d->nFxState; k++) {
                    if (d->fxState[k].fx == Ifx_Read) {
                        continue;
                    }
                    for (Int r = 0; r <= d->fxState[k].nRepeats; r++) {
                        shadow_put(&in, d->fxState[k].offset + r * d->fxState[k].repeatLen,
                                   d->fxState[k].size, IRTemp_INVALID);
                    }
                }
                set_shadow(&in, d->tmp, IRTemp_INVALID);
            }
            break;
        }
        case Ist_CAS: {
            IRCAS *cas = st->Ist.CAS.details;
            IRType dataTy = typeOfIRExpr(tyenv, cas->dataLo);
            Int dataSize = sizeofIRType(dataTy);
            if (cas->dataHi != NULL) {
                dataSize *= 2;
            }
            IRTemp prod = in.track ? shadow_of_atom(&in, cas->addr) : IRTemp_INVALID;
            IRAtom *now = now_atom(&in);
            addEvent_Dr(sbOut, cas->addr, dataSize, NULL, now,
                        prod == IRTemp_INVALID ? NULL : IRExpr_RdTmp(prod));
            addEvent_Dw(sbOut, cas->addr, dataSize, NULL, now);
            if (in.track) {
                set_shadow(&in, cas->oldLo, in.now);
                set_shadow(&in, cas->oldHi, in.now);
            }
            addStmtToIRSB(sbOut, st);
            break;
        }
        case Ist_LLSC: {
            IRType dataTy;
            IRAtom *now = now_atom(&in);
            if (st->Ist.LLSC.storedata == NULL) {
                dataTy = typeOfIRTemp(tyenv, st->Ist.LLSC.result);
                IRTemp prod =
                    in.track ? shadow_of_atom(&in, st->Ist.LLSC.addr) : IRTemp_INVALID;
                addEvent_Dr(sbOut, st->Ist.LLSC.addr, sizeofIRType(dataTy), NULL, now,
                            prod == IRTemp_INVALID ? NULL : IRExpr_RdTmp(prod));
                if (in.track) {
                    set_shadow(&in, st->Ist.LLSC.result, in.now);
                }
            } else {
                dataTy = typeOfIRExpr(tyenv, st->Ist.LLSC.storedata);
                addEvent_Dw(sbOut, st->Ist.LLSC.addr, sizeofIRType(dataTy), NULL, now);
                if (in.track) {
                    set_shadow(&in, st->Ist.LLSC.result, IRTemp_INVALID);
                }
            }
            addStmtToIRSB(sbOut, st);
            break;
        }
        case Ist_Exit: {
            flushEvents(sbOut);
            /* taken: the instructions up to this one are done */
            addStmtToIRSB(sbOut,
                          IRStmt_StoreG(Iend_LE,
                                        IRExpr_Const(IRConst_U64((ULong)(Addr)&icount)),
                                        now_atom(&in), st->Ist.Exit.guard));
            addStmtToIRSB(sbOut, st);
            break;
        }
        default:
            ppIRStmt(st);
            tl_assert(0);
        }
    }
    flushEvents(sbOut);
    addStmtToIRSB(sbOut,
                  IRStmt_Store(Iend_LE, IRExpr_Const(IRConst_U64((ULong)(Addr)&icount)),
                               now_atom(&in)));
    return sbOut;
}

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
}

VG_DETERMINE_INTERFACE_VERSION(cp_pre_clo_init)
