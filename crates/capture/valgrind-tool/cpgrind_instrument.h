/*
 * cpgrind_instrument.h: the instrumentation of a superblock: lackey's
 * events (cpgrind_events.h), the dependency shadows (cpgrind_shadow.h) and
 * the instruction count kept at the block's exits. Included once, by
 * cpgrind.c.
 */
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
