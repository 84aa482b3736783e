#ifndef WAYMARK_CMOSQUITTO_SHIM_H
#define WAYMARK_CMOSQUITTO_SHIM_H
// libmosquitto, loaded at run time: waymarkd does not link it, and maps it (and the OpenSSL it
// brings) only when MQTT is configured (dlopen of Debian's libmosquitto1, libmosquitto.so.1). The
// headers give the types and the constants; each function is reached through the table
// `waymark_mosquitto_load` fills, whose members have the header's own types.
#include <dlfcn.h>
#include <mosquitto.h>
#include <mqtt_protocol.h>

typedef struct {
  __typeof__(mosquitto_lib_init) *lib_init;
  __typeof__(mosquitto_new) *new;
  __typeof__(mosquitto_destroy) *destroy;
  __typeof__(mosquitto_int_option) *int_option;
  __typeof__(mosquitto_username_pw_set) *username_pw_set;
  __typeof__(mosquitto_tls_set) *tls_set;
  __typeof__(mosquitto_tls_opts_set) *tls_opts_set;
  __typeof__(mosquitto_tls_insecure_set) *tls_insecure_set;
  __typeof__(mosquitto_connect_callback_set) *connect_callback_set;
  __typeof__(mosquitto_connect_v5_callback_set) *connect_v5_callback_set;
  __typeof__(mosquitto_disconnect_v5_callback_set) *disconnect_v5_callback_set;
  __typeof__(mosquitto_publish_callback_set) *publish_callback_set;
  __typeof__(mosquitto_message_callback_set) *message_callback_set;
  __typeof__(mosquitto_will_set) *will_set;
  __typeof__(mosquitto_connect) *connect;
  __typeof__(mosquitto_connect_bind_v5) *connect_bind_v5;
  __typeof__(mosquitto_property_add_int32) *property_add_int32;
  __typeof__(mosquitto_property_free_all) *property_free_all;
  __typeof__(mosquitto_loop) *loop;
  __typeof__(mosquitto_disconnect) *disconnect;
  __typeof__(mosquitto_publish) *publish;
  __typeof__(mosquitto_subscribe) *subscribe;
  __typeof__(mosquitto_strerror) *strerror;
  __typeof__(mosquitto_reason_string) *reason_string;
  __typeof__(mosquitto_socket) *socket;
} waymark_mosquitto_api;

// Fills `api` from libmosquitto.so.1; returns 0 when the library or one of its functions is
// missing.
static inline int waymark_mosquitto_load(waymark_mosquitto_api *api) {
  void *library = dlopen("libmosquitto.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) return 0;
#define WAYMARK_MOSQUITTO_SYMBOL(name)                                   \
  api->name = (__typeof__(api->name))dlsym(library, "mosquitto_" #name); \
  if (api->name == NULL) return 0;
  WAYMARK_MOSQUITTO_SYMBOL(lib_init)
  WAYMARK_MOSQUITTO_SYMBOL(new)
  WAYMARK_MOSQUITTO_SYMBOL(destroy)
  WAYMARK_MOSQUITTO_SYMBOL(int_option)
  WAYMARK_MOSQUITTO_SYMBOL(username_pw_set)
  WAYMARK_MOSQUITTO_SYMBOL(tls_set)
  WAYMARK_MOSQUITTO_SYMBOL(tls_opts_set)
  WAYMARK_MOSQUITTO_SYMBOL(tls_insecure_set)
  WAYMARK_MOSQUITTO_SYMBOL(connect_callback_set)
  WAYMARK_MOSQUITTO_SYMBOL(connect_v5_callback_set)
  WAYMARK_MOSQUITTO_SYMBOL(disconnect_v5_callback_set)
  WAYMARK_MOSQUITTO_SYMBOL(publish_callback_set)
  WAYMARK_MOSQUITTO_SYMBOL(message_callback_set)
  WAYMARK_MOSQUITTO_SYMBOL(will_set)
  WAYMARK_MOSQUITTO_SYMBOL(connect)
  WAYMARK_MOSQUITTO_SYMBOL(connect_bind_v5)
  WAYMARK_MOSQUITTO_SYMBOL(property_add_int32)
  WAYMARK_MOSQUITTO_SYMBOL(property_free_all)
  WAYMARK_MOSQUITTO_SYMBOL(loop)
  WAYMARK_MOSQUITTO_SYMBOL(disconnect)
  WAYMARK_MOSQUITTO_SYMBOL(publish)
  WAYMARK_MOSQUITTO_SYMBOL(subscribe)
  WAYMARK_MOSQUITTO_SYMBOL(strerror)
  WAYMARK_MOSQUITTO_SYMBOL(reason_string)
  WAYMARK_MOSQUITTO_SYMBOL(socket)
#undef WAYMARK_MOSQUITTO_SYMBOL
  return 1;
}
#endif
