/// Why a line of the location socket's protocol is not a message or a request: not JSON, not an
/// object, no `class`, a member its class requires missing or of the wrong type, or (read by
/// the daemon) a value out of its range.
public struct DaemonMessageError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What is wrong, naming the class and the member (the daemon sends it back in an `ERROR`).
  public var message: String

  /// Creates an error with `message`.
  public init(_ message: String) { self.message = message }

  public var description: String { message }
}
