/// Where the broker keeps the monitors it holds for apps: the daemon's store, in waymarkd.
///
/// The broker checks who asks (an `always` grant with full accuracy) and parses the request;
/// the keeper enforces the bounds (``HeldMonitor/maximumConditions`` and the others) and
/// writes. Calls come from the broker's thread and the pipeline's; an implementation
/// serializes them.
package protocol HeldMonitorKeeper: AnyObject, Sendable {
  /// Adds (or replaces) `conditions` in the monitor `key`, creating it.
  ///
  /// - Returns: how many conditions the monitor has now.
  /// - Throws: ``HeldMonitor/Refusal`` when a bound would be passed or the store fails.
  func add(_ conditions: [HeldMonitor.Condition], to key: HeldMonitor.Key)
    throws(HeldMonitor.Refusal) -> Int

  /// Removes the conditions `identifiers` (unknown ones are ignored).
  ///
  /// - Returns: how many conditions the monitor has now.
  /// - Throws: ``HeldMonitor/Refusal`` when there is no such monitor or the store fails.
  func remove(_ identifiers: [String], from key: HeldMonitor.Key)
    throws(HeldMonitor.Refusal) -> Int

  /// Deletes the monitor `key` and its queue.
  ///
  /// - Throws: ``HeldMonitor/Refusal`` when there is no such monitor or the store fails.
  func delete(_ key: HeldMonitor.Key) throws(HeldMonitor.Refusal)

  /// Acknowledges the events up to `cursor` (they are deleted) and returns the page after it;
  /// an empty page when there is no such monitor (yet).
  ///
  /// - Throws: ``HeldMonitor/Refusal`` when the store fails.
  func events(of key: HeldMonitor.Key, after cursor: Int64) throws(HeldMonitor.Refusal)
    -> HeldMonitor.Backlog

  /// Acknowledges the events of `key` up to `sequence`: they are deleted (nothing happens for
  /// no such monitor).
  ///
  /// - Throws: ``HeldMonitor/Refusal`` when the store fails.
  func acknowledge(_ key: HeldMonitor.Key, through sequence: Int64)
    throws(HeldMonitor.Refusal)

  /// The client ids that hold `always` with full accuracy now: only their monitors are
  /// evaluated (a revoked app's monitors wait, without events, until it is granted again).
  func authorize(_ clientIDs: Set<String>)
}
