#ifndef WAYMARK_CGPS_SHIM_H
#define WAYMARK_CGPS_SHIM_H

/*
 * Waymark's only view of libgps. The Swift side (module GPSD) calls these inline accessors
 * instead of touching fields whose name, type or place changed between libgps API versions.
 *
 * Versions checked (GPSD_API_MAJOR_VERSION):
 *  - 11: Debian 12's gpsd 3.22 (/usr/include/gps.h), compiled and run against here.
 *  - 13: gps.h of the gpsd development tree (GitHub mirror ntpsec/gpsd, include/gps.h),
 *        read for the differences: STATUS_NO_FIX/STATUS_FIX/STATUS_DGPS_FIX are renamed
 *        STATUS_UNK/STATUS_GPS/STATUS_DGPS (done in 3.23.1 without an API bump), attitude
 *        moved out of the union (12). Nothing else we use changed.
 *  - 9 and 10: from the change log in gps.h itself: 9 made gps_fix_t.time a timespec and added
 *        altMSL/altHAE/geoid_sep; 10 moved gps_data_t.status to gps_fix_t.status.
 *  - gps_read has taken (data, message, message_len) since API 7; before, (data) only.
 *  - 12 and 14 were not available to read; they are handled by the same feature tests
 *        (#ifdef on the STATUS_ names, version tests for the moves above), not by version lists.
 * Below 9 is refused at compile time: fix times were doubles and there was no altMSL.
 */

#include <errno.h>
#include <gps.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if GPSD_API_MAJOR_VERSION < 9
#error "Waymark needs libgps API 9 or later (gpsd 3.20+)"
#endif

/* Status constants, under one set of names whatever the release calls them. */
#ifdef STATUS_UNK
#define WAYMARK_STATUS_NONE STATUS_UNK
#define WAYMARK_STATUS_GPS STATUS_GPS
#define WAYMARK_STATUS_DGPS STATUS_DGPS
#else
#define WAYMARK_STATUS_NONE STATUS_NO_FIX
#define WAYMARK_STATUS_GPS STATUS_FIX
#define WAYMARK_STATUS_DGPS STATUS_DGPS_FIX
#endif

/** Allocates a zeroed gps_data_t; free with waymark_gps_free. */
static inline struct gps_data_t *waymark_gps_alloc(void) {
  struct gps_data_t *data = (struct gps_data_t *)calloc(1, sizeof(struct gps_data_t));
  return data;
}

static inline void waymark_gps_free(struct gps_data_t *data) { free(data); }

/** gps_open; returns 0 or the libgps/errno error code. */
static inline int waymark_gps_open(const char *host, const char *port,
                                   struct gps_data_t *data) {
  errno = 0;
  if (gps_open(host, port, data) != 0) {
    return errno != 0 ? errno : -1;
  }
  return 0;
}

/** Starts watching: JSON reports from every device, or from `device` when not NULL. */
static inline int waymark_gps_watch(struct gps_data_t *data, const char *device) {
  unsigned int flags = WATCH_ENABLE | WATCH_JSON;
  if (device != NULL && device[0] != 0) {
    flags |= WATCH_DEVICE;
    return gps_stream(data, flags, (void *)device);
  }
  return gps_stream(data, flags, NULL);
}

/** Sends a raw command such as "?VERSION;" (gps_send is variadic, Swift cannot call it). */
static inline int waymark_gps_send(struct gps_data_t *data, const char *command) {
  return gps_send(data, "%s", command);
}

/** The socket to gpsd, for poll(2) beside other descriptors. */
static inline int waymark_gps_fd(const struct gps_data_t *data) { return (int)data->gps_fd; }

/** Whether data is waiting, within `microseconds`. */
static inline bool waymark_gps_waiting(struct gps_data_t *data, int microseconds) {
  return gps_waiting(data, microseconds);
}

/**
 * Reads one report. Zeroes the mask and the per-report device fields first, so that every
 * field seen afterwards comes from this report. Returns the byte count, 0 for nothing, -1
 * with *error set: 0 means gpsd closed the stream.
 */
static inline int waymark_gps_read(struct gps_data_t *data, int *error) {
  data->set = 0;
  data->dev.path[0] = 0;
  data->dev.driver[0] = 0;
  data->dev.activated.tv_sec = 0;
  data->dev.activated.tv_nsec = 0;
  errno = 0;
  int result = gps_read(data, NULL, 0); /* API >= 7; older ones are refused above */
  *error = errno;
  return result;
}

static inline int waymark_gps_close(struct gps_data_t *data) { return gps_close(data); }

static inline const char *waymark_gps_errstr(int error) { return gps_errstr(error); }

