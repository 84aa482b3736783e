/// The colours and sizes of `waymark map`, in one place (the Chromium test reads the colours
/// it looks for from here).
enum MapStyle {
  /// Map width, pixels.
  static let width = 960
  /// Smallest and largest map height, pixels (the height follows the drive's shape).
  static let minimumHeight = 480
  static let maximumHeight = 960
  /// Empty border around what is drawn, pixels.
  static let margin = 56

  /// The paper.
  static let background = "#f6f4ee"
  /// A place circle's inside and its outline.
  static let placeFill = "#cfe2f3"
  static let placeStroke = "#2b6cb0"
  /// The track line and its width, pixels.
  static let track = "#d62839"
  static let trackWidth = 3.0
  /// A visit's marker (at the place's centre).
  static let visit = "#1b1b1b"
  /// A pass-through's chord through the circle, and its marker.
  static let passThrough = "#f08c00"
  /// Labels.
  static let text = "#1b1b1b"
  static let mutedText = "#5b6470"

  /// `hex` (`#rrggbb`) as red, green, blue.
  static func rgb(_ hex: String) -> (red: UInt8, green: UInt8, blue: UInt8) {
    let value = UInt32(hex.dropFirst(), radix: 16) ?? 0
    return (UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF))
  }
}
