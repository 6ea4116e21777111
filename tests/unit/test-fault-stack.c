/* SPDX-License-Identifier: MIT */
/* A fault's stack as the daemon shows it (src/daemon/fault-stack.c): named
 * frames from the failed function down, "?" for a frame no symbol covers,
 * the symbols read again for a frame of the caller's that cannot be named,
 * nothing without symbols, and never a kernel address. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fault-stack.h"
#include "test-util.h"

/* The engine, scripted: addresses from 0x1000 up are named f<N>, where
 * addr = 0x1000 * N; those at or above `known_below` are not (yet). */
static struct {
        int error;                      /* engine_symbolize()'s error when not 0 */
        uint64_t known_below;
        uint64_t known_after_refresh;
        int refreshes;
        int refresh_result;
} fake;

int engine_symbolize(Engine *e, uint64_t addr, char *buf, size_t size) {
        if (fake.error)
                return fake.error;
        if (addr < 0x1000 || addr >= fake.known_below)
                return -ENOENT;
        snprintf(buf, size, "f%" PRIu64 "+0x%" PRIx64, addr / 0x1000, addr % 0x1000);
        return 0;
}

int engine_refresh_symbols(Engine *e) {
        fake.refreshes++;
        if (fake.refresh_result > 0)
                fake.known_below = fake.known_after_refresh;
        return fake.refresh_result;
}

static const char *stack_str(json_object *a) {
        return json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN);
}

static void check(const char *function, const uint64_t *ips, uint32_t n, const char *expected) {
        struct inject_event ev = { .n_stack = n };
        json_object *a;

        memcpy(ev.stack, ips, n * sizeof(uint64_t));
        a = fault_stack_to_json(NULL, function, &ev);
        ASSERT_NOT_NULL(a);
        ASSERT_STREQ(stack_str(a), expected);
        if (strstr(stack_str(a), "0x") && !strstr(stack_str(a), "+0x"))
                test_fail("an address in %s", stack_str(a));
        json_object_put(a);
}

static void reset(void) {
        fake = (typeof(fake)) { .known_below = UINT64_MAX, .known_after_refresh = UINT64_MAX };
}

int main(void) {
        /* Ours (an unnamed BPF program, f1) above the failed function f2. */
        const uint64_t ips[] = { 0xad, 0x1010, 0x2004, 0x3020, 0x4000, 0 };

        reset();
        check("f2", ips, 5, "[\"f2+0x4\",\"f3+0x20\",\"f4+0x0\"]");
        ASSERT_EQ(fake.refreshes, 0);   /* the unnamed frame is ours: not worth a read */

        /* A caller in a module loaded since: read again, then named. */
        reset();
        fake.known_below = 0x4000;
        fake.known_after_refresh = UINT64_MAX;
        fake.refresh_result = 1;
        check("f2", ips, 5, "[\"f2+0x4\",\"f3+0x20\",\"f4+0x0\"]");
        ASSERT_EQ(fake.refreshes, 1);

        /* Read again too soon, or still unknown: "?", not the address. */
        reset();
        fake.known_below = 0x4000;
        fake.refresh_result = 0;
        check("f2", ips, 5, "[\"f2+0x4\",\"f3+0x20\",\"?\"]");
        ASSERT_EQ(fake.refreshes, 1);

        /* The failed function itself unknown: every frame, unnamed as "?". */
        reset();
        check("g", ips, 5, "[\"?\",\"f1+0x10\",\"f2+0x4\",\"f3+0x20\",\"f4+0x0\"]");

        /* No symbols at all (kallsyms unreadable, or hidden): no stack. */
        reset();
        fake.error = -EPERM;
        check("f2", ips, 5, "[]");
        fake.error = -ENODATA;
        check("f2", ips, 5, "[]");

        /* A zero ends the stack; n_stack beyond the array is clamped. */
        reset();
        check("f2", ips, 6, "[\"f2+0x4\",\"f3+0x20\",\"f4+0x0\"]");
        {
                struct inject_event ev = { .n_stack = 1000 };
                json_object *a;

                for (int i = 0; i < INJECT_STACK_DEPTH; i++)
                        ev.stack[i] = 0x1000 * (uint64_t) (i + 1);
                a = fault_stack_to_json(NULL, "f1", &ev);
                ASSERT_NOT_NULL(a);
                ASSERT_EQ(json_object_array_length(a), INJECT_STACK_DEPTH);
                json_object_put(a);
        }
        printf("PASS test-fault-stack\n");
        return 0;
}
