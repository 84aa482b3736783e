import FoundationEssentials
import Glibc
import WaymarkCore

/// A pseudo-terminal pair that plays a serial GPS receiver: gpsd opens ``path`` (the slave),
/// the test writes NMEA into the master.
///
/// The slave is raw (no echo, no line editing) and readable by anyone, because gpsd drops root
/// to user `gpsd` and then opens devices that are added later with that identity.
package final class PseudoTerminal: Sendable {
  /// An error opening or configuring the pseudo-terminal, with the failing call and errno.
  package struct Failure: Error, CustomStringConvertible {
    /// The call that failed.
    package var call: String
    /// errno after the call.
    package var code: Int32
    /// `call: strerror(code)`.
    package var description: String { "\(call): \(String(cString: strerror(code)))" }
  }

  /// `TIOCSPTLCK`: `_IOW('T', 0x31, int)`.
  private static let unlockRequest: UInt = 0x4004_5431
  /// `TIOCGPTN`: `_IOR('T', 0x30, unsigned int)`.
  private static let numberRequest: UInt = 0x8004_5430

  /// The slave device path, such as `/dev/pts/3`.
  package let path: String
  private let box: Descriptors

  private final class Descriptors: Sendable {
    let fds: Locked<(master: Int32, slave: Int32)>
    init(master: Int32, slave: Int32) { fds = Locked((master, slave)) }
  }

  /// Opens a new pseudo-terminal.
  ///
  /// - Throws: ``Failure`` naming the call that failed.
  package init() throws {
    // posix_openpt/grantpt/unlockpt/ptsname are hidden from Swift's Glibc module; on Linux they
    // are /dev/ptmx plus two ioctls.
    let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard master >= 0 else { throw Failure(call: "open /dev/ptmx", code: errno) }
    var unlock: Int32 = 0
    var number: UInt32 = 0
    guard ioctl(master, PseudoTerminal.unlockRequest, &unlock) == 0,
      ioctl(master, PseudoTerminal.numberRequest, &number) == 0
    else {
      let code = errno
      Glibc.close(master)
      throw Failure(call: "ioctl TIOCSPTLCK/TIOCGPTN", code: code)
    }
    let path = "/dev/pts/\(number)"
    let slave = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard slave >= 0 else {
      let code = errno
      Glibc.close(master)
      throw Failure(call: "open \(path)", code: code)
    }
    var attributes = termios()
    tcgetattr(slave, &attributes)
    cfmakeraw(&attributes)
    tcsetattr(slave, TCSANOW, &attributes)
    chmod(path, 0o666)
    let flags = fcntl(master, F_GETFL)
    _ = fcntl(master, F_SETFL, flags | O_NONBLOCK)
    self.path = path
    let box = Descriptors(master: master, slave: slave)
    self.box = box
    DetachedThread.start(name: "pty-drain") { PseudoTerminal.discardInput(box) }
  }

  /// Reads and discards what gpsd writes to the device (driver probes), as a real receiver
  /// would consume it. Without this, gpsd can block in `tcdrain` on the pseudo-terminal.
  private static func discardInput(_ box: Descriptors) {
    var buffer = [UInt8](repeating: 0, count: 1024)
    while true {
      let master = box.fds.withLock { $0.master }
      guard master >= 0 else { return }
      var entry = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
      let ready = poll(&entry, 1, 50)
      guard ready > 0 else { continue }
      if entry.revents & Int16(POLLHUP) != 0 { usleep(50_000) }
      let closed = box.fds.withLock { fds -> Bool in
        guard fds.master == master else { return true }
        let count = read(master, &buffer, buffer.count)
        return count < 0 && errno != EAGAIN && errno != EINTR && errno != EIO
      }
      if closed { return }
    }
  }

  deinit { close() }

  /// Writes as much of `bytes` as the terminal takes now, without blocking.
  ///
  /// - Returns: the number of bytes written (0 when the buffer is full).
  /// - Throws: ``Failure`` when the terminal is closed or the write fails.
  package func writeSome(_ bytes: ArraySlice<UInt8>) throws -> Int {
    try box.fds.withLock { fds in
      guard fds.master >= 0 else { throw Failure(call: "write", code: EBADF) }
      let written = bytes.withUnsafeBytes { Glibc.write(fds.master, $0.baseAddress, $0.count) }
      if written < 0 {
        if errno == EAGAIN || errno == EINTR { return 0 }
        throw Failure(call: "write", code: errno)
      }
      return written
    }
  }

  /// Writes all of `bytes`, waiting on `clock` while the terminal's buffer is full.
  package func write(_ bytes: [UInt8], clock: some Clock<Duration> = ContinuousClock())
    async throws
  {
    var offset = 0
    while offset < bytes.count {
      let written = try writeSome(bytes[offset...])
      offset += written
      if written == 0 { try await clock.sleep(for: .milliseconds(2)) }
    }
  }

  /// Closes both sides: the receiver is unplugged.
  package func close() {
    let fds = box.fds.withLock { fds in
      defer { fds = (-1, -1) }
      return fds
    }
    if fds.master >= 0 { Glibc.close(fds.master) }
    if fds.slave >= 0 { Glibc.close(fds.slave) }
  }
}
