/* SPDX-License-Identifier: MIT */
/* The D-Bus transport's place in a build without libsystemd
 * (injectctl-static): there is none, and Varlink is the default. */

#include <errno.h>

#include "transport.h"

bool transport_bus_supported(void) {
        return false;
}

int transport_open_bus(bool interactive, Transport **ret, char **reterr_message) {
        return -EPROTONOSUPPORT;
}
