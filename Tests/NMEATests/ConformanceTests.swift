import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkTesting

/// Replays every log of gpsd's regression corpus and checks our fixes against gpsd's own output
/// (`Tests/Fixtures/gpsd/*.log.chk`), per the rule in its PROVENANCE.md: for every TPV with
/// mode >= 2 and a time and position, we must have produced a fix with the same UTC time of day
/// (to the millisecond) and latitude/longitude within 1e-6 degrees.
@Suite struct ConformanceTests {
  struct Tally {
    var expected = 0
    var matched = 0
    var matchedWithPosition = 0
    var misses: [String] = []
  }

  static func check(log: URL, chk: URL) throws -> Tally {
    let decoding = try NMEALog.decodeFile(atPath: log.path)
    var byTime: [Int: [Fix]] = [:]
    for fix in decoding.fixes {
      if let tod = fix.timeOfDayMilliseconds, fix.coordinate != nil {
        byTime[tod, default: []].append(fix)
      }
    }
    var tally = Tally()
    let text = String(decoding: try Data(contentsOf: chk), as: UTF8.self)
    // "\r\n" is one Character in Swift: split on every newline character.
    for line in text.split(whereSeparator: \.isNewline) {
      guard line.hasPrefix("{\"class\":\"TPV\"") else { continue }
      guard
        let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
        let mode = object["mode"] as? Int, mode >= 2, let time = object["time"] as? String,
        let lat = object["lat"] as? Double, let lon = object["lon"] as? Double,
        let instant = Timestamp.parse(time)
      else { continue }
      tally.expected += 1
      let ms = Int(Timestamp.milliseconds(instant) % 86_400_000)
      let candidates = byTime[ms] ?? []
      let hits = candidates.filter {
        abs($0.coordinate!.latitude - lat) <= 1e-6 && abs($0.coordinate!.longitude - lon) <= 1e-6
      }
      if !hits.isEmpty {
        tally.matched += 1
        if hits.contains(where: { $0.mode.hasPosition }) { tally.matchedWithPosition += 1 }
      } else if tally.misses.count < 3 {
        tally.misses.append("\(log.lastPathComponent) \(time) \(lat) \(lon)")
      }
    }
    return tally
  }

  /// Logs in which gpsd never reports a fix (the corpus table's "fix?" column says no).
  static let logsWithoutFix = [
    "eXplorist110.log", "holux-gm-210.log", "skytraq.log", "ublox-lea-5q.log", "tn200.log",
    "skytraq-err.log", "hp58534a.log",
  ]

  @Test(
    .enabled(if: Products.gpsdCorpus != nil, "Tests/Fixtures/gpsd is absent"),
    arguments: logsWithoutFix)
  func logsWithoutAFixGiveNoUsableFix(name: String) throws {
    let corpus = try #require(Products.gpsdCorpus)
    let decoding = try NMEALog.decodeFile(atPath: corpus.appendingPathComponent(name).path)
    #expect(decoding.statistics.lines > 0)
    #expect(decoding.fixes.filter(\.isUsable).isEmpty)
  }

  /// Accept/reject decisions against the corpus manifest: per log, the sentences with a valid
  /// checksum (after restarting at the last `$`/`!`) and the lines that are not such sentences.
  @Test(.enabled(if: Products.gpsdCorpus != nil, "Tests/Fixtures/gpsd is absent"))
  func acceptedSentencesMatchTheManifest() throws {
    let corpus = try #require(Products.gpsdCorpus)
    let manifest = try #require(
      try JSONSerialization.jsonObject(
        with: Data(contentsOf: corpus.appendingPathComponent("manifest.json"))) as? [[String: Any]])
    #expect(manifest.count >= 80)
    var accepted = 0
    for entry in manifest {
      let name = try #require(entry["file"] as? String)
      let statistics = try NMEALog.decodeFile(atPath: corpus.appendingPathComponent(name).path)
        .statistics
      let valid = entry["sentences_valid_checksum"] as? Int ?? -1
      let rejected =
        (entry["bad_checksum"] as? Int ?? 0) + (entry["no_checksum"] as? Int ?? 0)
        + (entry["non_nmea_lines"] as? Int ?? 0)
      #expect(statistics.sentences == valid, "\(name): sentences")
      #expect(statistics.rejectedLines == rejected, "\(name): rejected lines")
      accepted += statistics.sentences
    }
    print("manifest: \(accepted) sentences accepted over \(manifest.count) logs")
    #expect(accepted > 10_000, "the manifest's logs hold more than 10,000 valid sentences")
  }

  @Test(.enabled(if: Products.gpsdCorpus != nil, "Tests/Fixtures/gpsd is absent"))
  func corpusPositionsMatchGpsd() throws {
    let corpus = try #require(Products.gpsdCorpus)
    let logs = try FileManager.default.contentsOfDirectory(atPath: corpus.path)
      .filter { $0.hasSuffix(".log") }.sorted()
    #expect(logs.count >= 80)
    var total = Tally()
    for name in logs {
      let log = corpus.appendingPathComponent(name)
      let chk = corpus.appendingPathComponent(name + ".chk")
      guard FileManager.default.fileExists(atPath: chk.path) else { continue }
      let tally = try Self.check(log: log, chk: chk)
      total.expected += tally.expected
      total.matched += tally.matched
      total.matchedWithPosition += tally.matchedWithPosition
      total.misses += tally.misses
      if tally.matched < tally.expected {
        print("  \(name): \(tally.matched)/\(tally.expected)")
      }
    }
    let ratio = Double(total.matchedWithPosition) / Double(max(total.expected, 1))
    print(
      "conformance: \(total.matched)/\(total.expected) gpsd TPVs matched "
        + "(\(String(format: "%.2f", ratio * 100)) %), \(total.matchedWithPosition) of them with our mode >= 2"
    )
    for miss in total.misses.prefix(20) { print("  miss: \(miss)") }
    #expect(total.expected > 5000)
    #expect(ratio >= 0.995)
  }
}
