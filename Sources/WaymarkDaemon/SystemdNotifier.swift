import FoundationEssentials
import Glibc
import WaymarkCore

/// The `sd_notify(3)` protocol without libsystemd: datagrams such as `READY=1` sent to the
/// Unix socket named by `$NOTIFY_SOCKET`.
///
/// A socket name starting with `@` is in the abstract namespace (the `@` becomes a NUL byte).
/// Without `$NOTIFY_SOCKET` (not started by systemd) every call does nothing. The watchdog
/// interval comes from `$WATCHDOG_USEC`, honoured only when `$WATCHDOG_PID` is unset or names
/// this process.
package final class SystemdNotifier: Sendable {
  /// The socket address, or `nil` when notifications are off.
  package let socketPath: String?
  /// How often to send `WATCHDOG=1`: half of `$WATCHDOG_USEC`; `nil` without a watchdog.
  package let watchdogInterval: Duration?
  private let descriptor: Int32

  /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from `environment`.
  package init(
    environment: [String: String] = ProcessInfo.processInfo.environment,
    processID: pid_t = getpid()
  ) {
    let path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    if let path, path.hasPrefix("/") || path.hasPrefix("@") {
      socketPath = path
      descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    } else {
      socketPath = nil
      descriptor = -1
    }
    var interval: Duration?
    if let text = environment["WATCHDOG_USEC"], let microseconds = UInt64(text), microseconds > 0 {
      let forUs = environment["WATCHDOG_PID"].map { pid_t($0) == processID } ?? true
      if forUs { interval = .microseconds(Int64(microseconds / 2)) }
    }
    watchdogInterval = interval
  }

  deinit {
    if descriptor >= 0 { close(descriptor) }
  }

  /// Whether notifications go anywhere.
  package var isEnabled: Bool { descriptor >= 0 }

  /// Sends one datagram of `KEY=value` lines, without ever blocking: when the receiver's queue
  /// is full the message is dropped (the next status or watchdog ping goes out as usual), so a
  /// stuck reader can never stall the main loop.
  ///
  /// - Returns: whether it was sent. Wraps `sendto(2)`.
  @discardableResult
  package func notify(_ state: String) -> Bool {
    guard descriptor >= 0, let socketPath else { return false }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    var pathBytes = Array(socketPath.utf8)
    if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard pathBytes.count < capacity else { return false }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (index, byte) in pathBytes.enumerated() { raw[index] = byte }
    }
    // Abstract names are exactly as long as given; paths include their terminating NUL.
    let pathLength = pathBytes.first == 0 ? pathBytes.count : pathBytes.count + 1
    let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + pathLength)
    let message = Array(state.utf8)
    let sent = withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
        message.withUnsafeBytes { bytes in
          sendto(
            descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT),
            address, length)
        }
      }
    }
    return sent == message.count
  }

  /// `READY=1` with a status line.
  package func ready(status: String) { notify("READY=1\nSTATUS=\(Self.line(status))") }

  /// `STATUS=…`: one line a person can read in `systemctl status`.
  package func status(_ text: String) { notify("STATUS=\(Self.line(text))") }

  /// `text` as one line of the notify protocol: control characters (a newline would start a
  /// second assignment, `WATCHDOG=1` or `MAINPID=` among them) written as `\xNN`.
  static func line(_ text: String) -> String { LogText.escaped(text) }

  /// `WATCHDOG=1`.
  package func watchdog() { notify("WATCHDOG=1") }

  /// `RELOADING=1` at the start of a reload.
  package func reloading() { notify("RELOADING=1") }

  /// `STOPPING=1` at the start of a clean stop.
  package func stopping() { notify("STOPPING=1") }

  /// The environment variables of the protocol, which children (hooks) must not inherit.
  package static let variables = ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"]
}
