import CGPS
import FoundationEssentials
import WaymarkCore

/// One report read from gpsd, in Swift terms.
enum GPSDReport: Sendable, Equatable {
  /// A TPV: the fix as gpsd holds it after this report.
  case fix(Fix)
  /// A SKY: dilutions of precision and satellite counts.
  case sky(SkyView)
  /// A DEVICE: a device was activated (`true`) or closed (`false`).
  case device(path: String, active: Bool)
  /// The DEVICES list sent after WATCH: active device paths.
  case devices([String])
  /// A VERSION banner (also the answer to the idle probe).
  case version(String)
  /// An ERROR report from gpsd.
  case error(String)
  /// Anything else (WATCH echo, GST, ATT...).
  case other
}

/// Dilutions of precision and satellite counts from a SKY report.
struct SkyView: Sendable, Equatable {
  var hdop: Double?
  var vdop: Double?
  var pdop: Double?
  var satellitesUsed: Int?
  var satellitesVisible: Int?
}

/// The result of waiting for data.
enum GPSDReadResult: Sendable, Equatable {
  case report(GPSDReport)
  case nothing
  case failed(GPSDError)
}

/// A connection to gpsd: owns one `gps_data_t`. Not thread-safe: used by one reader thread.
///
/// The only caller of libgps.
final class GPSDSession {
  private let data: UnsafeMutablePointer<gps_data_t>
  private var isOpen = false

  /// Connects to gpsd and starts watching.
  ///
  /// Wraps `gps_open(3)` and `gps_stream(3)`.
  init(endpoint: GPSDEndpoint) throws(GPSDError) {
    guard let data = waymark_gps_alloc() else { throw GPSDError(rawValue: ENOMEM) }
    self.data = data
    let status = waymark_gps_open(endpoint.host, String(endpoint.port), data)
    // A throwing class initializer still runs deinit once every property is set: deinit frees.
    guard status == 0 else {
      throw status == -1 ? .connectionFailed : GPSDError(rawValue: Int32(status))
    }
    isOpen = true
    let watched: Int32
    if let device = endpoint.device {
      watched = waymark_gps_watch(data, device)
    } else {
      watched = waymark_gps_watch(data, nil)
    }
    guard watched == 0 else {
      throw .watchFailed
    }
  }

  deinit {
    close()
    waymark_gps_free(data)
  }

  /// Closes the connection. Wraps `gps_close(3)`.
  func close() {
    guard isOpen else { return }
    isOpen = false
    _ = waymark_gps_close(data)
  }

  /// Sends a raw command such as `?VERSION;`. Wraps `gps_send(3)`.
  func send(_ command: String) -> Bool {
    waymark_gps_send(data, command) == 0
  }

  /// The socket to gpsd: readable when a report may be read (libgps may also hold whole
  /// reports already read into its buffer: ``read(waiting:)`` with zero returns those first).
  var descriptor: Int32 { waymark_gps_fd(data) }

  /// Waits up to `timeout` for data and reads one report.
  ///
  /// Wraps `gps_waiting(3)` and `gps_read(3)`: the mask is zeroed before each read, and -1 with
  /// `errno` 0 means gpsd closed the stream.
  func read(waiting timeout: Duration) -> GPSDReadResult {
    let microseconds = Int32(clamping: Int64(saturating: timeout.seconds * 1_000_000))
    guard waymark_gps_waiting(data, microseconds) else {
      // gps_waiting is also false on a socket error; the read below would report it, but a
      // plain timeout must not read (it would block).
      return .nothing
    }
    var error: Int32 = 0
    let count = waymark_gps_read(data, &error)
    if count == -1 {
      return .failed(error == 0 ? .streamClosed : GPSDError(rawValue: error))
    }
    if count == 0 { return .nothing }
    return .report(report())
  }

  private func has(_ bit: UInt64, in mask: UInt64) -> Bool { mask & bit != 0 }

  private func finite(_ value: Double, if present: Bool) -> Double? {
    present && value.isFinite ? value : nil
  }

