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
/// cannot be read is bad, named by its line.
enum CSVTrack {
  /// Adds the points of `text` (a whole CSV file) to `batch`.
  ///
  /// - Returns: `false` when the header names no time, latitude or longitude column.
  static func add(_ text: [UInt8], to batch: ImportBatch) -> Bool {
    var lines = text.split(separator: 0x0A, omittingEmptySubsequences: false).makeIterator()
    var lineNumber = 0
    var header: ArraySlice<UInt8>?
    while let line = lines.next() {
      lineNumber += 1
      if !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) {
        header = line
        break
      }
    }
    guard let header else { return false }
    let separator = [UInt8(ascii: ","), UInt8(ascii: ";"), 0x09].max { a, b in
      header.count(where: { $0 == a }) < header.count(where: { $0 == b })
    }!
    let names = fields(header, separator: separator).map(normalized)
    func column(_ candidates: [String]) -> Int? { names.firstIndex(where: candidates.contains) }
    guard let time = column(["time", "timestamp", "datetime", "utc", "gpstime"]),
      let latitude = column(["lat", "latitude"]),
      let longitude = column(["lon", "lng", "long", "longitude"])
    else { return false }
    let altitude = column(["alt", "altitude", "ele", "elevation"])
    let accuracy = column(["accuracy", "acc", "hacc", "horizontalaccuracy"])
    let speed = column(["speed"])
    let course = column(["course", "bearing", "heading", "track"])
    while let line = lines.next() {
      lineNumber += 1
      if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
      let values = fields(line, separator: separator)
      func value(_ index: Int?) -> String? {
        guard let index, index < values.count else { return nil }
        let text = values[index]
        return text.isEmpty ? nil : text
      }
      guard values.count > max(time, latitude, longitude) else {
        batch.bad(line: lineNumber, "", "\(values.count) field(s), fewer than the header's")
        continue
      }
      batch.add(
        milliseconds: value(time).flatMap { ImportTime.milliseconds($0) },
        latitude: value(latitude).flatMap(Double.init),
        longitude: value(longitude).flatMap(Double.init),
        altitude: value(altitude).flatMap(Double.init),
        accuracy: value(accuracy).flatMap(Double.init),
        speed: value(speed).flatMap(Double.init), course: value(course).flatMap(Double.init),
        line: lineNumber, location: "")
    }
    return true
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
