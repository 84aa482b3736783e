import Waymark
import WaymarkProcess

/// The stay detector's options, declared and read once for `waymark replay --visits` and
/// `waymark import`.
extension CommandOption {
  /// `--visit-min-duration <s>`.
  static let visitMinDuration = CommandOption.value(
    "--visit-min-duration", "<s>",
    "Seconds a stay must last (default 120: a red light is no visit).")

  /// `--visit-max-gap <s>`.
  static let visitMaxGap = CommandOption.value(
    "--visit-max-gap", "<s>",
    """
    Longest gap in the fixes, seconds, a stay goes on across (default
    43200: a night); a longer gap ends the stay at its start.
    """)

  /// The stay detector's settings from `--visit-min-duration` and `--visit-max-gap`.
  ///
  /// - Throws: ``CommandError`` (usage) for a value out of range.
  static func stayConfiguration(_ parsed: ParsedArguments) throws -> StayDetector.Configuration {
    var configuration = StayDetector.Configuration()
    if let text = parsed.value("--visit-min-duration") {
      guard let seconds = Double(text), seconds >= 0, seconds <= 86_400 else {
        throw CommandError.usage(
          "'--visit-min-duration' expects seconds in [0, 86400], got '\(text)'.")
      }
      configuration.minimumDurationSeconds = seconds
    }
    if let text = parsed.value("--visit-max-gap") {
      guard let seconds = Double(text), seconds >= 0, seconds <= 604_800 else {
        throw CommandError.usage(
          "'--visit-max-gap' expects seconds in [0, 604800], got '\(text)'.")
      }
      configuration.maximumBridgedGapSeconds = seconds
    }
    return configuration
  }
}
