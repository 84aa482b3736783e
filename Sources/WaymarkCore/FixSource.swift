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
  /// Whether the source's owner hands its fixes to the location manager itself, on the owner's
  /// thread (`LocationManager.ingest`), so that the manager starts no task to read it.
  package let isDriven: Bool

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
    self.isDriven = false
  }

  /// A source whose owner hands each fix and health report to the location manager on its own
  /// thread (`waymarkd`: gpsd's reader thread). The manager reads nothing from it and starts no
  /// task for it; its streams finish at once.
  package static func driven(name: String) -> FixSource {
    FixSource(drivenNamed: name)
  }

  private init(drivenNamed name: String) {
    self.name = name
    self.makeFixes = { AsyncStream { $0.finish() } }
    self.makeHealth = { AsyncStream { $0.finish() } }
    self.isDriven = true
  }

  /// Starts a run of the source and returns its fixes.
  public func fixes() -> AsyncStream<Fix> { makeFixes() }

  /// The source's health reports. Sources without a notion of health finish at once.
  public func health() -> AsyncStream<SourceHealth> { makeHealth() }
}
