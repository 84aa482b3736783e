import NMEA

extension NMEALog {
  /// Decodes the log at `path`: the tests' shorthand for ``NMEALog/readFile(atPath:)`` then
  /// ``NMEALog/decode(_:path:defaultDate:)``.
  ///
  /// - Throws: ``NMEALogError/unreadable(path:reason:)`` when the file cannot be read.
  package static func decodeFile(atPath path: String, defaultDate: UTCDate? = nil) throws
    -> NMEADecoding
  {
    try decode(readFile(atPath: path), path: path, defaultDate: defaultDate)
  }
}