  private func report() -> GPSDReport {
    let mask = waymark_mask(data)
    if has(waymark_mode_set(), in: mask) { return .fix(fix(mask: mask)) }
    if has(waymark_device_set(), in: mask) {
      return .device(
        path: String(cString: waymark_dev_path(data)), active: waymark_dev_activated(data))
    }
    if has(waymark_devicelist_set(), in: mask) {
      var active: [String] = []
      for index in 0..<waymark_devices_count(data)
      where waymark_devices_activated(data, index) {
        active.append(String(cString: waymark_devices_path(data, index)))
      }
      return .devices(active)
    }
    if has(waymark_satellite_set(), in: mask) {
      let used = Int(waymark_satellites_used(data))
      let visible = Int(waymark_satellites_visible(data))
      return .sky(
        SkyView(
          hdop: finite(waymark_dop_hdop(data), if: true),
          vdop: finite(waymark_dop_vdop(data), if: true),
          pdop: finite(waymark_dop_pdop(data), if: true),
          satellitesUsed: used >= 0 ? used : nil,
          satellitesVisible: visible >= 0 ? visible : nil))
    }
    if has(waymark_version_set(), in: mask) {
      return .version(String(cString: waymark_version_release(data)))
    }
    if has(waymark_error_set(), in: mask) {
      return .error(String(cString: waymark_error_message(data)))
    }
    // gpsd 3.22 sends a closed device as {"class":"DEVICE",...,"activated":0}; libgps fails to
    // parse the 0 and sets only PACKET_SET, but it has filled the path and left activated zero.
    let path = String(cString: waymark_dev_path(data))
    if mask & ~waymark_packet_set() == 0, !path.isEmpty, !waymark_dev_activated(data) {
      return .device(path: path, active: false)
    }
    return .other
  }

  private func fix(mask: UInt64) -> Fix {
    var fix = Fix()
    fix.mode = FixMode(rawValue: Int(waymark_fix_mode(data))) ?? .unknown
    if has(waymark_status_set(), in: mask) {
      fix.status = FixStatus(rawValue: Int(waymark_fix_status(data))) ?? .unknown
    } else if fix.mode.hasPosition {
      fix.status = .gps
    }
    // libgps fills time_t seconds and nanoseconds from any text gpsd (or whoever answers on
    // its port) sends: both are checked before any arithmetic on them.
    let seconds = Int64(waymark_fix_seconds(data))
    let nanoseconds = Int64(waymark_fix_nanoseconds(data))
    if has(waymark_time_set(), in: mask),
      Fix.Limits.isPlausibleTime(seconds1970: Double(seconds)),
      (0..<1_000_000_000).contains(nanoseconds)
    {
      let milliseconds = seconds * 1000 + (nanoseconds + 500_000) / 1_000_000
      fix.time = Timestamp.date(milliseconds: Int64(milliseconds))
      fix.timeOfDayMilliseconds = Int(milliseconds % 86_400_000)
    }
    if fix.mode.hasPosition, has(waymark_latlon_set(), in: mask) {
      let latitude = waymark_fix_latitude(data)
      let longitude = waymark_fix_longitude(data)
      if latitude.isFinite, longitude.isFinite {
        fix.coordinate = Coordinate(latitude: latitude, longitude: longitude)
      }
    }
    let altitude = has(waymark_altitude_set(), in: mask)
    fix.altitudeMSL = finite(waymark_fix_alt_msl(data), if: altitude)
    fix.geoidSeparation = finite(waymark_fix_geoid_sep(data), if: altitude)
    if fix.altitudeMSL == nil, fix.geoidSeparation != nil,
      let hae = finite(waymark_fix_alt_hae(data), if: altitude),
      let separation = fix.geoidSeparation
    {
      fix.altitudeMSL = hae - separation
    }
    fix.speed = finite(waymark_fix_speed(data), if: has(waymark_speed_set(), in: mask))
    fix.track = finite(waymark_fix_track(data), if: has(waymark_track_set(), in: mask))
    fix.climb = finite(waymark_fix_climb(data), if: has(waymark_climb_set(), in: mask))
    // gpsd 3.22 reports `eph` (from its error model and the DOPs) without `epx`/`epy`, and
    // libgps sets HERR_SET only with those two: `eph` is taken whenever this report carries it
    // (libgps reads an absent member as NaN). Without it every fix from gpsd had no horizontal
    // accuracy.
    fix.horizontalError = finite(waymark_fix_eph(data), if: true)
    fix.verticalError = finite(waymark_fix_epv(data), if: has(waymark_verr_set(), in: mask))
    fix.speedError = finite(waymark_fix_eps(data), if: has(waymark_speederr_set(), in: mask))
    fix.trackError = finite(waymark_fix_epd(data), if: has(waymark_trackerr_set(), in: mask))
    let path = String(cString: waymark_dev_path(data))
    if !path.isEmpty { fix.provenance = .device(path) }
    return fix.withinLimits()
  }
}
