/*
 * cp_gap.h: the records of an instruction gap, shared by cachepart's two
 * capture tools, the valgrind tool (valgrind-tool/cpgrind.c) and the qemu
 * plugin (qemu-plugin/cachepart_plugin.c). Both builds make it part of the
 * source they compile (crates/capture/src/vgtool.rs writes it beside
 * cpgrind.c; crates/capture/src/plugin.rs puts it in place of the plugin's
 * #include line), and crates/capture/tests/gap_records.rs compiles it
 * into a small driver and checks its records against Rust's, byte for byte.
 *
 * The rule is `Record::after_gap` of crates/trace/src/record.rs
 * (docs/trace-format.md, "Instruction counts"): a record preceded by `gap`
 * instructions without records of their own carries the gap in its 6-bit
 * gap field when it is at most 63; otherwise InstrGap escapes (kind 4,
 * event code 0, gap field 0) come first, each with at most 2^48 - 1
 * instructions in its 48-bit payload, full ones first, as many as the gap
 * needs (a gap of 2^48 or more is split over several, none is lost), then
 * the record with a gap field of 0.
 *
 * Records are handed to an `emit(ctx, record)` callback, which appends
 * them to the tool's buffer; a tool passes a static function, which the
 * compiler inlines into the fast path (a gap of at most 63: one store).
 */
#ifndef CP_GAP_H
#define CP_GAP_H

#include <stdint.h>

/* The gap field: bits 58-63, at most 63. */
#define CP_GAP_SHIFT 58
#define CP_MAX_GAP UINT64_C(63)
#define CP_GAP_MASK (CP_MAX_GAP << CP_GAP_SHIFT)
/* Largest escape payload (48 bits). */
#define CP_MAX_PAYLOAD ((UINT64_C(1) << 48) - 1)
/* An InstrGap escape of 0 instructions: kind 4 (bits 48-50), event code 0
 * (bits 51-57), gap field 0; the instructions go in the payload. */
#define CP_INSTR_GAP_ESCAPE (UINT64_C(4) << 48)

/* Appends one record to the tool's output. */
typedef void (*cp_emit_fn)(void *ctx, uint64_t record);

/* Emits n instructions as InstrGap escapes (none when n is 0): n / (2^48
 * - 1) escapes of 2^48 - 1 instructions, then one of the remainder if it
 * is not 0. Out of line: accesses reach it only for gaps above 63. */
static __attribute__((noinline, unused)) void
cp_instr_gaps(uint64_t n, cp_emit_fn emit, void *ctx)
{
    while (n > 0) {
        uint64_t k = n < CP_MAX_PAYLOAD ? n : CP_MAX_PAYLOAD;
        n -= k;
        emit(ctx, CP_INSTR_GAP_ESCAPE | k);
    }
}

/* Emits the records of `Record::after_gap(record, gap)`: the record with
 * its gap field set to `gap` if that is at most 63; else the InstrGap
 * escapes of `gap` (cp_instr_gaps), then the record with a gap field of
 * 0. */
static inline __attribute__((always_inline)) void
cp_after_gap(uint64_t record, uint64_t gap, cp_emit_fn emit, void *ctx)
{
    if (__builtin_expect(gap > CP_MAX_GAP, 0)) {
        cp_instr_gaps(gap, emit, ctx);
        emit(ctx, record & ~CP_GAP_MASK);
        return;
    }
    emit(ctx, (record & ~CP_GAP_MASK) | gap << CP_GAP_SHIFT);
}

#endif /* CP_GAP_H */
