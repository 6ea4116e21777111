/* SPDX-License-Identifier: MIT */
/* One small JSON file per injection, written atomically (rename) at arm
 * time and removed with the injection. Pins survive a restart on their
 * own; these records say whose they are. */

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "injection-store.h"
#include "json-build.h"
#include "json-reader.h"
#include "json-util.h"
#include "parse-util.h"

static void state_path(uint64_t id, char *buf, size_t n) {
        snprintf(buf, n, MANAGER_STATE_DIR "/%016" PRIx64 ".json", id);
}

/* Creates MANAGER_STATE_DIR and its parent (/run/injectd, or the build
 * directory the unit tests point it at: never /run/injectd from a test). */
static int state_dir_make(void) {
        char parent[sizeof(MANAGER_STATE_DIR)] = MANAGER_STATE_DIR;
        char *slash = strrchr(parent, '/');

        if (slash && slash != parent) {
                *slash = '\0';
                if (mkdir(parent, 0755) < 0 && errno != EEXIST)
                        return negative_errno();
        }
        if (mkdir(MANAGER_STATE_DIR, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        return 0;
}

int injection_store_save(const Injection *inj, const Caller *owner) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        char p[256], tmp[272];
        const char *s;
        FILE *f;
        int r;

        r = json_build_object(&o,
                              JSON_PAIR_STRING("id", inj->id_str),
                              JSON_PAIR_I64("owner_uid", inj->owner_uid),
                              JSON_PAIR_BOOL("owner_privileged", inj->owner_privileged),
                              JSON_PAIR_I64("owner_pid", inj->owner_pid),
                              JSON_PAIR_U64("owner_start", inj->owner_start),
                              JSON_PAIR_STRING("transport", transport_to_string(inj->transport)),
                              JSON_PAIR_BOOL("detach", inj->detach),
                              JSON_PAIR_U64("kernel_log", inj->kernel_log),
                              JSON_PAIR_STRING("rule", inj->rule ?: ""),
                              JSON_PAIR_STRING("scope", inj->scope_desc ?: ""),
                              JSON_PAIR_STRING("polkit", inj->polkit_how ?: ""),
                              JSON_PAIR_U64("created_usec", inj->created_usec),
                              JSON_PAIR_U64("expires_usec", inj->expires_usec),
                              JSON_PAIR_IF(owner && owner->bus_name,
                                           JSON_PAIR_STRING("owner_bus_name", owner ? owner->bus_name : NULL)),
                              JSON_BUILD_END);
        if (r < 0)
                return r;
        s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        if (!s)
                return -ENOMEM;

        r = state_dir_make();
        if (r < 0)
                return r;
        state_path(inj->id, p, sizeof(p));
        snprintf(tmp, sizeof(tmp), "%s.tmp", p);
        f = fopen(tmp, "we");
        if (!f)
                return negative_errno();
        fputs(s, f);
        if (fclose(f) != 0 || rename(tmp, p) < 0) {
                r = negative_errno();
                (void) unlink(tmp);
                return r;
        }
        return 0;
}

int injection_store_load(Injection *inj, Caller *ret_owner) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_free_ char *buf = NULL;
        Caller owner = {};
        char p[256];
        const char *s;
        uint64_t u;
        FILE *f;
        size_t n;
        bool b;

        state_path(inj->id, p, sizeof(p));
        f = fopen(p, "re");
        if (!f)
                return negative_errno();
        buf = malloc(65536);
        n = buf ? fread(buf, 1, 65535, f) : 0;
        fclose(f);
        if (!buf)
                return -ENOMEM;
        if (json_parse_strict(buf, n, JSON_PARSE_OBJECT, &o) < 0)
                return -EBADMSG;
        if (json_get_u64(o, "owner_uid", 0, UINT32_MAX - 1, &u) < 0)
                return -EBADMSG;
        inj->owner_uid = (uint32_t) u;
        /* A record from before the flag: uid 0 was taken as privileged then. */
        inj->owner_privileged = json_get_bool(o, "owner_privileged", &b) >= 0 ? b : inj->owner_uid == 0;
        if (json_get_u64(o, "owner_pid", 0, INT32_MAX, &u) >= 0)
                inj->owner_pid = (pid_t) u;
        (void) json_get_u64(o, "owner_start", 0, UINT64_MAX, &inj->owner_start);
        if (json_get_bool(o, "detach", &b) >= 0)
                inj->detach = b;
        if (json_get_u64(o, "kernel_log", 0, 2, &u) >= 0)
                inj->kernel_log = (unsigned) u;
        if (json_get_string(o, "transport", &s) >= 0)
                inj->transport = strcmp(s, "varlink") == 0 ? TRANSPORT_VARLINK : TRANSPORT_BUS;
        if (json_get_string(o, "owner_bus_name", &s) >= 0)
                owner.bus_name = strdup(s);
        if (json_get_string(o, "rule", &s) >= 0)
                inj->rule = strdup(s);
        if (json_get_string(o, "scope", &s) >= 0)
                inj->scope_desc = strdup(s);
        if (json_get_string(o, "polkit", &s) >= 0)
                inj->polkit_how = strdup(s);
        (void) json_get_u64(o, "created_usec", 0, UINT64_MAX, &inj->created_usec);
        (void) json_get_u64(o, "expires_usec", 0, UINT64_MAX, &inj->expires_usec);

        owner.transport = inj->transport;
        owner.uid = inj->owner_uid;
        owner.gid = (gid_t) -1;
        owner.pid = inj->owner_pid;
        owner.start_ticks = inj->owner_start;
        *ret_owner = owner;
        return 0;
}

void injection_store_remove(uint64_t id) {
        char p[256];

        state_path(id, p, sizeof(p));
        (void) unlink(p);
}

void injection_store_prune(injection_store_alive_t alive, void *userdata) {
        _cleanup_(closedirp) DIR *d = opendir(MANAGER_STATE_DIR);
        struct dirent *de;

        while (d && (de = readdir(d))) {
                uint64_t id;
                char name[17] = {};

                if (de->d_name[0] == '.' || strlen(de->d_name) != 21)
                        continue;
                memcpy(name, de->d_name, 16);
                if (parse_injection_id(name, &id) < 0 || alive(id, userdata))
                        continue;
                (void) unlinkat(dirfd(d), de->d_name, 0);
        }
}
