import WaymarkCore

/// The points of a CSV track: a header row names the columns, each later row is a point.
///
/// Columns are found by name (any case; `_`, `-` and spaces ignored): time (`time`,
/// `timestamp`, `datetime`, `date_time`, `utc`, `gps_time`), latitude (`lat`, `latitude`),
/// longitude (`lon`, `lng`, `long`, `longitude`), and optionally altitude (`alt`, `altitude`,
/// `ele`, `elevation`), accuracy in metres (`accuracy`, `acc`, `hacc`,
/// `horizontal_accuracy`), speed in metres per second (`speed`) and course in degrees
/// (`course`, `bearing`, `heading`, `track`). The separator is the header's most frequent of
/// `,`, `;` and tab; a field may be quoted with `"` (`""` inside is one quote). A row that
/// cannot be read is bad, named by its line. The file is read a chunk at a time.
struct CSVTrack {
  /// The columns the header names.
  struct Columns {
    var time: Int
    var latitude: Int
    var longitude: Int
    var altitude: Int?
    var accuracy: Int?
    var speed: Int?
    var course: Int?
  }

  /// The bytes after the last complete line read so far.
  private var pending: [UInt8] = []
  private var lineNumber = 0
  private var separator: UInt8 = 0x2C
  /// Whether the header has been read (a non-blank line).
  private var sawHeader = false
  /// The columns, `nil` before the header or when it names no time, latitude or longitude.
  private var columns: Columns?

  /// Adds the rows that `chunk` completes to `batch`.
  mutating func add(_ chunk: ArraySlice<UInt8>, to batch: ImportBatch) {
    pending.append(contentsOf: chunk)
    guard let last = pending.lastIndex(of: 0x0A) else { return }
    for line in pending[0..<last].split(separator: 0x0A, omittingEmptySubsequences: false) {
      add(line: line, to: batch)
    }
    pending.removeFirst(last + 1)
  }

  /// Adds the last row (one without a line end).
  ///
  /// - Returns: `false` when the header names no time, latitude or longitude column.
  mutating func finish(to batch: ImportBatch) -> Bool {
    if !pending.isEmpty { add(line: pending[...], to: batch) }
    pending = []
    return columns != nil
  }

  private mutating func add(line: ArraySlice<UInt8>, to batch: ImportBatch) {
    lineNumber += 1
    if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { return }
    guard sawHeader else {
      sawHeader = true
      readHeader(line)
      return
    }
    guard let columns else { return }
    let values = Self.fields(line, separator: separator)
    func value(_ index: Int?) -> String? {
      guard let index, index < values.count else { return nil }
      let text = values[index]
      return text.isEmpty ? nil : text
    }
    guard values.count > max(columns.time, columns.latitude, columns.longitude) else {
      return batch.bad(line: lineNumber, "", "\(values.count) field(s), fewer than the header's")
    }
    batch.add(
      milliseconds: value(columns.time).flatMap { ImportTime.milliseconds($0) },
      latitude: value(columns.latitude).flatMap(Double.init),
      longitude: value(columns.longitude).flatMap(Double.init),
      altitude: value(columns.altitude).flatMap(Double.init),
      accuracy: value(columns.accuracy).flatMap(Double.init),
      speed: value(columns.speed).flatMap(Double.init),
      course: value(columns.course).flatMap(Double.init), line: lineNumber, location: "")
  }

  private mutating func readHeader(_ header: ArraySlice<UInt8>) {
    separator = [UInt8(ascii: ","), UInt8(ascii: ";"), 0x09].max { a, b in
      header.count(where: { $0 == a }) < header.count(where: { $0 == b })
    }!
    let names = Self.fields(header, separator: separator).map(Self.normalized)
    func column(_ candidates: [String]) -> Int? { names.firstIndex(where: candidates.contains) }
    guard let time = column(["time", "timestamp", "datetime", "utc", "gpstime"]),
      let latitude = column(["lat", "latitude"]),
      let longitude = column(["lon", "lng", "long", "longitude"])
    else { return }
    columns = Columns(
      time: time, latitude: latitude, longitude: longitude,
      altitude: column(["alt", "altitude", "ele", "elevation"]),
      accuracy: column(["accuracy", "acc", "hacc", "horizontalaccuracy"]),
      speed: column(["speed"]), course: column(["course", "bearing", "heading", "track"]))
  }

  /// A header name without case, `_`, `-` and spaces.
  private static func normalized(_ name: String) -> String {
    String(name.lowercased().filter { $0 != "_" && $0 != "-" && $0 != " " })
  }

  /// The fields of one row, unquoted and trimmed.
  static func fields(_ line: ArraySlice<UInt8>, separator: UInt8) -> [String] {
    var fields: [String] = []
    var field: [UInt8] = []
    var quoted = false
    var index = line.startIndex
    while index < line.endIndex {
      let byte = line[index]
      if quoted {
        if byte == 0x22 {
          if index + 1 < line.endIndex, line[index + 1] == 0x22 {
            field.append(0x22)
            index += 1
          } else {
            quoted = false
          }
        } else {
          field.append(byte)
        }
      } else if byte == 0x22 {
        quoted = true
      } else if byte == separator {
        fields.append(String(decoding: field, as: UTF8.self).trimmedWhitespace.description)
        field.removeAll(keepingCapacity: true)
      } else {
        field.append(byte)
      }
      index += 1
    }
    fields.append(String(decoding: field, as: UTF8.self).trimmedWhitespace.description)
    return fields
  }
}
