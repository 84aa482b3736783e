// Linux's epoll(7), which the toolchain's Glibc module does not export (glibc, libc6-dev).
#include <sys/epoll.h>
