/*
 * cpgrind_events.h: lackey's event buffer (valgrind 3.19, lackey/lk_main.c),
 * turned into calls of cpgrind's record helpers. Included once, by
 * cpgrind.c, after the helpers it calls.
 */
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
    Event *last = events_used > 0 ? &events[events_used - 1] : NULL;
    if (guard == NULL && last != NULL && last->ekind == Event_Dr &&
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
