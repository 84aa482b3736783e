/// waymarkd's socket could not be set up, reached, or understood.
public struct BrokerError: Error, Sendable, CustomStringConvertible {
  /// What went wrong.
  public var description: String

  package init(_ description: String) { self.description = description }
}
