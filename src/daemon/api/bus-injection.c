/* SPDX-License-Identifier: MIT */
/* One D-Bus object per injection, /org/injectd/Injector1/injection/_<id>,
 * with its properties, Cancel(), and a rate-limited Fault signal per
 * injected fault. Only its owner and root see it, and its signals go to its
 * owner only. The changing properties send no PropertiesChanged (a
 * broadcast would show them to everyone): they say so in introspection.
 * What D-Bus keeps per injection (its owner, the rate limit) is
 * bus-owner.c's. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-call.h"
#include "bus-injection.h"
#include "bus-owner.h"
#include "bus-util.h"
#include "errno-name.h"
#include "log.h"
#include "manager.h"

#define INJECTION_PREFIX "/org/injectd/Injector1/injection"
#define INJECTION_IFACE "org.injectd.Injector1.Injection"

const char *bus_injection_path(const Injection *inj, char buf[static BUS_INJECTION_PATH_MAX]) {
        snprintf(buf, BUS_INJECTION_PATH_MAX, INJECTION_PREFIX "/_%s", inj->id_str);
        return buf;
}

/* The object of an injection the sender may not see does not exist for it:
 * the same rule as the lists (manager_may_see). */
static bool current_caller_may_see(BusApi *b, sd_bus *bus, Injection *inj) {
        const Caller *c = bus_current_caller(b, bus);

        return c && manager_may_see(inj->manager, c, inj);
}

static int find_injection(sd_bus *bus, const char *path, const char *interface, void *userdata, void **found,
                          sd_bus_error *error) {
        BusApi *b = userdata;
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
        inj = manager_find(b->manager, id);
        if (!inj || !current_caller_may_see(userdata, bus, inj))
                return 0;
        *found = inj;
        return 1;
}

static int enumerate_injections(sd_bus *bus, const char *path, void *userdata, char ***nodes, sd_bus_error *error) {
        BusApi *b = userdata;
        Manager *m = b->manager;
        char **v, node[BUS_INJECTION_PATH_MAX];
        size_t n = 0;

        v = calloc(m->n_injections + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_injections; i++)
                if (current_caller_may_see(b, bus, m->injections[i]))
                        v[n++] = strdup(bus_injection_path(m->injections[i], node));
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
        if (strcmp(property, "CallsGuarded") == 0)
                return sd_bus_message_append(reply, "t", (uint64_t) s->guarded);
        if (strcmp(property, "EventsSuppressed") == 0)
                return sd_bus_message_append(reply, "t", inj->events_suppressed);
        return -EINVAL;
}

static int method_cancel(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Injection *inj = userdata;
        /* The object's userdata is the injection (find_injection()); the
         * front end is the vtable's, on the slot being dispatched. */
        BusApi *b = sd_bus_slot_get_userdata(sd_bus_get_current_slot(sd_bus_message_get_bus(m)));

        return bus_call_manage(b, m, inj->manager, inj->id_str, error);
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
        SD_BUS_PROPERTY("CallsGuarded", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("EventsSuppressed", "t", property_get, 0, 0),
        SD_BUS_METHOD_WITH_ARGS("Cancel", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_cancel,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_ARGS("Fault", SD_BUS_ARGS("t", time_ns, "u", pid, "u", tgid, "s", comm, "x", value), 0),
        SD_BUS_SIGNAL_WITH_ARGS("FaultsSuppressed", SD_BUS_ARGS("u", count), 0),
        SD_BUS_VTABLE_END
};

int bus_injection_register(BusApi *b) {
        int r;

        r = sd_bus_add_fallback_vtable(b->bus, NULL, INJECTION_PREFIX, INJECTION_IFACE, injection_vtable,
                                       find_injection, b);
        if (r < 0)
                return r;
        return sd_bus_add_node_enumerator(b->bus, NULL, INJECTION_PREFIX, enumerate_injections, b);
}

/* At most BUS_FAULT_SIGNALS_PER_SEC Fault signals per second per
 * injection; the rest are counted and reported in one FaultsSuppressed. */
void bus_injection_fault(BusApi *b, Injection *inj, const struct inject_event *ev, const char *comm) {
        BusOwner *rec = bus_owner_get(b, inj->id);
        uint64_t second = ev->time_ns / 1000000000ULL;
        char path[BUS_INJECTION_PATH_MAX];

        if (!rec)
                return;
        bus_injection_path(inj, path);
        if (second != rec->rl_window) {
                if (rec->rl_dropped)
                        (void) bus_owner_emit(b, inj, path, INJECTION_IFACE, "FaultsSuppressed", "u",
                                                 rec->rl_dropped);
                rec->rl_window = second;
                rec->rl_count = 0;
                rec->rl_dropped = 0;
        }
        if (++rec->rl_count > BUS_FAULT_SIGNALS_PER_SEC) {
                rec->rl_dropped++;
                return;
        }
        (void) bus_owner_emit(b, inj, path, INJECTION_IFACE, "Fault", "tuusx", (uint64_t) ev->time_ns,
                                 (uint32_t) ev->pid, (uint32_t) ev->tgid, comm, (int64_t) ev->retval);
}

void bus_injection_removed(BusApi *b, Injection *inj) {
        BusOwner *rec = bus_owner_find(b, inj->id);
        char path[BUS_INJECTION_PATH_MAX];

        /* What the rate limit held back is not lost with the injection. */
        if (rec && rec->rl_dropped)
                (void) bus_owner_emit(b, inj, bus_injection_path(inj, path), INJECTION_IFACE,
                                         "FaultsSuppressed", "u", rec->rl_dropped);
}

