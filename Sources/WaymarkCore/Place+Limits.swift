extension Place {
  /// The largest radius (and exit radius) a place may have, metres: 100 km, as for a held
  /// monitor's circle. Larger circles are not places but regions, and a radius from outside
  /// (a places file, an MQTT command) beyond it is refused where it enters.
  public static let maximumRadiusMeters = 100_000.0
  /// The longest id or name a place may have, in UTF-8 bytes.
  public static let maximumTextBytes = 200

  /// Why `meters` cannot be a place's radius, or `nil` when it can: a number above 0 and at most
  /// ``maximumRadiusMeters`` (NaN and infinities are neither).
  public static func radiusProblem(_ meters: Double) -> String? {
    guard meters > 0, meters <= maximumRadiusMeters else {
      return "is not a number of metres above 0 and at most \(Int(saturating: maximumRadiusMeters))"
    }
    return nil
  }

  /// Why `text` cannot be a place's id or name (or another identifier that reaches logs,
  /// prompts and exports), or `nil` when it can: not empty, at most `maximumBytes` UTF-8 bytes,
  /// and no control, format, separator, surrogate or unassigned character (a newline would
  /// split a log or notify line; a bidirectional override would disguise a prompt).
  public static func textProblem(_ text: String, maximumBytes: Int = maximumTextBytes) -> String? {
    if text.isEmpty { return "is empty" }
    if text.utf8.count > maximumBytes { return "is longer than \(maximumBytes) bytes" }
    for scalar in text.unicodeScalars {
      // Printable ASCII (space to `~`) is of none of the refused categories: most names and
      // ids are nothing else, and skip the category lookup (a places file's hot path).
      if scalar.value >= 0x20 && scalar.value < 0x7F { continue }
      switch scalar.properties.generalCategory {
      case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned:
        return "contains a control character"
      default: continue
      }
    }
    return nil
  }
}
