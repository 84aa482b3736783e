/// Settings of a gpsd fix source.
public struct GPSDConfiguration: Sendable, Hashable {
  /// Where gpsd is, and which device to watch.
  public var endpoint: GPSDEndpoint
  /// When nothing arrives for half of this, the session sends gpsd a `?VERSION;` probe; when
  /// the probe stays unanswered for the other half, gpsd is considered hung and the session
  /// reconnects.
  public var receiveTimeout: Duration
  /// The longest wait before a probe while gpsd answers probes and sends nothing else (its
  /// receiver is silent): each answered probe doubles the wait, from half the receive timeout
  /// up to this, so that an idle session wakes rarely. Any other report resets the wait.
  public var maximumProbeInterval: Duration
  /// Delays between reconnection attempts.
  public var reconnect: ReconnectPolicy
  /// How many fixes each subscriber may have waiting; when full, the oldest is dropped.
  public var bufferCapacity: Int
  /// Seed of the jitter generator.
  public var seed: UInt64

  /// Creates a configuration.
  public init(
    endpoint: GPSDEndpoint = GPSDEndpoint(),
    receiveTimeout: Duration = .seconds(10),
    reconnect: ReconnectPolicy = ReconnectPolicy(),
    bufferCapacity: Int = 64,
    maximumProbeInterval: Duration = .seconds(600),
    seed: UInt64 = 0x5741_594D_4152_4B00
  ) {
    self.endpoint = endpoint
    self.receiveTimeout = receiveTimeout
    self.reconnect = reconnect
    self.bufferCapacity = max(1, bufferCapacity)
    self.maximumProbeInterval = max(receiveTimeout / 2, maximumProbeInterval)
    self.seed = seed
  }
}
