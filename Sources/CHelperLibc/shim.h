// glibc's declarations for waymark-identify, which is built with Embedded Swift: the
// toolchain's Glibc module is not available there. The headers its sources use, and what
// Glibc's Swift overlay adds and Embedded Swift cannot import: errno (a macro) and a
// non-variadic open(2). Only waymark-identify imports it (WaymarkIdentify's sources, as the
// helper compiles them).
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static inline int helper_errno(void) { return errno; }
static inline void helper_set_errno(int value) { errno = value; }
static inline int helper_open(const char *path, int flags) { return open(path, flags); }
