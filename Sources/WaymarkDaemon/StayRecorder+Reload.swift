import FoundationEssentials
import Waymark
import WaymarkCore
import WaymarkDaemonConfiguration
import WaymarkPipeline
import WaymarkStore

extension StayRecorder {
  /// The stay recorder after a reload (SIGHUP) from `old` to `next`: the stay keys are
  /// `stays`, `visit-min-duration` and `save-interval-inside`.
  ///
  /// - Unchanged keys: `recorder` itself, untouched.
  /// - `stays = off`: the open stay is saved as it is (as at a stop) and recording ends; it
  ///   stays open in the store, and `stays = on` later resumes it.
  /// - `stays = on`, or another setting: the open stay is saved, then a recorder with the new
  ///   settings resumes it from the store, as after a restart: one stay, not two. A stay still
  ///   being recognised (shorter than the minimum yet) starts again from the next fixes.
  ///
  /// A configuration that does not load never gets here (the daemon keeps the running one and
  /// logs why); a store that cannot be read keeps `recorder` and logs an error.
  static func reloaded(
    _ recorder: StayRecorder?, from old: DaemonConfiguration, to next: DaemonConfiguration,
    database: Database, places: StayPlaces, log: DaemonLog
  ) -> StayRecorder? {
    guard
      old.recordsStays != next.recordsStays || old.stays != next.stays
        || old.saveIntervalInsideSeconds != next.saveIntervalInsideSeconds
    else { return recorder }
    do {
      try recorder?.save()
    } catch {
      log.error("store: cannot save the open stay: \(error)")
    }
    guard next.recordsStays else {
      if recorder != nil { log.notice("stay recording off") }
      return nil
    }
    do {
      let resumed = try StayRecorder(
        database: database, places: places, configuration: next.stays, source: "waymarkd",
        resumes: true, saveIntervalSeconds: next.saveIntervalInsideSeconds)
      log.notice(
        "stay recording on: stays of \(Int(saturating: next.stays.minimumDurationSeconds)) s or more"
      )
      return resumed
    } catch {
      log.error("store: cannot read the open stay, keeping the stay settings: \(error)")
      return recorder
    }
  }
}
