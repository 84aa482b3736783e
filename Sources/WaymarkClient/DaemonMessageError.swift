/// Why a line from the daemon is not a message: not JSON, not an object, no `class`, or a
/// member its class requires missing or of the wrong type.
public struct DaemonMessageError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What is wrong, naming the class and the member.
  public var message: String

  /// Creates an error with `message`.
  public init(_ message: String) { self.message = message }

  public var description: String { message }
}
