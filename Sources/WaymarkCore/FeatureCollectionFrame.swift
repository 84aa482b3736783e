/// The frame of every GeoJSON `FeatureCollection` Waymark writes (the places file, a track, the
/// visits): ``opening``, each feature on a line of its own after ``appendSeparator(to:)``, and
/// ``closing``.
///
/// ```
/// {"type":"FeatureCollection","features":[
/// {"type":"Feature",…},
/// {"type":"Feature",…}
/// ]}
/// ```
public struct FeatureCollectionFrame: Sendable {
  /// `{"type":"FeatureCollection","features":[`, without a newline.
  public static let opening: [UInt8] = Array(#"{"type":"FeatureCollection","features":["#.utf8)
  /// A newline, `]}` and a newline: the end of the array, of the object and of the file.
  public static let closing: [UInt8] = Array("\n]}\n".utf8)

  /// How many features have been separated so far.
  public private(set) var count = 0

  /// Creates the frame of a collection with no feature yet.
  public init() {}

  /// Appends what goes before the next feature: a newline before the first, a comma and a
  /// newline before each other one.
  public mutating func appendSeparator(to bytes: inout [UInt8]) {
    bytes.append(contentsOf: count == 0 ? [0x0A] : [0x2C, 0x0A])
    count += 1
  }
}
