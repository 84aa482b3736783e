// libFuzzer entry point for `waymark import`'s readers: the bytes as a JSON export (the element
// stream and every Takeout and GeoJSON record reader), as GPX and as CSV, each read whole and in
// two chunks cut at a data-dependent point. Built by Fuzz/run-parsers.sh import with the
// readers' own files (Sources/WaymarkCLI/Import, without the importer that runs the pipeline);
// not part of the package.
import FoundationEssentials
import WaymarkCore

/// The elements, points and reports of `bytes` read as `format` in the chunks `cuts` make.
func readings(_ bytes: [UInt8], as format: ImportFormat, cut: Int) -> [String] {
  let batch = ImportBatch(path: "fuzz", errors: OutputSink(descriptor: -1))
  var found: [String] = []
  let chunks = [bytes[0..<cut], bytes[cut...]]
  switch format {
  case .gpx:
    var reader = GPXTrack()
    for chunk in chunks { reader.add(chunk, to: batch) }
    reader.finish(to: batch)
  case .csv:
    var reader = CSVTrack()
    for chunk in chunks { reader.add(chunk, to: batch) }
    found.append("header \(reader.finish(to: batch))")
  default:
    var stream = JSONElementStream()
    for chunk in chunks {
      stream.feed(
        chunk,
        { element in
          found.append("\(element.path) \(element.line)")
          if format == .geojson {
            GeoJSONTrack.add(element, to: batch)
          } else {
            TakeoutRecord.add(element, to: batch)
          }
        },
        { path, line, reason in found.append("\(path) \(line) \(reason)") })
    }
    found.append("\(stream.ending)")
  }
  var previous: ImportedPoint?
  batch.points.inOrder { point in
    precondition((-90...90).contains(point.latitude), "latitude \(point.latitude)")
    precondition((-180...180).contains(point.longitude), "longitude \(point.longitude)")
    precondition(
      Fix.Limits.isPlausibleTime(seconds1970: Double(point.milliseconds) / 1000),
      "time \(point.milliseconds)")
    if let previous { precondition(previous.precedes(point), "points out of order") }
    // The fix it becomes is within the limits, as every fix entering Waymark must be.
    let fix = point.fix(path: "fuzz")
    precondition(fix.withinLimits() == fix, "a fix outside Fix.Limits")
    found.append("\(point.milliseconds) \(point.latitude) \(point.longitude) \(point.line)")
    previous = point
  }
  return found + ["bad \(batch.badCount) skipped \(batch.skippedCount)"]
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImport(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let cut = bytes.isEmpty ? 0 : Int(bytes[bytes.count / 2]) % (bytes.count + 1)
  for format in ImportFormat.allCases {
    let whole = readings(bytes, as: format, cut: bytes.count)
    precondition(
      readings(bytes, as: format, cut: cut) == whole,
      "\(format): the cut at \(cut) changed the reading")
  }
  _ = ImportFormat.detect(path: "fuzz.json", head: bytes)
  return 0
}
