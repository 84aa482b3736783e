import WaymarkCore

/// How Waymark estimates position error from NMEA when the receiver sends no GST.
///
/// The estimate is `DOP × UERE`, where UERE (user equivalent range error, 1 sigma, metres)
/// depends on how the fix was obtained. `HDOP × UERE` is the DRMS horizontal error, about a
/// 65 % radius, which is what CoreLocation's `horizontalAccuracy` means. The values are typical
/// figures for consumer receivers, not a promise:
///
/// | status | UERE (m) |
/// |---|---|
/// | autonomous GNSS, unknown | 5.0 |
/// | DGPS / SBAS | 2.0 |
/// | RTK float | 0.5 |
/// | RTK fixed | 0.05 |
/// | dead reckoning | 20.0 |
///
/// When GST is present, the horizontal error is `sqrt(σlat² + σlon²)` and the vertical error is
/// `σalt`, as the receiver computed them.
public enum ErrorModel {
  /// UERE in metres for a fix status.
  public static func userEquivalentRangeError(for status: FixStatus) -> Double {
    switch status {
    case .dgps: 2.0
    case .rtkFloat: 0.5
    case .rtkFixed: 0.05
    case .deadReckoning, .gnssDeadReckoning: 20.0
    default: 5.0
    }
  }
}
