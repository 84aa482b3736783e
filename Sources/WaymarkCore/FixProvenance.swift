/// Where a fix came from.
public enum FixProvenance: Sendable, Hashable {
  /// A receiver, through gpsd: the device path gpsd reported (for example `/dev/ttyACM0`).
  case device(String)
  /// A replayed log: the file path and the 1-based line of the sentence that closed the epoch.
  case file(path: String, line: Int)
  /// Produced by a simulator or a scripted test source, with its name.
  case simulated(String)
}
