/* SPDX-License-Identifier: MIT */
/* libsystemd at run time, for the D-Bus transport (dlopen-libsystemd.h). */

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>

#include "dlopen-libsystemd.h"

#define DLSYM_DEFINE(f) typeof(f) *sym_##f

DLSYM_DEFINE(sd_bus_call);
DLSYM_DEFINE(sd_bus_call_method);
DLSYM_DEFINE(sd_bus_error_free);
DLSYM_DEFINE(sd_bus_error_has_names_sentinel);
DLSYM_DEFINE(sd_bus_error_is_set);
DLSYM_DEFINE(sd_bus_flush_close_unref);
DLSYM_DEFINE(sd_bus_get_property_string);
DLSYM_DEFINE(sd_bus_match_signal);
DLSYM_DEFINE(sd_bus_message_append);
DLSYM_DEFINE(sd_bus_message_appendv);
DLSYM_DEFINE(sd_bus_message_close_container);
DLSYM_DEFINE(sd_bus_message_get_path);
DLSYM_DEFINE(sd_bus_message_get_sender);
DLSYM_DEFINE(sd_bus_message_new_method_call);
DLSYM_DEFINE(sd_bus_message_open_container);
DLSYM_DEFINE(sd_bus_message_read);
DLSYM_DEFINE(sd_bus_message_unref);
DLSYM_DEFINE(sd_bus_open_system);
DLSYM_DEFINE(sd_bus_process);
DLSYM_DEFINE(sd_bus_set_allow_interactive_authorization);
DLSYM_DEFINE(sd_bus_slot_unref);
DLSYM_DEFINE(sd_bus_wait);

#define DLSYM_ARG(f) { #f, (void **) &sym_##f }

static const struct {
        const char *name;
        void **ptr;
} symbols[] = {
        DLSYM_ARG(sd_bus_call),
        DLSYM_ARG(sd_bus_call_method),
        DLSYM_ARG(sd_bus_error_free),
        DLSYM_ARG(sd_bus_error_has_names_sentinel),
        DLSYM_ARG(sd_bus_error_is_set),
        DLSYM_ARG(sd_bus_flush_close_unref),
        DLSYM_ARG(sd_bus_get_property_string),
        DLSYM_ARG(sd_bus_match_signal),
        DLSYM_ARG(sd_bus_message_append),
        DLSYM_ARG(sd_bus_message_appendv),
        DLSYM_ARG(sd_bus_message_close_container),
        DLSYM_ARG(sd_bus_message_get_path),
        DLSYM_ARG(sd_bus_message_get_sender),
        DLSYM_ARG(sd_bus_message_new_method_call),
        DLSYM_ARG(sd_bus_message_open_container),
        DLSYM_ARG(sd_bus_message_read),
        DLSYM_ARG(sd_bus_message_unref),
        DLSYM_ARG(sd_bus_open_system),
        DLSYM_ARG(sd_bus_process),
        DLSYM_ARG(sd_bus_set_allow_interactive_authorization),
        DLSYM_ARG(sd_bus_slot_unref),
        DLSYM_ARG(sd_bus_wait),
};

int dlopen_libsystemd(const char **reterr_message) {
        static int cached = 1;          /* 1: not tried yet */
        static const char *cached_message;
        void *dl;

        if (cached <= 0) {
                if (cached < 0 && reterr_message)
                        *reterr_message = cached_message;
                return cached;
        }

        /* Never unloaded: the pointers stay valid for the process's life. */
        dl = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_NODELETE);
        if (!dl) {
                cached_message = dlerror();
                cached = -EOPNOTSUPP;
                if (reterr_message)
                        *reterr_message = cached_message;
                return cached;
        }
        for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
                *symbols[i].ptr = dlsym(dl, symbols[i].name);
                if (!*symbols[i].ptr) {
                        /* An older libsystemd than the headers: none of it
                         * is used, rather than some of it. */
                        cached_message = dlerror();
                        for (size_t j = 0; j < sizeof(symbols) / sizeof(symbols[0]); j++)
                                *symbols[j].ptr = NULL;
                        cached = -EOPNOTSUPP;
                        if (reterr_message)
                                *reterr_message = cached_message;
                        return cached;
                }
        }
        cached = 0;
        return 0;
}
