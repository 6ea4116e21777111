/* SPDX-License-Identifier: MIT */

/* Varlink names and interface descriptions (varlink-idl.c). */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "json-reader.h"
#include "json-util.h"
#include "test-util.h"
#include "varlink-fixture.h"
#include "varlink.h"

/* ---- Names and IDL ---- */

static void test_names(void) {
        static const char *const good_interfaces[] = {
                "org.varlink.service", "org.injectd.Injector", "io.systemd.Resolve", "a.b", "a1.2b",
                "org.foo-bar.x", "org.foo--bar.x",
        };
        static const char *const bad_interfaces[] = {
                "", "org", "1org.x", "org..x", ".org.x", "org.x.", "org.-x", "org.x-", "org.x_y", "org.x y",
                "org.é",
        };

        for (size_t i = 0; i < ELEMENTSOF(good_interfaces); i++)
                if (!varlink_interface_name_is_valid(good_interfaces[i]))
                        test_fail("'%s' should be a valid interface name", good_interfaces[i]);
        for (size_t i = 0; i < ELEMENTSOF(bad_interfaces); i++)
                if (varlink_interface_name_is_valid(bad_interfaces[i]))
                        test_fail("'%s' should not be a valid interface name", bad_interfaces[i]);
        ASSERT_FALSE(varlink_interface_name_is_valid(NULL));

        ASSERT_TRUE(varlink_qualified_name_is_valid("org.example.test.Echo"));
        ASSERT_TRUE(varlink_qualified_name_is_valid("org.injectd.Injector.Inject2"));
        ASSERT_FALSE(varlink_qualified_name_is_valid("org.example.test.echo"));
        ASSERT_FALSE(varlink_qualified_name_is_valid("org.Echo.")); /* "org" alone is no interface */
        ASSERT_FALSE(varlink_qualified_name_is_valid("org.Echo"));
        ASSERT_FALSE(varlink_qualified_name_is_valid("Echo"));
        ASSERT_FALSE(varlink_qualified_name_is_valid("org.example.test.Echo-2"));
        ASSERT_FALSE(varlink_qualified_name_is_valid(NULL));
        ASSERT_TRUE(varlink_member_name_is_valid("GetInfo"));
        ASSERT_FALSE(varlink_member_name_is_valid("getInfo"));
        ASSERT_FALSE(varlink_member_name_is_valid("Get_Info"));
}

static void test_idl(void) {
        static const char *const good[] = {
                "interface org.example.x\nmethod A() -> ()\n",
                "# leading comment\n\ninterface org.example.x # trailing comment\r\n"
                "type T (a: int, b_c: ?[]string, d: [string]float, e: object, f: (x, y), g: (h: bool))\n"
                "type E (one, two, three)\n"
                "type Empty ()\n"
                "method M(t: T, list: []?T, m: [string][]E) -> (r: ?(a: int))\n"
                "error Bad (why: string)\n"
                "error Plain ()\n",
                "interface org.example.x\nmethod A()->() # same line\nerror B()",
                "interface org.example.x\nmethod A(\n  a: int,\n  b: int\n) -> (\n)\n",
        };
        static const struct {
                const char *text;
                const char *message;
        } bad[] = {
                { "", "1:1: expected 'interface', got end of input" },
                { "# just a comment\n", "2:1: expected 'interface', got end of input" },
                { "interface org\nmethod A() -> ()\n", "1:11: expected an interface name" },
                { "interface org.example.x\n", "2:1: interface declares no method, type or error" },
                { "interface org.example.x\nmethod a() -> ()\n", "2:8: expected a name" },
                { "interface org.example.x\nmethod A() -> (\n", "3:1: expected a field name, got end of input" },
                { "interface org.example.x\nmethod A() ()\n", "2:12: expected '->', got '('" },
                { "interface org.example.x\nmethod A(a: int -> ()\n", "2:17: expected ',' or ')', got '->'" },
                { "interface org.example.x\nmethod A(a int) -> ()\n", "2:12: expected ':', got 'int'" },
                { "interface org.example.x\nmethod A(a: Unknown) -> ()\n", "2:13: unknown type 'Unknown'" },
                { "interface org.example.x\nmethod A(a: ??int) -> ()\n", "2:14: '?' twice" },
                { "interface org.example.x\nmethod A(a: int, a: int) -> ()\n", "2:18: duplicate field 'a'" },
                { "interface org.example.x\ntype T (a, a)\n", "2:12: duplicate enum value 'a'" },
                { "interface org.example.x\nmethod A() -> ()\nerror A ()\n", "3:7: duplicate member 'A'" },
                { "interface org.example.x\nmethod A(a) -> ()\n", "2:11: expected ':', got ')'" },
                { "interface org.example.x\nerror E (a, b)\n", "2:11: expected ':', got ','" },
                { "interface org.example.x\nmethod A(a: [int]string) -> ()\n", "2:14: expected ']', got 'int'" },
                { "interface org.example.x\nmethod A(a: int) -> () junk\n", "2:24: expected 'method', 'type' or 'error', got 'junk'" },
                { "interface org.example.x method A() -> ()\n", "1:25: expected a new line before 'method'" },
                { "interface org.example.x\nmethod A() -> () error B()\n", "2:18: expected a new line before 'error'" },
                { "interface org.example.x\nmethod A(a: int;) -> ()\n", "2:16: unexpected character ';'" },
                { "interface org.example.x\nmethod A(_a: int) -> ()\n", "2:10: expected a field name, got '_a'" },
                { "interface org.example.x\nmethod A(a__b: int) -> ()\n", "2:10: expected a field name" },
                { "interface org.example.x\nmethod A(a: float) -> ())\n", "2:25: expected 'method', 'type' or 'error', got ')'" },
                { "interface org.example.x\n# caf\xc3\xa9 \xff\nmethod A() -> ()\n", "2:8: invalid UTF-8" },
        };
        char deep[400] = "interface org.example.x\nmethod A(a: ";
        char *err = NULL, *iface = NULL, **methods = NULL;

        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                if (varlink_idl_validate(good[i], &err) < 0)
                        test_fail("description %zu should parse: %s", i, err);

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int r;

                err = NULL;
                r = varlink_idl_validate(bad[i].text, &err);
                if (r != -EBADMSG)
                        test_fail("description '%s': expected -EBADMSG, seen %d", bad[i].text, r);
                ASSERT_NOT_NULL(err);
                if (strncmp(err, bad[i].message, strlen(bad[i].message)) != 0)
                        test_fail("description '%s': expected message '%s', seen '%s'", bad[i].text,
                                  bad[i].message, err);
                free(err);
        }

        /* Without a place for the message. */
        ASSERT_RET(varlink_idl_validate("interface", NULL), -EBADMSG);
        ASSERT_RET(varlink_idl_validate(NULL, NULL), -EINVAL);

        /* Nesting is bounded. */
        for (int i = 0; i < 40; i++)
                strcat(deep, "[]");
        strcat(deep, "int) -> ()\n");
        ASSERT_RET(varlink_idl_validate(deep, &err), -EBADMSG);
        ASSERT_TRUE(strstr(err, "nested deeper") != NULL);
        free(err);

        ASSERT_OK(varlink_idl_parse(test_description, &iface, &methods, NULL));
        ASSERT_STREQ(iface, IFACE);
        ASSERT_STREQ(methods[0], "Echo");
        ASSERT_STREQ(methods[9], "Declared");
        ASSERT_NULL(methods[10]);
        free(iface);
        methods = strv_free(methods);
}

int main(void) {
        fixture_init();

        TEST_RUN(test_names);
        TEST_RUN(test_idl);
        return 0;
}
