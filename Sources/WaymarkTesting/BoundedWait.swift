/// Waits on async sequences with a bound: a test that waits for an element that never comes
/// fails after the bound, naming what it waited for, instead of hanging the run.
package enum BoundedWait {
  /// The bound passed before the element came.
  package struct Timeout: Error, CustomStringConvertible {
    /// What was waited for, and for how long.
    package var description: String
  }

  /// The first element of `sequence` that satisfies `predicate`, or `nil` when the sequence
  /// ends first; throws ``Timeout`` (with `what`) when neither happens within `timeout` (the
  /// iteration is then cancelled).
  package static func first<S: AsyncSequence & Sendable>(
    _ what: String, of sequence: S, within timeout: Duration = .seconds(20),
    where predicate: @escaping @Sendable (S.Element) -> Bool = { _ in true }
  ) async throws -> S.Element? where S.Element: Sendable {
    try await withThrowingTaskGroup(of: Outcome<S.Element>.self) { group in
      group.addTask {
        for try await element in sequence where predicate(element) { return .found(element) }
        return .ended
      }
      group.addTask {
        try await Task.sleep(for: timeout)
        return .timedOut
      }
      defer { group.cancelAll() }
      switch try await group.next() {
      case .found(let element)?: return element
      case .ended?, nil: return nil
      case .timedOut?: throw Timeout(description: "no \(what) within \(timeout)")
      }
    }
  }

  private enum Outcome<Element: Sendable>: Sendable {
    case found(Element)
    case ended
    case timedOut
  }
}
