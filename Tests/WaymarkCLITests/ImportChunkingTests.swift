import Foundation
import Testing
import WaymarkProcess
import WaymarkTesting

@testable import WaymarkCLI

/// The import's readers take a file a chunk at a time: what they find must not depend on where
/// the chunks are cut (a cut inside a string, an escape, a tag or a row).
@Suite struct ImportChunkingTests {
  static let fixtures = Products.packageRoot.appendingPathComponent("Tests/Fixtures/import")

  /// Every element and every report of `bytes` fed in chunks of `size` (the whole at once for
  /// `nil`), as text, and how it ended.
  static func elements(_ bytes: [UInt8], chunk size: Int?) -> [String] {
    var found: [String] = []
    var stream = JSONElementStream()
    var offset = 0
    repeat {
      let end = min(bytes.count, offset + (size ?? bytes.count))
      stream.feed(
        bytes[offset..<end], { found.append("\($0.path) line \($0.line): \($0.value)") },
        { path, line, reason in found.append("\(path) line \(line): \(reason)") })
      offset = end
    } while offset < bytes.count
    return found + ["\(stream.ending)"]
  }

  static let hostile: [String] = [
    #"{"locations": [{"a": "x\"}]\\", "b": [1, {"c": "]}"}]}, 42, "s", {"d": 1}]}"#,
    #"[{"startTime": "2024", "k": "\u00e9\n"}, [1, 2], {}, {"#,
    #"{"x": {"locations": [1]}, "features": [{"type": "Feature"}], "rawSignals": ["#,
    "{\"a\"\n:\n[\n{\n}\n,\n{\"b\":\"\n\"}\n]\n}\n  \n",
  ]

  @Test(arguments: ["Records.json", "2024_APRIL.json", "Timeline.json", "places.geojson"])
  func aFixtureGivesTheSameElementsWhereverTheChunksAreCut(name: String) throws {
    let bytes = [UInt8](try Data(contentsOf: Self.fixtures.appendingPathComponent(name)))
    let whole = Self.elements(bytes, chunk: nil)
    #expect(whole.count > 3)
    #expect(whole.last == "complete")
    for size in [1, 2, 7, 64, 1000] {
      #expect(Self.elements(bytes, chunk: size) == whole, "chunks of \(size)")
    }
  }

  @Test(arguments: hostile)
  func brokenJSONGivesTheSameElementsWhereverTheChunksAreCut(text: String) {
    let bytes = Array(text.utf8)
    let whole = Self.elements(bytes, chunk: nil)
    for size in 1...9 {
      #expect(Self.elements(bytes, chunk: size) == whole, "chunks of \(size)")
    }
  }

  /// The points and reports of GPX or CSV `text` fed in chunks of `size`.
  static func points(_ text: String, gpx: Bool, chunk size: Int?) -> [String] {
    let batch = ImportBatch(path: "t", errors: OutputSink(descriptor: -1))
    let bytes = Array(text.utf8)
    var gpxReader = GPXTrack()
    var csvReader = CSVTrack()
    var offset = 0
    repeat {
      let end = min(bytes.count, offset + (size ?? bytes.count))
      if gpx {
        gpxReader.add(bytes[offset..<end], to: batch)
      } else {
        csvReader.add(bytes[offset..<end], to: batch)
      }
      offset = end
    } while offset < bytes.count
    var found = [String]()
    if gpx { gpxReader.finish(to: batch) } else { found.append("\(csvReader.finish(to: batch))") }
    batch.points.inOrder { point in
      found.append(
        "\(point.milliseconds) \(point.latitude) \(point.longitude) \(point.altitude) "
          + "\(point.accuracy) line \(point.line)")
    }
    return found + ["bad \(batch.badCount)"]
  }

  @Test func gpxAndCSVGiveTheSamePointsWhereverTheChunksAreCut() {
    let gpx = """
      <?xml version="1.0"?>
      <gpx><trk><trkseg>
      <trkpt lat="48.1" lon="11.5"><ele>500</ele><time>2024-03-05T08:00:00Z</time><hdop>1.2</hdop></trkpt>
      <x:trkpt lat='48.2' lon="11.6"><x:time>2024-03-05T08:00:01Z</x:time></x:trkpt>
      <trkpt lat="nan" lon="11.5"><time>2024-03-05T08:00:02Z</time></trkpt></trkseg><trkseg>
      <trkpt lat="48.3" lon="11.7"/>
      <trkpt lat="48.4"
        lon="11.8"><time>2024-03-05T07:59:00Z</time></trkpt>
      <trkpt lat="48.5" lon="11.9"><time>2024-03-05T08:10
      """
    let csv = """
      time;lat;lon;"ele"
      2024-03-05T08:00:00Z;48.1;11.5;500\r
      "2024-03-05T08:00:01Z";48.2;11.6;"5""01"

      2024-03-05T07:00:00Z;91;11.5;1
      1709625601;48.3
      1709625602;48.4;11.7
      """
    // Found by the import fuzzer (Fuzz/run-parsers.sh import): a `,/trkpt>` that is no closing
    // tag, read in two chunks, was taken for one.
    let fuzzed = #"""
      <gpx version="1.1"><trk><trkseg>
      <trkpt lat<"48.1" lon="11.5"><time>2024-03-05T08:00:00Z</time>,/trkpt>
      <trkpt lat="n/time></trkpt>
      </trkseg></trk></gpx>
      """#
    // Read whole: 3 points and 3 bad records; 1 bad record (no position); 3 points, 2 bad.
    for (text, isGPX, least) in [(gpx, true, 4), (fuzzed, true, 1), (csv, false, 5)] {
      let whole = Self.points(text, gpx: isGPX, chunk: nil)
      #expect(whole.count >= least, "\(whole)")
      #expect(whole.last != "bad 0", "\(whole)")
      for size in [1, 2, 3, 5, 8, 13, 21] {
        #expect(Self.points(text, gpx: isGPX, chunk: size) == whole, "chunks of \(size)")
      }
    }
  }
}
