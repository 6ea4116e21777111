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
#include "json-util.h"
#include "parse-util.h"

static void state_path(uint64_t id, char *buf, size_t n) {
        snprintf(buf, n, MANAGER_STATE_DIR "/%016" PRIx64 ".json", id);
}

int injection_store_save(const Injection *inj, const Caller *owner) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        char p[256], tmp[272];
        const char *s;
        FILE *f;

        if (!o)
                return -ENOMEM;
        json_object_object_add(o, "id", json_object_new_string(inj->id_str));
        json_object_object_add(o, "owner_uid", json_object_new_int64(inj->owner_uid));
        json_object_object_add(o, "owner_pid", json_object_new_int64(inj->owner_pid));
        json_object_object_add(o, "owner_start", json_object_new_uint64(inj->owner_start));
        json_object_object_add(o, "transport", json_object_new_string(transport_to_string(inj->transport)));
        json_object_object_add(o, "detach", json_object_new_boolean(inj->detach));
        json_object_object_add(o, "rule", json_object_new_string(inj->rule ?: ""));
        json_object_object_add(o, "scope", json_object_new_string(inj->scope_desc ?: ""));
        json_object_object_add(o, "polkit", json_object_new_string(inj->polkit_how ?: ""));
        json_object_object_add(o, "created_usec", json_object_new_uint64(inj->created_usec));
        json_object_object_add(o, "expires_usec", json_object_new_uint64(inj->expires_usec));
        if (owner && owner->bus_name)
                json_object_object_add(o, "owner_bus_name", json_object_new_string(owner->bus_name));

        (void) mkdir("/run/injectd", 0755);
        if (mkdir(MANAGER_STATE_DIR, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        state_path(inj->id, p, sizeof(p));
        snprintf(tmp, sizeof(tmp), "%s.tmp", p);
        f = fopen(tmp, "we");
        if (!f)
                return negative_errno();
        s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        fputs(s, f);
        if (fclose(f) != 0 || rename(tmp, p) < 0) {
                int r = negative_errno();
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
        if (json_get_u64(o, "owner_pid", 0, INT32_MAX, &u) >= 0)
                inj->owner_pid = (pid_t) u;
        (void) json_get_u64(o, "owner_start", 0, UINT64_MAX, &inj->owner_start);
        if (json_get_bool(o, "detach", &b) >= 0)
                inj->detach = b;
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

void injection_store_prune(Manager *m) {
        _cleanup_(closedirp) DIR *d = opendir(MANAGER_STATE_DIR);
        struct dirent *de;

        while (d && (de = readdir(d))) {
                uint64_t id;
                char name[17] = {};

                if (de->d_name[0] == '.' || strlen(de->d_name) != 21)
                        continue;
                memcpy(name, de->d_name, 16);
                if (parse_injection_id(name, &id) < 0 || manager_find(m, id))
                        continue;
                (void) unlinkat(dirfd(d), de->d_name, 0);
        }
}
