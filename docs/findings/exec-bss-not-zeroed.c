/* Counts the non-zero bytes of this program's own .bss, which the kernel must zero at exec. */
#include <stdio.h>
extern char __bss_start[], _end[];
static char filler_data[100] = { 1 };   /* .data ends mid-page */
static char bss[8192];                   /* .bss right after it */
int main(void) {
        size_t n = 0, first = 0;
        for (char *p = __bss_start; p < _end; p++)
                if (*p && !n++)
                        first = p - __bss_start;
        printf("bss %zu bytes, %zu non-zero (first at %zu)%s\n", (size_t)(_end - __bss_start), n, first, filler_data[0] ? "" : "?");
        return n ? 3 : 0;
}
