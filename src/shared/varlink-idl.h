/* SPDX-License-Identifier: MIT */
#pragma once

/* Varlink names and interface descriptions (the IDL), checked the same way
 * by the server when an interface is registered, by the tests, and by
 * anyone who wants to know that GetInterfaceDescription returned something
 * that parses. */

#include <stdbool.h>

#include "cleanup.h"
#include "strv.h"

/* "org.example.iface": two or more dot-separated components of ASCII
 * letters, digits and inner dashes, the first starting with a letter, at
 * most 255 characters. Upper-case letters are allowed, as in
 * "org.injectd.Injector" and systemd's "io.systemd.Resolve". */
bool varlink_interface_name_is_valid(const char *name);

/* "Member": an upper-case ASCII letter, then letters and digits. */
bool varlink_member_name_is_valid(const char *name);

/* "org.example.iface.Member", for methods and errors. */
bool varlink_qualified_name_is_valid(const char *name);

/* Checks that text is a well-formed Varlink interface description:
 *
 *     # comments anywhere
 *     interface org.example.iface
 *     type Name (field: type, ...)      or  type Name (value, ...)
 *     method Name (field: type, ...) -> (field: type, ...)
 *     error Name (field: type, ...)
 *
 * with at least one member, each declaration starting on a new line (a
 * declaration may span lines). Types are bool, int, float, string, object, a
 * type name declared in the interface, an inline struct or enum, and the
 * prefixes ? (nullable, not twice), [] (array) and [string] (map). Member
 * names must be unique, as must the fields of a struct and the values of
 * an enum. The text must be valid UTF-8 and contain no NUL.
 *
 * Returns 0, or -EBADMSG with a message "line:column: what is wrong" in
 * *reterr_message (to be freed; written only on that failure, and only if
 * reterr_message is non-NULL), -EINVAL if text is NULL, -ENOMEM. */
int varlink_idl_validate(const char *text, char **reterr_message);

/* As varlink_idl_validate(), and also returns the interface name and the
 * NULL-terminated list of declared method names (each optional, to be
 * freed with strv_free()). */
int varlink_idl_parse(const char *text, char **ret_interface, char ***ret_methods, char **reterr_message);

