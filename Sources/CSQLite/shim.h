#ifndef WAYMARK_CSQLITE_SHIM_H
#define WAYMARK_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
