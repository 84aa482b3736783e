/// Counts kept while decoding a log.
public struct NMEAStatistics: Sendable, Hashable {
  /// Lines read.
  public var lines = 0
  /// Empty lines.
  public var blankLines = 0
  /// `#` lines.
  public var commentLines = 0
  /// Sentences with a valid checksum, by type: `GGA`, `RMC`, …, proprietary ones by address
  /// (`PGRME`), encapsulated ones as `!` + address, unknown types by address.
  public var sentencesByType: [String: Int] = [:]
  /// Rejected lines by reason. `bad-field` counts sentences that were used but had an
  /// unreadable field (read as unknown).
  public var badLines: [BadLineKind: Int] = [:]
  /// Epochs with at least one position sentence (one fix each).
  public var epochs = 0
  /// Epochs whose fix has a 2D/3D position.
  public var fixesWithPosition = 0

  /// Creates empty statistics.
  public init() {}

  /// All accepted sentences.
  public var sentences: Int { sentencesByType.values.reduce(0, +) }

  /// All rejected lines (excluding `bad-field`, whose sentences were used).
  public var rejectedLines: Int {
    badLines.filter { $0.key != .malformedField }.values.reduce(0, +)
  }

  /// A multi-line summary for a person, with keys in a stable order.
  public var summary: String {
    var text = "lines: \(lines) (blank \(blankLines), comments \(commentLines))\n"
    let types = sentencesByType.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
    text += "sentences: \(sentences)" + (types.isEmpty ? "" : " (\(types.joined(separator: ", ")))")
    text += "\n"
    let bad = badLines.sorted { $0.key < $1.key }.map { "\($0.key.rawValue) \($0.value)" }
    text += "bad lines: \(rejectedLines)" + (bad.isEmpty ? "" : " (\(bad.joined(separator: ", ")))")
    text += "\n"
    text += "epochs: \(epochs) (with position \(fixesWithPosition))\n"
    return text
  }
}
