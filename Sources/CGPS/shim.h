#ifndef WAYMARK_CGPS_SHIM_H
#define WAYMARK_CGPS_SHIM_H
#include <gps.h>
#endif
