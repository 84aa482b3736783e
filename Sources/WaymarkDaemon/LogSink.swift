import Waymark
import WaymarkCore
import WaymarkPipeline

/// The daemon's log: each fix at debug level, each place event (not one recorded late) at
/// notice with the reason it fired, each stay that began or ended at info.
package final class LogSink: PreMonitorSink {
  private let log: DaemonLog
  private let context: PipelineContext

  /// A sink logging to `log`; `context` gives a place's name from its id.
  package init(log: DaemonLog, context: PipelineContext) {
    self.log = log
    self.context = context
  }

  package func willMonitor(_ fix: Fix) {
    guard log.isEnabled(.debug), let location = Location(fix) else { return }
    let accuracy = location.horizontalAccuracy.map { " ±\($0.fixed(1)) m" } ?? ""
    let coordinate = location.coordinate
    log.debug(
      "fix \(Timestamp.format(location.timestamp)) \(coordinate.latitude.fixed(7)),"
        + "\(coordinate.longitude.fixed(7))\(accuracy)")
  }

  package func receive(_ step: PipelineStep) {
    for outcome in step.places where !outcome.isLate { log.notice(describe(outcome.event)) }
    for event in step.stays {
      switch event {
      case .arrival:
        let place = event.stay.placeID == nil ? "no declared place" : "a declared place"
        log.info("stay: arrived, at \(place)")
      case .departure:
        log.info("stay: left after \(Int(saturating: event.stay.durationSeconds ?? 0)) s")
      }
    }
  }

  /// One line for `event`: the place, the time and why it fired.
  func describe(_ event: PlaceEvent) -> String {
    let name = context.placeName(of: event.placeID) ?? event.placeID
    switch event {
    case .arrival(let arrival):
      return "ARRIVAL at \(name) (\(event.placeID)) at \(Timestamp.format(arrival.time)): "
        + reasonText(arrival.reason)
    case .departure(let departure):
      return "DEPARTURE from \(name) (\(event.placeID)) at \(Timestamp.format(departure.time)) "
        + "after \(Int(saturating: departure.durationSeconds.rounded())) s: "
        + reasonText(departure.reason)
    }
  }

  private func reasonText(_ reason: EventReason) -> String {
    var text = "rule \(reason.rule), distance \(reason.distanceMeters.fixed(1)) m"
    if let accuracy = reason.horizontalAccuracyMeters {
      text += ", accuracy \(accuracy.fixed(1)) m"
    }
    text +=
      ", radii \(reason.enterRadiusMeters.fixed(1))/\(reason.exitRadiusMeters.fixed(1)) m, "
      + "\(reason.confirmations) confirmation(s)"
    return text
  }
}
