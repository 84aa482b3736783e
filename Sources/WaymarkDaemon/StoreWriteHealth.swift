/// Whether the daemon's writes to the store fail, so that a failing disk is logged once per
/// episode (not once per fix) and its end is logged too.
///
/// An episode starts at the first failed write and ends at the first write that succeeds
/// after it. Pure logic: the daemon feeds it every write's outcome and logs what it returns.
struct StoreWriteHealth {
  /// Failed writes since the episode began (0 when writes succeed).
  private(set) var failedAttempts = 0
  /// Episodes so far.
  private(set) var episodes = 0
  /// Whether an episode is going on.
  var isFailing: Bool { failedAttempts > 0 }

  /// Notes a failed write of `what` (such as "the DEPARTURE of 'home'").
  ///
  /// - Returns: the error line to log when this failure starts an episode, else `nil`.
  mutating func failed(_ what: String, _ error: any Error) -> String? {
    failedAttempts += 1
    guard failedAttempts == 1 else { return nil }
    episodes += 1
    return "store: cannot write \(what): \(error); holding what is not written (events, "
      + "track points) and trying again at each fix; this is logged once until writes succeed"
  }

  /// Notes a write that succeeded.
  ///
  /// - Parameter held: what is still held in memory, for the log line (such as "3 track
  ///   point(s) wait").
  /// - Returns: the notice to log when this success ends an episode, else `nil`.
  mutating func succeeded(held: String) -> String? {
    guard failedAttempts > 0 else { return nil }
    defer { failedAttempts = 0 }
    return "store: writes succeed again after \(failedAttempts) failed attempt(s); \(held)"
  }
}
