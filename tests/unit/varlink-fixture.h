/* SPDX-License-Identifier: MIT */
#pragma once

/* The Varlink tests' fixture (varlink-fixture.c). */

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "varlink.h"

#define IFACE "org.example.test"

/* org.example.test's description, which setup() registers. */
extern const char test_description[];
/* Where the sockets are: fixture_init() makes it, and removes it at exit. */
extern char tmpdir[64];

typedef struct Test {
        sd_event *event;
        VarlinkServer *server;
        char path[128];
        unsigned n_connect, n_disconnect, n_records;
        VarlinkMethodFlags last_flags;
        VarlinkConn *held;      /* a call the test answers later */
        VarlinkConn *last_conn; /* the newest connection, borrowed */
        bool release_held_on_disconnect;
} Test;

typedef struct Raw {
        int fd;
        char *buf;
        size_t len, alloc;
} Raw;

int method_echo(VarlinkConn *c, json_object *parameters, VarlinkMethodFlags flags, void *userdata);
void setup(Test *t);
void teardown(Test *t);
void pump(Test *t);
void raw_connect(Test *t, Raw *r);
void raw_close(Raw *r);
void raw_send(Test *t, Raw *r, const void *data, size_t len);
void raw_send_msg(Test *t, Raw *r, const char *s);
int raw_recv(Test *t, Raw *r, json_object **ret);
void raw_expect_eof(Test *t, Raw *r);
void raw_expect_nothing(Test *t, Raw *r);
json_object *params_of(json_object *m);
const char *param_string(json_object *m, const char *key);
int64_t param_int(json_object *m, const char *key);
json_object *raw_expect(Test *t, Raw *r, const char *error, bool continues);
json_object *raw_call(Test *t, const char *msg, const char *error);

/* Makes tmpdir (skips the test if it cannot). */
void fixture_init(void);
