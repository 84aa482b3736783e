import FoundationEssentials
import Glibc
import WaymarkClient
import WaymarkCore
import WaymarkStore

/// Where the device is for `waymark stamp` without a position: the last fix recorded in the
/// store when it is fresh, else waymarkd's latest fix (`POLL`), else a clear error.
///
/// "Fresh" compares fix time with the stamp time: a fix at most ``maximumAgeSeconds`` from it
/// (before or after) counts; `--time` in the past therefore looks for a fix of that moment.
struct FreshFix {
  /// The default of `--max-age`, seconds.
  static let defaultMaximumAgeSeconds = 60.0
  /// The default of `--socket`.
  static let defaultSocketPath = BrokerConnection.defaultPath
  /// How long waymarkd has to answer a `POLL`.
  static let pollTimeout = Duration.seconds(5)

  /// The stamp time.
  var time: Date
  /// How far the fix may be from ``time``, seconds.
  var maximumAgeSeconds: Double
  /// waymarkd's socket.
  var socketPath: String
  /// The store, for messages.
  var store: String

  /// The position to stamp at.
  ///
  /// - Parameter lastFix: the last fix recorded in the store, if any.
  /// - Throws: ``CommandError`` with exit 69 when no fresh fix is to be had.
  func position(lastFix: MonitorStateRepository.LastFix?) async throws -> Coordinate {
    if let lastFix, isFresh(lastFix.time) { return lastFix.coordinate }
    guard DaemonLocationService.socketExists(at: socketPath) else {
      guard let lastFix else {
        throw CommandError(
          "no fix recorded in \(store); give --place or --lat/--lon, or start waymarkd",
          code: .unavailable)
      }
      throw CommandError(
        "the last fix is \(age(of: lastFix.time)); give --lat/--lon or start waymarkd",
        code: .unavailable)
    }
    let fix = try await poll()
    guard let fixTime = fix.time, let coordinate = fix.coordinate else {
      throw CommandError("waymarkd's latest fix has no time or position", code: .unavailable)
    }
    guard isFresh(fixTime) else {
      throw CommandError(
        "waymarkd's latest fix is \(age(of: fixTime)); give --place or --lat/--lon",
        code: .unavailable)
    }
    return coordinate
  }

  private func isFresh(_ fixTime: Date) -> Bool {
    abs(time.timeIntervalSince(fixTime)) <= maximumAgeSeconds
  }

  /// "312 s old (limit 60 s)", or "… after the stamp time …" for a fix later than it.
  private func age(of fixTime: Date) -> String {
    let seconds = time.timeIntervalSince(fixTime)
    let limit =
      maximumAgeSeconds == maximumAgeSeconds.rounded()
      ? String(Int(saturating: maximumAgeSeconds)) : String(maximumAgeSeconds)
    let amount = "\(Int(saturating: abs(seconds).rounded())) s"
    return (seconds >= 0 ? "\(amount) old" : "\(amount) after the stamp time")
      + " (limit \(limit) s)"
  }

  /// Asks waymarkd for its latest fix: one `POLL`, answered by a `TPV` or an `ERROR`.
  private func poll() async throws -> Fix {
    let (connection, messages) = try BrokerConnection.open(
      socketPath, sending: [DaemonRequest.poll.line.string])
    let deadline = Task {
      try await Task.sleep(for: Self.pollTimeout)
      connection.close()
    }
    defer {
      deadline.cancel()
      connection.close()
    }
    var client: String?
    for await message in messages {
      switch DaemonMessage.parse(message) {
      case .success(.authorization(let authorization)):
        client = authorization.clientID
      case .success(.location(let fix)):
        return fix
      case .success(.error(let text)):
        var reason = text
        if reason.hasPrefix("not authorized"), let client {
          reason += " ('waymark auth grant \(client) whenInUse' allows it)"
        }
        throw CommandError(
          "waymarkd at \(socketPath) gave no fix: \(reason); give --place or --lat/--lon",
          code: .unavailable)
      default:
        continue
      }
    }
    throw CommandError(
      "waymarkd at \(socketPath) gave no fix within \(Self.pollTimeout); give --place or "
        + "--lat/--lon", code: .unavailable)
  }
}
