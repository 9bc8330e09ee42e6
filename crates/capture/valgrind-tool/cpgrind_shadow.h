/*
 * cpgrind_shadow.h: the shadows of dependency tracking (see cpgrind.c's
 * header for the rule): per IR temp a shadow temp, per 64-bit integer
 * guest register a slot of valgrind's shadow guest state. Included once,
 * by cpgrind.c.
 */
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
