import FoundationEssentials
import WaymarkCore

/// One point of an imported file, as small as it can be while the file's points are sorted by
/// time (48 bytes, a plain value ``ImportSorter`` writes to its run files as it is; a ``Fix``
/// is several times that). Unknown values are NaN here and `nil` in the ``Fix`` it becomes.
struct ImportedPoint {
  /// Milliseconds since 1970, UTC.
  var milliseconds: Int64
  /// Degrees.
  var latitude: Double
  /// Degrees.
  var longitude: Double
  /// Metres above mean sea level, NaN when unknown.
  var altitude: Float
  /// Horizontal accuracy in metres (a 1-sigma radius), NaN when unknown.
  var accuracy: Float
  /// Metres per second, NaN when unknown.
  var speed: Float
  /// Degrees clockwise from true north, NaN when unknown.
  var course: Float
  /// The 1-based line of the record in the file.
  var line: Int32
  /// The order the point was read in: the tie-break between points of the same time, so the
  /// sort gives the same order on every run.
  var sequence: UInt32

  /// Whether `self` comes before `other`: by time, then in reading order.
  func precedes(_ other: ImportedPoint) -> Bool {
    milliseconds != other.milliseconds
      ? milliseconds < other.milliseconds : sequence < other.sequence
  }

  /// The fix this point is, read from `path`: 3D when the altitude is known, else 2D; its
  /// provenance the file and the line of its record.
  func fix(path: String) -> Fix {
    Fix(
      time: Timestamp.date(milliseconds: milliseconds),
      mode: altitude.isNaN ? .twoDimensional : .threeDimensional,
      coordinate: Coordinate(latitude: latitude, longitude: longitude),
      altitudeMSL: Self.known(altitude), speed: Self.known(speed), track: Self.known(course),
      horizontalError: Self.known(accuracy), provenance: .file(path: path, line: Int(line)))
  }

  private static func known(_ value: Float) -> Double? { value.isNaN ? nil : Double(value) }
}
