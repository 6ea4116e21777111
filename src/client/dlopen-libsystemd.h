/* SPDX-License-Identifier: MIT */
#pragma once

/* libsystemd, for the D-Bus transport only, loaded at run time as systemd
 * loads its optional libraries: injectctl --varlink (and every run that
 * never opens the bus) then maps neither libsystemd nor what it pulls in
 * (libgcrypt, liblzma, libzstd, liblz4, libcap), which was most of the
 * client's start-up. The transport calls sd-bus only through the sym_
 * pointers below, so the binary has no link-time reference to libsystemd;
 * the headers still give each pointer its exact type. */

#include <systemd/sd-bus.h>

#define DLSYM_PROTOTYPE(f) extern typeof(f) *sym_##f

DLSYM_PROTOTYPE(sd_bus_call);
DLSYM_PROTOTYPE(sd_bus_call_method);
DLSYM_PROTOTYPE(sd_bus_error_free);
DLSYM_PROTOTYPE(sd_bus_error_has_names_sentinel);
DLSYM_PROTOTYPE(sd_bus_error_is_set);
DLSYM_PROTOTYPE(sd_bus_flush_close_unref);
DLSYM_PROTOTYPE(sd_bus_get_property_string);
DLSYM_PROTOTYPE(sd_bus_match_signal);
DLSYM_PROTOTYPE(sd_bus_message_append);
DLSYM_PROTOTYPE(sd_bus_message_appendv);
DLSYM_PROTOTYPE(sd_bus_message_close_container);
DLSYM_PROTOTYPE(sd_bus_message_get_path);
DLSYM_PROTOTYPE(sd_bus_message_get_sender);
DLSYM_PROTOTYPE(sd_bus_message_new_method_call);
DLSYM_PROTOTYPE(sd_bus_message_open_container);
DLSYM_PROTOTYPE(sd_bus_message_read);
DLSYM_PROTOTYPE(sd_bus_message_unref);
DLSYM_PROTOTYPE(sd_bus_open_system);
DLSYM_PROTOTYPE(sd_bus_process);
DLSYM_PROTOTYPE(sd_bus_set_allow_interactive_authorization);
DLSYM_PROTOTYPE(sd_bus_slot_unref);
DLSYM_PROTOTYPE(sd_bus_wait);

/* sd-bus.h's own sd_bus_error_has_names() and _unrefp() helpers call
 * libsystemd directly; these go through the pointers. */
#define sym_sd_bus_error_has_names(e, ...) sym_sd_bus_error_has_names_sentinel(e, __VA_ARGS__, NULL)

static inline void sym_sd_bus_message_unrefp(sd_bus_message **m) {
        if (*m)
                (void) sym_sd_bus_message_unref(*m);
}

static inline void sym_sd_bus_slot_unrefp(sd_bus_slot **s) {
        if (*s)
                (void) sym_sd_bus_slot_unref(*s);
}

/* Loads libsystemd.so.0 and resolves every pointer above, once; later
 * calls return the first result. 0, or -EOPNOTSUPP with the loader's
 * reason in *reterr_message (a static string, valid until the next dl*
 * call) when the library or a symbol is missing. Not thread-safe: the
 * client opens its transport from the main thread. */
int dlopen_libsystemd(const char **reterr_message);
