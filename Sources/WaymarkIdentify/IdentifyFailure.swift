/// Why a process could not be identified, or why the helper did not answer.
package struct IdentifyFailure: Error, Sendable, CustomStringConvertible {
  /// What went wrong, in words (the text may hold a path: escape it before a terminal).
  package var description: String

  /// Creates a failure that says `description`.
  package init(_ description: String) { self.description = description }
}
