import WaymarkSimulation

/// A private gpsd reading a ``FakeReceiver`` (a pseudo-terminal), started and warmed up (gpsd
/// has seen the device speak): what every benchmark that drives gpsd starts from. ``stop()``
/// ends gpsd and closes the terminal.
struct BenchmarkGPSD {
  /// The receiver gpsd reads: write the drive's epochs into it.
  let receiver: FakeReceiver
  /// The private gpsd.
  let gpsd: GPSDHarness

  /// Starts gpsd (the binary `executable`) on a new receiver and waits until it reads it.
  init(executable: String = GPSDHarness.defaultExecutable) async throws {
    receiver = try FakeReceiver()
    gpsd = try await GPSDHarness(devices: [receiver.path], executable: executable)
    do {
      try await receiver.warmUp(gpsd: gpsd)
    } catch {
      stop()
      throw error
    }
  }

  /// Stops gpsd and closes the receiver's terminal.
  func stop() {
    gpsd.stop()
    receiver.terminal.close()
  }
}
