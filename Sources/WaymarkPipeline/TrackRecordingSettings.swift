import Waymark

/// How ``TrackRecorder`` thins, batches and keeps the track (`TrackRecorder.Settings`; the
/// `track-*` keys of waymarkd). A file of its own, free of the store, so that the daemon's
/// configuration parser builds without SQLite (Fuzz/run-parsers.sh).
package struct TrackRecordingSettings: Sendable, Hashable {
  /// Which fixes are kept, and where segments break.
  package var rule: TrackThinner.Rule
  /// Points per batch (default 100).
  package var batchPoints: Int
  /// Seconds of fix time a point may wait for its batch (default 30).
  package var batchSeconds: Double
  /// Days of track kept, counted back from the latest point; 0 keeps every point
  /// (default 30).
  package var retentionDays: Int

  /// Creates settings; the defaults are those of `waymarkd`.
  package init(
    rule: TrackThinner.Rule = TrackThinner.Rule(), batchPoints: Int = 100,
    batchSeconds: Double = 30, retentionDays: Int = 30
  ) {
    self.rule = rule
    self.batchPoints = batchPoints
    self.batchSeconds = batchSeconds
    self.retentionDays = retentionDays
  }
}
