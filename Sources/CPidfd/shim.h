// pidfd_open(2) from glibc 2.36 (not in the toolchain's Glibc module); only WaymarkIdentify
// imports it.
#include <sys/pidfd.h>
