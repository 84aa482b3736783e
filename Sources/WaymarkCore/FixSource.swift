/// A source of fixes: an NMEA replay, a gpsd session, or a scripted test source.
///
/// Sources are values. Each call to ``fixes()`` starts an independent run; ending the iteration
/// (or cancelling the task that iterates) stops that run.
///
/// ```swift
/// let source = FixSource(name: "two fixes") {
///   AsyncStream { c in c.yield(home); c.yield(office); c.finish() }
/// }
/// ```
public struct FixSource: Sendable {
  /// A name for logs and provenance.
  public let name: String
  private let makeFixes: @Sendable () -> AsyncStream<Fix>
  private let makeHealth: @Sendable () -> AsyncStream<SourceHealth>

  /// Creates a source from a factory of fix streams, and optionally of health streams.
  public init(
    name: String,
    health: @escaping @Sendable () -> AsyncStream<SourceHealth> = {
      AsyncStream { $0.finish() }
    },
    fixes: @escaping @Sendable () -> AsyncStream<Fix>
  ) {
    self.name = name
    self.makeFixes = fixes
    self.makeHealth = health
  }

  /// Starts a run of the source and returns its fixes.
  public func fixes() -> AsyncStream<Fix> { makeFixes() }

  /// The source's health reports. Sources without a notion of health finish at once.
  public func health() -> AsyncStream<SourceHealth> { makeHealth() }
}
