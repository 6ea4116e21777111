/* SPDX-License-Identifier: MIT */

/* org.varlink.service, which every Varlink service answers: GetInfo and
 * GetInterfaceDescription, bound on each server like any other method
 * (the errors for calls to methods that are not bound are the
 * connection's, varlink-conn.c). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json-build.h"
#include "json-util.h"
#include "varlink-internal.h"

static const char service_description[] =
        "# The Varlink service interface, provided by every Varlink service.\n"
        "interface org.varlink.service\n"
        "\n"
        "# Describes the service and lists the interfaces it implements.\n"
        "method GetInfo() -> (\n"
        "  vendor: string,\n"
        "  product: string,\n"
        "  version: string,\n"
        "  url: string,\n"
        "  interfaces: []string\n"
        ")\n"
        "\n"
        "# Returns the description of one of the interfaces.\n"
        "method GetInterfaceDescription(interface: string) -> (description: string)\n"
        "\n"
        "# The interface is not implemented by this service.\n"
        "error InterfaceNotFound (interface: string)\n"
        "\n"
        "# The method is not known.\n"
        "error MethodNotFound (method: string)\n"
        "\n"
        "# The interface declares the method, but the service does not implement it.\n"
        "error MethodNotImplemented (method: string)\n"
        "\n"
        "# A parameter is missing, has the wrong type or an invalid value.\n"
        "error InvalidParameter (parameter: string)\n"
        "\n"
        "# The caller may not call this method.\n"
        "error PermissionDenied ()\n"
        "\n"
        "# The method must be called with \"more\".\n"
        "error ExpectedMore ()\n";

static int service_get_info(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata) {
        static const char *const allowed[] = { NULL };
        _cleanup_json_ json_object *reply = NULL;
        VarlinkServer *s = c->server;
        json_object *interfaces;
        const char *unknown;
        int r;

        if (json_check_keys(parameters, allowed, &unknown) < 0)
                return varlink_error_invalid_parameter(c, unknown);

        reply = json_object_new_object();
        if (!reply)
                return -ENOMEM;
        if ((r = json_add_string(reply, "vendor", s->vendor)) < 0 ||
            (r = json_add_string(reply, "product", s->product)) < 0 ||
            (r = json_add_string(reply, "version", s->version)) < 0 ||
            (r = json_add_string(reply, "url", s->url)) < 0)
                return r;

        interfaces = json_object_new_array();
        r = json_add(reply, "interfaces", interfaces);
        if (r < 0)
                return r;
        r = json_append_string(interfaces, SERVICE_INTERFACE);
        if (r < 0)
                return r;
        for (size_t i = 0; i < s->n_interfaces; i++) {
                r = json_append_string(interfaces, s->interfaces[i].name);
                if (r < 0)
                        return r;
        }

        return varlink_reply(c, reply);
}

static int service_get_interface_description(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags,
                                             void *userdata) {
        static const char *const allowed[] = { "interface", NULL };
        _cleanup_json_ json_object *reply = NULL;
        const char *unknown, *name, *description;
        Interface *i;
        int r;

        if (json_check_keys(parameters, allowed, &unknown) < 0)
                return varlink_error_invalid_parameter(c, unknown);
        if (json_get_string(parameters, "interface", &name) < 0)
                return varlink_error_invalid_parameter(c, "interface");

        if (strcmp(name, SERVICE_INTERFACE) == 0)
                description = service_description;
        else if ((i = methods_find_interface(c->server, name, strlen(name))))
                description = i->description;
        else
                return conn_error_string(c, VARLINK_ERROR_INTERFACE_NOT_FOUND, "interface", name);

        reply = json_object_new_object();
        if (!reply)
                return -ENOMEM;
        r = json_add_string(reply, "description", description);
        if (r < 0)
                return r;

        return varlink_reply(c, reply);
}

int service_bind(VarlinkServer *s) {
        int r;

        r = methods_add(s, SERVICE_INTERFACE ".GetInfo", 0, service_get_info, NULL);
        if (r < 0)
                return r;
        return methods_add(s, SERVICE_INTERFACE ".GetInterfaceDescription", 0, service_get_interface_description,
                           NULL);
}
