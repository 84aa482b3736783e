#ifndef WAYMARK_CMOSQUITTO_SHIM_H
#define WAYMARK_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#endif
