import FoundationEssentials
import Glibc

/// A serial GPS receiver played by a test: NMEA written into a ``PseudoTerminal`` that a real
/// gpsd reads.
///
/// ```swift
/// let receiver = try FakeReceiver()
/// let gpsd = try await GPSDHarness(devices: [receiver.path])
/// try await receiver.warmUp(gpsd: gpsd)
/// try await gpsd.waitForWatchers(1)     // the client under test has sent WATCH
/// try await receiver.send(epochs: FakeReceiver.epochs(of: lines), interval: .milliseconds(20))
/// try await receiver.endOfFile()
/// ```
package final class FakeReceiver: Sendable {
  /// The pseudo-terminal gpsd reads.
  package let terminal: PseudoTerminal

  /// Opens a new pseudo-terminal.
  package init() throws {
    terminal = try PseudoTerminal()
  }

  /// The device path to give gpsd.
  package var path: String { terminal.path }

  /// Writes one line, adding CR LF when missing.
  package func send(line: String) async throws {
    var text = line
    if text.hasSuffix("\r\n") {
    } else if text.hasSuffix("\n") {
      text.removeLast()
      text += "\r\n"
    } else {
      text += "\r\n"
    }
    try await terminal.write(Array(text.utf8))
  }

  /// Writes epochs (groups of lines), waiting `interval` on `clock` between them.
  package func send(
    epochs: [[String]], interval: Duration, clock: some Clock<Duration> = ContinuousClock()
  ) async throws {
    for (index, epoch) in epochs.enumerated() {
      if index > 0 && interval > .zero { try await clock.sleep(for: interval) }
      var bytes: [UInt8] = []
      for line in epoch {
        bytes += Array(line.utf8)
        if !line.hasSuffix("\n") { bytes += [13, 10] }
      }
      try await terminal.write(bytes, clock: clock)
    }
  }

  /// Writes `# EOF`, which tells gpsd (3.22 and later) to close the device.
  package func endOfFile() async throws {
    try await send(line: "# EOF")
  }

  /// Writes numbered, harmless `$GPTXT` sentences every 20 ms until gpsd echoes one that was
  /// written after the first echo it sent: from then on gpsd reads everything in order, so no
  /// fix is lost to its driver probing and line-speed hunting.
  package func warmUp(gpsd: GPSDHarness, timeout: Duration = .seconds(10)) async throws {
    let tag = "waymark warm-up \(path.split(separator: "/").last ?? "")"
    let writer = Task {
      var number = 0
      while !Task.isCancelled {
        number += 1
        try await send(line: FakeReceiver.sentence("GPTXT,01,01,02,\(tag) \(number)"))
        try await Task.sleep(for: .milliseconds(20))
      }
    }
    defer { writer.cancel() }
    var target: Int?
    try await gpsd.waitForEcho(timeout: timeout) { line in
      guard let range = line.firstRange(of: tag + " ") else { return false }
      let number = Int(line[range.upperBound...].prefix { $0.isNumber }) ?? 0
      if let target { return number >= target }
      target = number + 3
      return false
    }
    writer.cancel()
    _ = await writer.result
  }

  /// Unplugs the receiver: gpsd is told to close the device (as udev's hotplug script does)
  /// and the pseudo-terminal is closed.
  package func unplug(from gpsd: GPSDHarness) throws {
    try gpsd.remove(device: path)
    terminal.close()
  }

  /// `$body*hh` with the NMEA checksum, without line ending.
  package static func sentence(_ body: String) -> String {
    var checksum: UInt8 = 0
    for byte in body.utf8 { checksum ^= byte }
    let hex = String(checksum, radix: 16, uppercase: true)
    return "$\(body)*\(hex.count == 1 ? "0" + hex : hex)"
  }

  /// Splits a log's bytes into lines at LF, dropping a CR before it. (Splitting a `String` at
  /// "\n" does not work for CRLF files: Swift sees "\r\n" as one character.)
  package static func lines(of bytes: [UInt8]) -> [String] {
    bytes.split(separator: 10, omittingEmptySubsequences: false).map { line in
      String(decoding: line.last == 13 ? line.dropLast() : line[...], as: UTF8.self)
    }
  }

  /// Groups NMEA lines into epochs: a new epoch starts when a GGA, RMC, GNS or GLL carries a
  /// time of day different from the current epoch's. `#` lines and blank lines are dropped.
  package static func epochs(of lines: [String]) -> [[String]] {
    var epochs: [[String]] = []
    var current: [String] = []
    var currentTime: Substring?
    for raw in lines {
      let line = String(raw.trimmedWhitespace)
      guard !line.isEmpty, !line.hasPrefix("#") else { continue }
      if let time = timeOfDay(line) {
        if let currentTime, currentTime != time, !current.isEmpty {
          epochs.append(current)
          current = []
        }
        currentTime = time
      }
      current.append(line)
    }
    if !current.isEmpty { epochs.append(current) }
    return epochs
  }

  /// The UTC time of day of an epoch in seconds (from its first GGA/RMC/GNS/GLL), if any.
  package static func timeOfDaySeconds(of epoch: [String]) -> Double? {
    for line in epoch {
      guard let field = timeOfDay(line), field.count >= 6,
        let hours = Int(field.prefix(2)), let minutes = Int(field.dropFirst(2).prefix(2)),
        let seconds = Double(field.dropFirst(4))
      else { continue }
      return Double(hours * 3600 + minutes * 60) + seconds
    }
    return nil
  }

  /// The hhmmss.ss field of a GGA, RMC, GNS or GLL sentence.
  static func timeOfDay(_ line: String) -> Substring? {
    guard let start = line.lastIndex(where: { $0 == "$" || $0 == "!" }) else { return nil }
    let fields = line[start...].split(separator: ",", omittingEmptySubsequences: false)
    guard fields.count > 6, fields[0].count >= 6 else { return nil }
    let type = fields[0].suffix(3)
    let time: Substring
    switch type {
    case "GGA", "RMC", "GNS": time = fields[1]
    case "GLL": time = fields[5]
    default: return nil
    }
    return time.isEmpty ? nil : time
  }
}
