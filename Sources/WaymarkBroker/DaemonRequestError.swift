/// Why a client's line is not a request (`DaemonRequest.decode(_:)`); the daemon answers it with
/// an `ERROR` object.
package struct DaemonRequestError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The message sent back.
  package var message: String

  /// Creates an error with `message`.
  package init(_ message: String) { self.message = message }

  package var description: String { message }
}
