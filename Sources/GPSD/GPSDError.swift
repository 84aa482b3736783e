import CGPS
import FoundationEssentials

/// An error from libgps or from the conversation with gpsd.
///
/// Codes are libgps/errno numbers plus a few of Waymark's own (negative), so that
/// `catch GPSDError.streamClosed` works like swift-system's `Errno`.
public struct GPSDError: Error, RawRepresentable, Sendable, Hashable, CustomStringConvertible {
  /// The libgps error (negative, see `gps_errstr(3)`), errno (positive), or Waymark code.
  public let rawValue: Int32

  /// Creates an error from its code.
  public init(rawValue: Int32) { self.rawValue = rawValue }

  /// gpsd closed the connection (`gps_read` returned -1 with `errno` 0).
  public static let streamClosed = GPSDError(rawValue: -1_000)
  /// Nothing arrived from gpsd within the receive timeout, not even an answer to a probe.
  public static let silent = GPSDError(rawValue: -1_001)
  /// Could not connect to gpsd.
  public static let connectionFailed = GPSDError(rawValue: -1_002)
  /// gpsd refused the WATCH request.
  public static let watchFailed = GPSDError(rawValue: -1_003)

  /// A person-readable description, without coordinates.
  public var description: String {
    switch self {
    case .streamClosed: return "gpsd closed the connection"
    case .silent: return "no data from gpsd within the receive timeout"
    case .connectionFailed: return "could not connect to gpsd"
    case .watchFailed: return "gpsd did not accept the WATCH request"
    default:
      if rawValue < 0, let text = waymark_gps_errstr(rawValue) {
        return String(cString: text)
      }
      if let text = strerror(rawValue) { return String(cString: text) }
      return "error \(rawValue)"
    }
  }

  /// Pattern match, so that `catch GPSDError.silent` works.
  public static func ~= (pattern: GPSDError, value: any Error) -> Bool {
    (value as? GPSDError) == pattern
  }
}
