/* SPDX-License-Identifier: MIT */
/* One D-Bus object per injection, /org/injectd/Injector1/injection/_<id>,
 * with its properties, Cancel(), and a rate-limited Fault signal per
 * injected fault. Only its owner and root see it, and its signals go to its
 * owner only. The changing properties send no PropertiesChanged (a
 * broadcast would show them to everyone): they say so in introspection. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-api.h"
#include "errno-name.h"
#include "manager.h"

#define INJECTION_PREFIX "/org/injectd/Injector1/injection"
#define INJECTION_IFACE "org.injectd.Injector1.Injection"

static bool current_caller_may_see(sd_bus *bus, Injection *inj) {
        sd_bus_message *m = sd_bus_get_current_message(bus);
        sd_bus_creds *creds = NULL;
        uid_t uid;
        bool ok;

        if (!m)
                return false;
        if (sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID, &creds) < 0)
                return false;
        ok = sd_bus_creds_get_euid(creds, &uid) >= 0 &&
             !(sd_bus_creds_get_augmented_mask(creds) & SD_BUS_CREDS_EUID) && (uid == 0 || uid == inj->owner_uid);
        sd_bus_creds_unref(creds);
        return ok;
}

static int find_injection(sd_bus *bus, const char *path, const char *interface, void *userdata, void **found,
                          sd_bus_error *error) {
        Manager *m = userdata;
        Injection *inj;
        uint64_t id;
        char *end;

        if (strncmp(path, INJECTION_PREFIX "/_", strlen(INJECTION_PREFIX) + 2) != 0)
                return 0;
        path += strlen(INJECTION_PREFIX) + 2;
        if (strlen(path) != 16)
                return 0;
        id = strtoull(path, &end, 16);
        if (*end || !id)
                return 0;
        inj = manager_find(m, id);
        if (!inj || !current_caller_may_see(bus, inj))
                return 0;
        *found = inj;
        return 1;
}

static int enumerate_injections(sd_bus *bus, const char *path, void *userdata, char ***nodes, sd_bus_error *error) {
        Manager *m = userdata;
        char **v;
        size_t n = 0;

        v = calloc(m->n_injections + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_injections; i++)
                if (current_caller_may_see(bus, m->injections[i]))
                        v[n++] = strdup(m->injections[i]->object_path);
        *nodes = v;
        return 0;
}

static Injection *refreshed(void *userdata) {
        Injection *inj = userdata;

        (void) manager_refresh(inj->manager, inj);
        return inj;
}

static int property_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Injection *inj = refreshed(userdata);
        const struct inject_slot *s = &inj->info.slot;

        if (strcmp(property, "Id") == 0)
                return sd_bus_message_append(reply, "s", inj->id_str);
        if (strcmp(property, "Function") == 0)
                return sd_bus_message_append(reply, "s", inj->info.function);
        if (strcmp(property, "Backend") == 0)
                return sd_bus_message_append(reply, "s", backend_to_string(inj->info.backend));
        if (strcmp(property, "Value") == 0)
                return sd_bus_message_append(reply, "x", (int64_t) s->retval);
        if (strcmp(property, "Error") == 0)
                return sd_bus_message_append(reply, "s", s->retval < 0 ? errno_to_name((int) -s->retval) ?: "" : "");
        if (strcmp(property, "Scope") == 0)
                return sd_bus_message_append(reply, "s", inj->scope_desc ?: "");
        if (strcmp(property, "OwnerUID") == 0)
                return sd_bus_message_append(reply, "u", inj->owner_uid);
        if (strcmp(property, "Created") == 0)
                return sd_bus_message_append(reply, "t", inj->created_usec);
        if (strcmp(property, "Expires") == 0)
                return sd_bus_message_append(reply, "t", inj->expires_usec);
        if (strcmp(property, "State") == 0)
                return sd_bus_message_append(reply, "s", injection_state_to_string(inj->info.state));
        if (strcmp(property, "Detached") == 0)
                return sd_bus_message_append(reply, "b", inj->detach);
        if (strcmp(property, "CallsSeen") == 0)
                return sd_bus_message_append(reply, "t", (uint64_t) s->seen);
        if (strcmp(property, "CallsMatched") == 0)
                return sd_bus_message_append(reply, "t", (uint64_t) s->matched);
        if (strcmp(property, "FaultsInjected") == 0)
                return sd_bus_message_append(reply, "t", (uint64_t) s->injected);
        return -EINVAL;
}

static int method_cancel(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Injection *inj = userdata;
        Caller c;
        int r;

        r = caller_from_bus(m, &c);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot identify the caller: %m");
        r = manager_cancel(inj->manager, &c, inj->id_str, sd_bus_message_get_allow_interactive_authorization(m) > 0,
                           bus_reply_done, sd_bus_message_ref(m));
        caller_done(&c);
        if (r < 0)
                sd_bus_message_unref(m);
        return r < 0 ? r : 1;
}

static const sd_bus_vtable injection_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Id", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Function", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Backend", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Value", "x", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Error", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Scope", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("OwnerUID", "u", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Created", "t", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Expires", "t", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Detached", "b", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("State", "s", property_get, 0, 0),
        SD_BUS_PROPERTY("CallsSeen", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("CallsMatched", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("FaultsInjected", "t", property_get, 0, 0),
        SD_BUS_METHOD_WITH_ARGS("Cancel", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_cancel,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_ARGS("Fault", SD_BUS_ARGS("t", time_ns, "u", pid, "u", tgid, "s", comm, "x", value), 0),
        SD_BUS_SIGNAL_WITH_ARGS("FaultsSuppressed", SD_BUS_ARGS("u", count), 0),
        SD_BUS_VTABLE_END
};

int bus_injection_register(Manager *m) {
        int r;

        r = sd_bus_add_fallback_vtable(m->bus, NULL, INJECTION_PREFIX, INJECTION_IFACE, injection_vtable,
                                       find_injection, m);
        if (r < 0)
                return r;
        return sd_bus_add_node_enumerator(m->bus, NULL, INJECTION_PREFIX, enumerate_injections, m);
}

/* At most MANAGER_FAULT_SIGNALS_PER_SEC Fault signals per second per
 * injection; the rest are counted and reported in one FaultsSuppressed. */
void bus_injection_fault(Manager *m, Injection *inj, const struct inject_event *ev, const char *comm) {
        uint64_t second = ev->time_ns / 1000000000ULL;

        if (!m->bus)
                return;
        if (second != inj->rl_window) {
                if (inj->rl_dropped)
                        (void) bus_emit_to_owner(m, inj, inj->object_path, INJECTION_IFACE, "FaultsSuppressed",
                                                 "u", inj->rl_dropped);
                inj->rl_window = second;
                inj->rl_count = 0;
                inj->rl_dropped = 0;
        }
        if (++inj->rl_count > MANAGER_FAULT_SIGNALS_PER_SEC) {
                inj->rl_dropped++;
                return;
        }
        (void) bus_emit_to_owner(m, inj, inj->object_path, INJECTION_IFACE, "Fault", "tuusx", (uint64_t) ev->time_ns,
                                 (uint32_t) ev->pid, (uint32_t) ev->tgid, comm, (int64_t) ev->retval);
}
