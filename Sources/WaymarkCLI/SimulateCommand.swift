import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkSimulation

/// `waymark simulate`: plays an NMEA log into a pseudo-terminal, optionally with a private gpsd.
enum SimulateCommand: Command {
  static let name = "simulate"
  static let summary = "Play an NMEA log as a serial receiver on a pseudo-terminal (gpsd optional)."
  /// The options, declared once: parsing, `--help`, `waymark.1` and completions read them.
  static let options = OptionTable(
    column: 24,
    [
      .value("--rate", "<hz>", "Epochs per second, whatever the log's own times."),
      .value("--speed", "<factor>", "A factor of the log's own pace (default 1: as recorded)."),
      .flag(
        "--gpsd",
        """
        Start a private gpsd (gpsd -N -n -b -S <port>) on the device; play
        starts when its first client has sent WATCH.
        """),
      .value("--port", "<n>", "The private gpsd's port (default: a free one)."),
      .value(
        "--wait", "<seconds>", default: "1",
        "Without --gpsd: wait this long before playing (default 1)."),
    ])

  static let help = """
    USAGE: waymark simulate <log> [--rate <hz>|--speed <factor>] [--gpsd] [--port <n>]
                            [--wait <seconds>]

    Opens a pseudo-terminal that behaves like a serial GPS receiver and writes the log into it,
    epoch by epoch, ending with '# EOF'. The first line on stdout is an NDJSON object with the
    device path (and, with --gpsd, the address of a private gpsd reading it), so that gpsd and
    applications can be driven from a log without gpsfake.

    ARGUMENTS:
      <log>                 The NMEA log to play.

    OPTIONS:
    \(options.listing)
    A summary goes to stderr. SIGINT or SIGTERM stops playing and stops the private gpsd.
    Exit codes: 0 ok, 64 usage, 66 unreadable log, 69 gpsd could not start, 74 I/O error.

    """

  static func run(_ arguments: [String]) async throws -> ExitCode {
    let parsed = try ParsedArguments(arguments, declared: options)
    let path = try parsed.requirePositionals(["<log>"])[0]
    let rate = try parsed.double("--rate")
    let speed = try parsed.double("--speed")
    if rate != nil && speed != nil {
      throw CommandError.usage("'--rate' and '--speed' cannot be used together.")
    }
    if let rate, rate <= 0 { throw CommandError.usage("'--rate' must be positive.") }
    if let speed, speed <= 0 { throw CommandError.usage("'--speed' must be positive.") }
    let wait = try parsed.double(orDefault: "--wait")
    var port: UInt16?
    if let text = parsed.value("--port") {
      guard let value = UInt16(text), value > 0 else {
        throw CommandError.usage("'--port' expects a port number, got '\(text)'.")
      }
      port = value
    }
    guard let data = FileManager.default.contents(atPath: path) else {
      throw CommandError("cannot read '\(path)'.", code: .noInput)
    }
    let epochs = FakeReceiver.epochs(of: FakeReceiver.lines(of: [UInt8](data)))
    let intervals = pacing(epochs, rate: rate, speed: speed ?? 1)

    let receiver: FakeReceiver
    do {
      receiver = try FakeReceiver()
    } catch {
      throw CommandError("cannot open a pseudo-terminal: \(error).", code: .ioError)
    }
    defer { receiver.terminal.close() }
    var gpsd: GPSDHarness?
    if parsed.has("--gpsd") {
      do {
        gpsd = try await GPSDHarness(devices: [receiver.path], port: port)
        try await receiver.warmUp(gpsd: gpsd!)
      } catch {
        gpsd?.stop()
        throw CommandError("gpsd could not start: \(error)", code: .unavailable)
      }
    }
    defer { gpsd?.stop() }

    var announcement = JSONLine(class: "SIMULATOR")
    announcement.add("device", receiver.path)
    announcement.add("gpsd", gpsd.map { $0.endpoint })
    announcement.add("epochs", epochs.count)
    OutputSink.standardOutput.withBuffer { announcement.write(to: &$0) }
    OutputSink.standardOutput.flush()

    let harness = gpsd
    let play = Task {
      if let gpsd = harness {
        OutputSink.standardError.line("waymark simulate: waiting for a gpsd client (WATCH)")
        try await gpsd.waitForWatchers(1, timeout: .seconds(86_400))
      } else if wait > 0 {
        try await Task.sleep(for: .seconds(wait))
      }
      let clock = ContinuousClock()
      for (index, epoch) in epochs.enumerated() {
        try Task.checkCancellation()
        if index > 0 { try await clock.sleep(for: intervals[index]) }
        try await receiver.send(epochs: [epoch], interval: .zero)
      }
      try await receiver.endOfFile()
    }
    let trap = SignalWatcher([SIGINT, SIGTERM]) { _ in play.cancel() }
    defer { trap.cancel(restoringDefaults: true) }
    do {
      try await play.value
    } catch is CancellationError {
      OutputSink.standardError.line("waymark simulate: stopped")
      return .ok
    } catch let error as PseudoTerminal.Failure {
      throw CommandError("writing to \(receiver.path) failed: \(error)", code: .ioError)
    } catch let error as GPSDHarness.Failure {
      throw CommandError("\(error)", code: .unavailable)
    }
    OutputSink.standardError.line(
      "waymark simulate: \(epochs.count) epochs written to \(receiver.path)")
    return .ok
  }

  /// The wait before each epoch: `1/rate`, or the log's own time step divided by `speed`
  /// (1 s when an epoch has no time; never negative across midnight or gaps backwards).
  static func pacing(_ epochs: [[String]], rate: Double?, speed: Double) -> [Duration] {
    if let rate { return Array(repeating: .seconds(1 / rate), count: epochs.count) }
    var result: [Duration] = []
    var previous: Double?
    for epoch in epochs {
      let time = FakeReceiver.timeOfDaySeconds(of: epoch)
      var step = 1.0
      if let time, let previous {
        step = time - previous
        if step < 0 { step += 86_400 }
        if step > 3600 { step = 1 }
      }
      result.append(.seconds(step / speed))
      if let time { previous = time }
    }
    return result
  }
}
