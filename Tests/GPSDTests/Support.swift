import Foundation
import GPSD
import WaymarkCore
import WaymarkSimulation
import WaymarkTesting

/// Collects what a stream delivers, on a task, so that a test can wait for a condition.
final class Collector<Element: Sendable>: Sendable {
  final class Storage: Sendable {
    let items = Locked<[Element]>([])
  }

  private let storage = Storage()
  private let task: Task<Void, Never>

  init(_ stream: AsyncStream<Element>) {
    let storage = self.storage
    task = Task {
      for await item in stream { storage.items.withLock { $0.append(item) } }
    }
  }

  var all: [Element] { storage.items.withLock { $0 } }

  /// Waits (on the continuous clock, polling) until `condition` holds for the items so far.
  @discardableResult
  func wait(
    timeout: Duration = .seconds(15), until condition: ([Element]) -> Bool
  ) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
      if condition(all) { return true }
      try? await clock.sleep(for: .milliseconds(10))
    }
    return condition(all)
  }

  func cancel() { task.cancel() }

  deinit { cancel() }
}

/// A synthetic 1 Hz log: GGA, GSA and RMC per epoch, moving north-east from Munich.
struct SyntheticLog {
  struct Epoch {
    var lines: [String]
    var timeOfDayMilliseconds: Int
    var time: Date
    var latitude: Double
    var longitude: Double
  }

  var epochs: [Epoch] = []

  init(count: Int, startSecond: Int = 12 * 3600) {
    let day = UTCDate(year: 2026, month: 11, day: 29)!
    for index in 0..<count {
      let second = startSecond + index
      let latitude = 48.117_300 + Double(index) * 0.000_04
      let longitude = 11.516_700 + Double(index) * 0.000_06
      let (latText, latValue) = SyntheticLog.ddmm(latitude, degreeDigits: 2)
      let (lonText, lonValue) = SyntheticLog.ddmm(longitude, degreeDigits: 3)
      let hhmmss = String(
        format: "%02d%02d%02d.00", second / 3600, second / 60 % 60, second % 60)
      let gga = FakeReceiver.sentence(
        "GPGGA,\(hhmmss),\(latText),N,\(lonText),E,1,08,0.9,545.4,M,46.9,M,,")
      let gsa = FakeReceiver.sentence("GPGSA,A,3,04,05,09,12,17,24,25,29,,,,,1.8,0.9,1.5")
      let rmc = FakeReceiver.sentence(
        "GPRMC,\(hhmmss),A,\(latText),N,\(lonText),E,010.0,045.0,291126,,,A")
      epochs.append(
        Epoch(
          lines: [gga, gsa, rmc], timeOfDayMilliseconds: second * 1000,
          time: day.instant(millisecondsOfDay: second * 1000), latitude: latValue,
          longitude: lonValue))
    }
  }

  /// `ddmm.mmmmm` text and the degrees it denotes exactly.
  static func ddmm(_ degrees: Double, degreeDigits: Int) -> (String, Double) {
    let whole = Int(degrees)
    let minutes = ((degrees - Double(whole)) * 60 * 100_000).rounded() / 100_000
    let text = String(format: "%0\(degreeDigits)d%08.5f", whole, minutes)
    let parsedMinutes = Double(String(format: "%.5f", minutes))!
    return (text, Double(whole) + parsedMinutes / 60)
  }

  var text: String { epochs.flatMap(\.lines).map { $0 + "\r\n" }.joined() }
}

/// A real gpsd on a pseudo-terminal receiver, warmed up, plus a source watching it.
struct LiveRig {
  let receiver: FakeReceiver
  let gpsd: GPSDHarness

  static func start() async throws -> LiveRig {
    let receiver = try FakeReceiver()
    let gpsd = try await GPSDHarness(devices: [receiver.path])
    try await receiver.warmUp(gpsd: gpsd)
    return LiveRig(receiver: receiver, gpsd: gpsd)
  }

  func configuration(
    device: String? = nil, bufferCapacity: Int = 1024
  ) -> GPSDConfiguration {
    GPSDConfiguration(
      endpoint: GPSDEndpoint(host: "127.0.0.1", port: gpsd.port, device: device),
      receiveTimeout: .seconds(10),
      reconnect: ReconnectPolicy(initialDelay: .milliseconds(50), maximumDelay: .seconds(1)),
      bufferCapacity: bufferCapacity)
  }

  func stop() {
    gpsd.stop()
    receiver.terminal.close()
  }
}

extension Fix {
  /// Same UTC instant (to the millisecond) and position within 1e-6°.
  func sameTimeAndPosition(as other: Fix) -> Bool {
    guard let time, let otherTime = other.time, let coordinate,
      let otherCoordinate = other.coordinate
    else { return false }
    return Timestamp.milliseconds(time) == Timestamp.milliseconds(otherTime)
      && abs(coordinate.latitude - otherCoordinate.latitude) <= 1e-6
      && abs(coordinate.longitude - otherCoordinate.longitude) <= 1e-6
  }

  /// Whether this fix has the epoch's time and position (within 1e-6°).
  func matches(_ epoch: SyntheticLog.Epoch) -> Bool {
    guard let coordinate, let time else { return false }
    return Timestamp.milliseconds(time) == Timestamp.milliseconds(epoch.time)
      && abs(coordinate.latitude - epoch.latitude) <= 1e-6
      && abs(coordinate.longitude - epoch.longitude) <= 1e-6
  }
}

/// Whether gpsd can be used; tests that need it are skipped otherwise.
let gpsdInstalled = GPSDHarness.isAvailable
