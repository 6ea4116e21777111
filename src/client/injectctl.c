/* SPDX-License-Identifier: MIT */
/* injectctl: the command-line client of injectd. Each command is a file
 * of its own (cmd-*.c); what they share is cli.c. */

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd-caps.h"
#include "cmd-explore.h"
#include "cmd-failcmd.h"
#include "cmd-inject.h"
#include "cmd-list.h"
#include "cmd-run.h"
#include "cmd-sweep.h"
#include "log.h"
#include "transport.h"


static const struct {
        const char *name;
        int (*fn)(int argc, char **argv);
} commands[] = {
        { "caps",          cmd_caps },
        { "functions",     cmd_functions },
        { "inject",        cmd_inject },
        { "list",          cmd_list },
        { "show",          cmd_show },
        { "cancel",        cmd_cancel },
        { "watch",         cmd_watch },
        { "reload-policy", cmd_reload_policy },
        { "run",           cmd_run },
        { "failcmd",       cmd_failcmd },
        { "sweep",         cmd_sweep },
        { "explore",       cmd_explore },
};

int main(int argc, char **argv) {
        static const struct option options[] = { GLOBAL_OPTIONS };
        const char *term = getenv("TERM");
        int c, r;

        log_set_target("stderr");
        /* A build without D-Bus (injectctl-static) talks only Varlink. */
        if (!transport_bus_supported())
                arg_transport = TRANSPORT_VARLINK;
        arg_color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR") && !(term && strcmp(term, "dumb") == 0);

        opterr = 0;
        /* "+": the global options stop at the command; each command parses
         * the rest, global options included. */
        while ((c = getopt_long(argc, argv, "+:h", options, NULL)) >= 0) {
                r = handle_global_option(c, optarg, argv);
                if (r >= 0)
                        return r;
        }
        if (optind >= argc)
                return usage_error("a command is needed");

        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (strcmp(argv[optind], commands[i].name) == 0) {
                        char **cargv = argv + optind;
                        int cargc = argc - optind;

                        optind = 0; /* re-initialize getopt for the command */
                        return commands[i].fn(cargc, cargv);
                }
        return usage_error("unknown command '%s'", argv[optind]);
}
