import WaymarkCore

/// The points of one imported file as its reader finds them, and its bad records.
///
/// A value outside ``Fix/Limits`` makes its record bad when it is the time or the position
/// (the point is not kept), and unknown when it is an altitude, an accuracy, a speed or a
/// course (the point is kept without it). Each bad record is reported on standard error with
/// the file and its position — `file:line: where: reason`, `where` a JSON path such as
/// `locations[12]` or a record kind such as `trkpt 7` — the first ``reportLimit`` of them, and
/// counted.
final class ImportBatch {
  /// The file as messages name it.
  let path: String
  /// The points, sorted by time in bounded memory.
  let points = ImportSorter()
  /// Bad records so far.
  private(set) var badCount = 0
  /// Records read without a point and without a fault (a Takeout activity record, a Timeline
  /// segment of another kind).
  var skippedCount = 0
  /// Where bad records are reported.
  private let errors: OutputSink
  private var sequence: UInt32 = 0

  /// Bad records reported one by one; the rest are counted in the summary.
  static let reportLimit = 100

  init(path: String, errors: OutputSink) {
    self.path = path
    self.errors = errors
  }

  /// Adds a point, or reports its record bad when its time or position is missing or out of
  /// range.
  ///
  /// - Parameters:
  ///   - location: where the record is, for the report (`locations[3]`).
  func add(
    milliseconds: Int64?, latitude: Double?, longitude: Double?, altitude: Double? = nil,
    accuracy: Double? = nil, speed: Double? = nil, course: Double? = nil, line: Int,
    location: @autoclosure () -> String
  ) {
    guard let milliseconds else {
      return bad(line: line, location(), "no time, or a time outside 1980-01-06...2200")
    }
    guard let latitude, let longitude else {
      return bad(line: line, location(), "no position")
    }
    guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
      return bad(line: line, location(), "position out of range")
    }
    points.append(
      ImportedPoint(
        milliseconds: milliseconds, latitude: latitude, longitude: longitude,
        altitude: Self.kept(altitude, Fix.Limits.altitudeMeters),
        accuracy: Self.kept(accuracy, Fix.Limits.errorMeters),
        speed: Self.kept(speed, Fix.Limits.speedMetersPerSecond),
        course: Self.kept(course, Fix.Limits.degrees), line: Int32(clamping: line),
        sequence: sequence))
    sequence &+= 1
  }

  /// Reports a bad record (the first ``reportLimit``) and counts it.
  func bad(line: Int, _ location: String, _ reason: String) {
    badCount += 1
    guard badCount <= Self.reportLimit else { return }
    let place = location.isEmpty ? "" : " \(location):"
    errors.line("waymark import: \(LogText.escaped(path)):\(line):\(place) \(reason)")
  }

  private static func kept(_ value: Double?, _ range: ClosedRange<Double>) -> Float {
    guard let value, range.contains(value) else { return .nan }
    return Float(value)
  }
}