/* Mask bits, as functions so that Swift sees them as UInt64 constants in every version. */
static inline uint64_t waymark_mask(struct gps_data_t *data) { return (uint64_t)data->set; }
static inline uint64_t waymark_time_set(void) { return TIME_SET; }
static inline uint64_t waymark_latlon_set(void) { return LATLON_SET; }
static inline uint64_t waymark_altitude_set(void) { return ALTITUDE_SET; }
static inline uint64_t waymark_speed_set(void) { return SPEED_SET; }
static inline uint64_t waymark_track_set(void) { return TRACK_SET; }
static inline uint64_t waymark_climb_set(void) { return CLIMB_SET; }
static inline uint64_t waymark_status_set(void) { return STATUS_SET; }
static inline uint64_t waymark_mode_set(void) { return MODE_SET; }
static inline uint64_t waymark_herr_set(void) { return HERR_SET; }
static inline uint64_t waymark_verr_set(void) { return VERR_SET; }
static inline uint64_t waymark_speederr_set(void) { return SPEEDERR_SET; }
static inline uint64_t waymark_trackerr_set(void) { return TRACKERR_SET; }
static inline uint64_t waymark_satellite_set(void) { return SATELLITE_SET; }
static inline uint64_t waymark_device_set(void) { return DEVICE_SET; }
static inline uint64_t waymark_devicelist_set(void) { return DEVICELIST_SET; }
static inline uint64_t waymark_packet_set(void) { return PACKET_SET; }
static inline uint64_t waymark_version_set(void) { return VERSION_SET; }
static inline uint64_t waymark_error_set(void) { return ERROR_SET; }

/* The fix. */
static inline int waymark_fix_mode(struct gps_data_t *data) { return data->fix.mode; }

/** Fix status (0 unknown ... 9 P(Y)); it moved from gps_data_t into gps_fix_t in API 10. */
static inline int waymark_fix_status(struct gps_data_t *data) {
#if GPSD_API_MAJOR_VERSION >= 10
  return data->fix.status;
#else
  return data->status;
#endif
}

/** Fix time: seconds since 1970 (0 when unset) and nanoseconds. */
static inline int64_t waymark_fix_seconds(struct gps_data_t *data) {
  return (int64_t)data->fix.time.tv_sec;
}
static inline int64_t waymark_fix_nanoseconds(struct gps_data_t *data) {
  return (int64_t)data->fix.time.tv_nsec;
}

static inline double waymark_fix_latitude(struct gps_data_t *data) { return data->fix.latitude; }
static inline double waymark_fix_longitude(struct gps_data_t *data) {
  return data->fix.longitude;
}
static inline double waymark_fix_alt_msl(struct gps_data_t *data) { return data->fix.altMSL; }
static inline double waymark_fix_alt_hae(struct gps_data_t *data) { return data->fix.altHAE; }
static inline double waymark_fix_geoid_sep(struct gps_data_t *data) {
  return data->fix.geoid_sep;
}
static inline double waymark_fix_speed(struct gps_data_t *data) { return data->fix.speed; }
static inline double waymark_fix_track(struct gps_data_t *data) { return data->fix.track; }
static inline double waymark_fix_climb(struct gps_data_t *data) { return data->fix.climb; }
static inline double waymark_fix_eph(struct gps_data_t *data) { return data->fix.eph; }
static inline double waymark_fix_epv(struct gps_data_t *data) { return data->fix.epv; }
static inline double waymark_fix_eps(struct gps_data_t *data) { return data->fix.eps; }
static inline double waymark_fix_epd(struct gps_data_t *data) { return data->fix.epd; }

/* Sky view. */
static inline double waymark_dop_hdop(struct gps_data_t *data) { return data->dop.hdop; }
static inline double waymark_dop_vdop(struct gps_data_t *data) { return data->dop.vdop; }
static inline double waymark_dop_pdop(struct gps_data_t *data) { return data->dop.pdop; }
static inline int waymark_satellites_used(struct gps_data_t *data) {
  return data->satellites_used;
}
static inline int waymark_satellites_visible(struct gps_data_t *data) {
  return data->satellites_visible;
}

/* The device of the latest report (a DEVICE message, or the "device" of a TPV/SKY). */
static inline const char *waymark_dev_path(struct gps_data_t *data) { return data->dev.path; }
static inline bool waymark_dev_activated(struct gps_data_t *data) {
  return data->dev.activated.tv_sec != 0 || data->dev.activated.tv_nsec != 0;
}

/* The DEVICES list sent after WATCH. */
static inline int waymark_devices_count(struct gps_data_t *data) {
  int count = data->devices.ndevices;
  if (count < 0) return 0;
  return count > MAXUSERDEVS ? MAXUSERDEVS : count;
}
static inline const char *waymark_devices_path(struct gps_data_t *data, int index) {
  return data->devices.list[index].path;
}
static inline bool waymark_devices_activated(struct gps_data_t *data, int index) {
  return data->devices.list[index].activated.tv_sec != 0 ||
         data->devices.list[index].activated.tv_nsec != 0;
}

/* VERSION and ERROR reports. */
static inline const char *waymark_version_release(struct gps_data_t *data) {
  return data->version.release;
}
static inline const char *waymark_error_message(struct gps_data_t *data) { return data->error; }

#endif
