/* A pointer chase: N nodes of 64 bytes linked in a random order (xorshift
   shuffle), followed LAPS times round; prints the nodes' address range.
   Shared by the cpgrind tests of crates/capture and crates/cli. */
#include <stdio.h>
#ifndef N
#define N 65536
#endif
#ifndef LAPS
#define LAPS 4
#endif
struct node { struct node *next; long pad[7]; };
struct node nodes[N];
unsigned perm[N];
int main(void) {
    unsigned long x = 88172645463325252UL;
    for (unsigned i = 0; i < N; i++) perm[i] = i;
    for (unsigned i = N - 1; i > 0; i--) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        unsigned j = x % (i + 1), t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    for (unsigned i = 0; i < N; i++) nodes[perm[i]].next = &nodes[perm[(i + 1) % N]];
    struct node *p = &nodes[perm[0]];
    for (long k = 0; k < (long)LAPS * N; k++) p = p->next;
    printf("%p %p\n", (void *)nodes, (void *)(nodes + N));
    return p == NULL;
}
