/// Why a process could not be identified, or why the helper did not answer.
public struct IdentifyFailure: Error, Sendable, CustomStringConvertible {
  /// What went wrong, in words (the text may hold a path: escape it before a terminal).
  public var description: String

  /// Creates a failure that says `description`.
  public init(_ description: String) { self.description = description }
}
