import FoundationEssentials
import WaymarkCore

extension Monitor {
  /// Opens or creates the monitor `name` over live locations, as `await CLMonitor(name)` does:
  /// its locations are those of ``LocationUpdate/liveUpdates(_:source:)`` (waymarkd when it
  /// answers, else gpsd, unless `source` says otherwise); updates without a location are
  /// left out.
  ///
  /// - Parameters:
  ///   - name: The monitor's name (see ``init(named:locations:directory:configuration:)``).
  ///   - source: Where locations come from (default: the daemon, else gpsd).
  ///   - directory: Where monitors are saved (default: `monitors` in the state directory).
  ///   - configuration: The detection defaults.
  /// - Throws: ``MonitorError`` when the name is refused, in use, or its file unusable.
  public init(
    named name: String, source: LiveSource = .automatic, directory: URL? = nil,
    configuration: PlaceMonitor.Configuration = PlaceMonitor.Configuration()
  ) async throws {
    let locations = LocationUpdate.liveUpdates(.default, source: source).compactMap {
      @Sendable update in update.location
    }
    try await self.init(
      named: name, locations: locations, directory: directory, configuration: configuration)
  }
}
