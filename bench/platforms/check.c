/* Links against the build helper's static library (and the Rust probe object) and checks,
 * for every constant, its 64-byte alignment and its bytes (FNV-1a against the run-time
 * resolver's bytes, in constants.h). Freestanding unless HAVE_LIBC: the MSVC and Mach-O
 * links have no C library here. Exit status: 0 all good; 10+i constant i's bytes differ;
 * 100+i constant i misaligned; 200 the Rust probe resolved to another address; 201 the end
 * symbol is not right after the linked bytes, or the probe's is not it;
 * 202 the program's own statics or its C library failed beside the data (HAVE_LIBC). */
#include "constants.h"

extern const unsigned char WEBNN_SYMBOL[];
#ifdef HAVE_PROBE
/* Compiled by rustc for the target from the macro's declaration (bench/platforms.sh). */
extern const unsigned char *webnn_probe(void);
#ifdef WEBNN_END_SYMBOL
extern const unsigned char *webnn_probe_end(void);
#endif
#endif
#ifdef WEBNN_END_SYMBOL
extern const unsigned char WEBNN_END_SYMBOL[];
#endif
#ifdef HAVE_LIBC
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#define SAY(...) printf(__VA_ARGS__)
/* The program's own statics beside the data: zero-initialized (.bss) and initialized
 * (.data), written and read back, and the C library (malloc, snprintf, strcmp). */
static unsigned char own_bss[1 << 20];
static unsigned own_data[4] = {1, 2, 3, 4};
static int own_statics(void) {
    for (unsigned i = 0; i < sizeof own_bss; i += 4096) own_bss[i] = (unsigned char)(i >> 12);
    own_data[3] += own_bss[8192];
    char *text = malloc(64);
    if (!text) return 0;
    snprintf(text, 64, "%u-%u", own_data[3], (unsigned)own_bss[sizeof own_bss - 4096]);
    int ok = strcmp(text, "6-255") == 0;
    free(text);
    return ok;
}
#else
#define SAY(...) ((void)0)
#endif

static unsigned long long fnv1a(const unsigned char *p, unsigned long long n) {
    unsigned long long h = 0xcbf29ce484222325ull;
    for (unsigned long long i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x00000100000001b3ull;
    }
    return h;
}

int main(void) {
    const unsigned char *base = WEBNN_SYMBOL;
#ifdef HAVE_LIBC
    if (!own_statics()) {
        SAY("the program's own statics or the C library failed\n");
        return 202;
    }
    SAY("  own statics (.bss at %p, .data at %p) and libc work; data at %p\n", (void *)own_bss,
        (void *)own_data, (void *)base);
#endif
#ifdef HAVE_PROBE
    if (webnn_probe() != base) {
        SAY("rust probe resolved to %p, the library defines %p\n", (void *)webnn_probe(), (void *)base);
        return 200;
    }
#endif
#ifdef WEBNN_END_SYMBOL
    if (WEBNN_END_SYMBOL != base + WEBNN_LINKED_LEN
#ifdef HAVE_PROBE
        || webnn_probe_end() != WEBNN_END_SYMBOL
#endif
    ) {
        SAY("the end symbol is at %p, the linked bytes end at %p\n", (void *)WEBNN_END_SYMBOL,
            (void *)(base + WEBNN_LINKED_LEN));
        return 201;
    }
    SAY("  end symbol right after the %llu linked bytes (data, table, graph JSON)\n",
        WEBNN_LINKED_LEN);
#endif
    for (unsigned i = 0; i < CONSTANT_COUNT; i++) {
        const unsigned char *p = base + CONSTANTS[i].offset;
        if (((unsigned long long)(__SIZE_TYPE__)p) % 64 != 0) {
            SAY("%s: address %p is not 64-byte aligned\n", CONSTANTS[i].name, (void *)p);
            return 100 + i;
        }
        if (fnv1a(p, CONSTANTS[i].length) != CONSTANTS[i].fnv) {
            SAY("%s: bytes differ\n", CONSTANTS[i].name);
            return 10 + i;
        }
        SAY("  %-8s at %p: %llu bytes equal, 64-byte aligned\n", CONSTANTS[i].name, (void *)p,
            CONSTANTS[i].length);
    }
    return 0;
}
