import Foundation
import GPSD
import Testing
import WaymarkCore
import WaymarkSimulation
import WaymarkTesting

/// One TPV of a gpsd `.chk` file.
struct CheckTPV {
  var timeOfDayMilliseconds: Int
  var mode: Int
  var latitude: Double
  var longitude: Double

  /// The TPVs with mode ≥ 2, a time and a position, from a `.chk` file.
  static func load(_ url: URL) throws -> [CheckTPV] {
    let bytes = [UInt8](try Data(contentsOf: url))
    let prefix = Array("{\"class\":\"TPV\"".utf8)
    var result: [CheckTPV] = []
    for raw in bytes.split(separator: 10) {
      let line = raw.last == 13 ? raw.dropLast() : raw
      guard line.starts(with: prefix) else { continue }
      let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
      guard let object, let mode = object["mode"] as? Int, mode >= 2,
        let timeText = object["time"] as? String, let time = Timestamp.parse(timeText),
        let latitude = object["lat"] as? Double, let longitude = object["lon"] as? Double
      else { continue }
      let milliseconds = Timestamp.milliseconds(time) % 86_400_000
      result.append(
        CheckTPV(
          timeOfDayMilliseconds: Int(milliseconds), mode: mode, latitude: latitude,
          longitude: longitude))
    }
    return result
  }

  func matches(_ fix: Fix) -> Bool {
    guard let coordinate = fix.coordinate else { return false }
    return fix.timeOfDayMilliseconds == timeOfDayMilliseconds
      && fix.mode.rawValue == mode
      && abs(coordinate.latitude - latitude) <= 1e-6
      && abs(coordinate.longitude - longitude) <= 1e-6
  }
}

/// The libgps path against `Tests/Fixtures/gpsd/gpsd-3.22/*.chk`: each corpus log goes through
/// a real gpsd 3.22 and libgps, and every timed 2D/3D TPV of gpsd's own regression output must
/// come out as a fix with the same time of day, mode and position. (gpsd 3.22 shifts pre-2017
/// dates by 1024 weeks, so dates are not compared; see Tests/Fixtures/gpsd/PROVENANCE.md.)
@Suite(
  .serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(if: Products.gpsdCorpus != nil, "Tests/Fixtures/gpsd is absent"))
struct GPSDCorpusTests {
  @Test(arguments: ["bu353s4.log", "cat-ms352.log", "quectel.log", "nmea-rtk.log"])
  func matchesGPSDsOwnOutput(log name: String) async throws {
    let corpus = try #require(Products.gpsdCorpus)
    let expected = try CheckTPV.load(
      corpus.appendingPathComponent("gpsd-3.22/\(name).chk"))
    try #require(!expected.isEmpty)
    let bytes = try Data(contentsOf: corpus.appendingPathComponent(name))
    let epochs = FakeReceiver.epochs(of: FakeReceiver.lines(of: [UInt8](bytes)))

    let rig = try await LiveRig.start()
    defer { rig.stop() }
    let source = GPSDSource(configuration: rig.configuration(bufferCapacity: 100_000))
    let fixes = Collector(source.fixes())
    try await rig.gpsd.waitForWatchers(1)
    try await rig.receiver.send(epochs: epochs, interval: .milliseconds(5))
    try await rig.receiver.endOfFile()
    let last = expected.last!
    await fixes.wait(timeout: .seconds(20)) { $0.contains { last.matches($0) } }
    let received = fixes.all
    let missing = expected.filter { tpv in !received.contains { tpv.matches($0) } }
    let timed = received.filter { $0.time != nil && $0.mode.hasPosition }
    // The count reaches Scripts/test.sh's summary.
    print(
      "gpsd corpus: \(name): \(expected.count - missing.count)/\(expected.count) TPVs of gpsd "
        + "3.22 matched through gpsd and libgps")
    #expect(
      missing.isEmpty,
      """
      \(name): \(missing.count) of \(expected.count) TPVs not matched \
      (first at \(missing.first?.timeOfDayMilliseconds ?? 0) ms); \
      received \(received.count) fixes, \(timed.count) timed 2D/3D, \
      first at \(timed.first?.timeOfDayMilliseconds ?? -1) ms
      """)
    fixes.cancel()
  }
}
