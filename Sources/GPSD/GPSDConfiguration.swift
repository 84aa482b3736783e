/// Settings of a gpsd fix source.
public struct GPSDConfiguration: Sendable, Hashable {
  /// Where gpsd is, and which device to watch.
  public var endpoint: GPSDEndpoint
  /// When nothing arrives for half of this, the session sends gpsd a `?VERSION;` probe; when
  /// nothing arrives for all of it, gpsd is considered hung and the session reconnects.
  public var receiveTimeout: Duration
  /// Delays between reconnection attempts.
  public var reconnect: ReconnectPolicy
  /// How many fixes each subscriber may have waiting; when full, the oldest is dropped.
  public var bufferCapacity: Int
  /// How often the reader thread looks at its stop flag while waiting, which bounds how long
  /// cancelling takes.
  public var pollInterval: Duration
  /// Seed of the jitter generator.
  public var seed: UInt64

  /// Creates a configuration.
  public init(
    endpoint: GPSDEndpoint = GPSDEndpoint(),
    receiveTimeout: Duration = .seconds(10),
    reconnect: ReconnectPolicy = ReconnectPolicy(),
    bufferCapacity: Int = 64,
    pollInterval: Duration = .milliseconds(50),
    seed: UInt64 = 0x5741_594D_4152_4B00
  ) {
    self.endpoint = endpoint
    self.receiveTimeout = receiveTimeout
    self.reconnect = reconnect
    self.bufferCapacity = max(1, bufferCapacity)
    self.pollInterval = pollInterval
    self.seed = seed
  }
}
