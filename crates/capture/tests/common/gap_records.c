/* Writes to standard output, as 8-byte little-endian words, the records
   crates/capture/include/cp_gap.h emits (the instruction-gap encoding of
   cpgrind and the qemu plugin), for the gap records test
   (tests/gap_records.rs):
     gap_records after RECORD GAP   cp_after_gap(RECORD, GAP)
     gap_records gaps N             cp_instr_gaps(N)
   Numbers are unsigned 64-bit, decimal or 0x-prefixed hex. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_gap.h"

static void emit(void *ctx, uint64_t rec)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(rec >> (8 * i));
    if (fwrite(b, 1, sizeof b, (FILE *)ctx) != sizeof b) {
        perror("gap_records: write");
        exit(2);
    }
}

static uint64_t number(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno != 0 || *s == '\0' || *s == '-' || *end != '\0') {
        fprintf(stderr, "gap_records: bad number `%s`\n", s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "after") == 0) {
        cp_after_gap(number(argv[2]), number(argv[3]), emit, stdout);
    } else if (argc == 3 && strcmp(argv[1], "gaps") == 0) {
        cp_instr_gaps(number(argv[2]), emit, stdout);
    } else {
        fprintf(stderr, "usage: gap_records after RECORD GAP | gaps N\n");
        return 2;
    }
    return fflush(stdout) == 0 ? 0 : 2;
}
