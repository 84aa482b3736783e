import Foundation
import Testing
import WaymarkCore

@testable import Waymark

/// `LocationDelivery`, the state machine inside `LocationManager`: each transition of its
/// diagram, on fix time alone.
@Suite struct LocationDeliveryTests {
  @Test func stoppedHoldsEveryLocationAndStartingMakesTheNextOneTheFirst() {
    var delivery = LocationDelivery()
    delivery.distanceFilter = 100
    #expect(!delivery.isUpdating)
    #expect(delivery.take(fix(0, at: 0), reduced: false) == .held(Location(fix(0, at: 0))!))
    delivery.start()
    #expect(delivery.isUpdating)
    #expect(delivery.phase == .afterGap(lastReducedDelivery: nil))
    // The first location goes out although it is within the filter of nothing.
    #expect(delivery.take(fix(10, at: 1), reduced: false) == .delivered(Location(fix(10, at: 1))!))
    // Then the filter holds what is closer than 100 m to the last delivered one …
    #expect(delivery.take(fix(60, at: 2), reduced: false) == .held(Location(fix(60, at: 2))!))
    // … and lets through what is not (positive control).
    #expect(
      delivery.take(fix(120, at: 3), reduced: false) == .delivered(Location(fix(120, at: 3))!))
    delivery.stop()
    #expect(delivery.phase == .stopped(lastReducedDelivery: nil))
    delivery.start()
    #expect(
      delivery.take(fix(121, at: 4), reduced: false) == .delivered(Location(fix(121, at: 4))!))
  }

  @Test func aGapOfFixTimeOrANoFixMakesTheNextLocationTheFirst() {
    var delivery = LocationDelivery()
    delivery.distanceFilter = 100
    delivery.gapInterval = 10
    delivery.start()
    #expect(delivery.take(fix(0, at: 0), reduced: false) == .delivered(Location(fix(0, at: 0))!))
    #expect(delivery.take(fix(5, at: 10), reduced: false) == .held(Location(fix(5, at: 10))!))
    // 10.5 s of fix time after the last usable fix: a gap, so 5 m is enough.
    #expect(
      delivery.take(fix(6, at: 20.5), reduced: false) == .delivered(Location(fix(6, at: 20.5))!))
    let noFix = Fix(time: t0.addingTimeInterval(21), mode: .noFix)
    #expect(delivery.take(noFix, reduced: false) == .unusable)
    #expect(delivery.phase == .afterGap(lastReducedDelivery: nil))
    #expect(delivery.take(fix(7, at: 22), reduced: false) == .delivered(Location(fix(7, at: 22))!))
  }

  @Test func accuracyAndTheReducedIntervalHoldLocationsAcrossGapsAndRestarts() {
    var delivery = LocationDelivery()
    delivery.maximumHorizontalAccuracy = 20
    delivery.reducedAccuracy = ReducedAccuracy(gridMeters: 5000, minimumInterval: 60)
    delivery.start()
    #expect(delivery.take(fix(0, at: 0, accuracy: 30), reduced: true) == .inaccurate)
    #expect(delivery.take(fix(0, at: 1, accuracy: nil), reduced: true) == .inaccurate)
    guard case .delivered = delivery.take(fix(0, at: 2), reduced: true) else {
      Issue.record("the first reduced location did not go out")
      return
    }
    #expect(delivery.phase.lastReducedDelivery == t0.addingTimeInterval(2))
    delivery.stop()
    delivery.start()
    // Within the minute of the last reduced delivery: held, even as the first after a start.
    #expect(delivery.take(fix(0, at: 30), reduced: true).location != nil)
    guard case .held = delivery.take(fix(0, at: 31), reduced: true) else {
      Issue.record("the reduced interval did not hold a location")
      return
    }
    guard case .delivered = delivery.take(fix(0, at: 62), reduced: true) else {
      Issue.record("a reduced location a minute later did not go out")
      return
    }
  }

  @Test func theWatchdogReportsStaleOnceUntilTheNextUsableFix() {
    var delivery = LocationDelivery()
    _ = delivery.take(fix(0, at: 0), reduced: false)
    let first = delivery.checkStale(previousCount: 0)
    #expect(first == (1, false))  // a fix came since: not stale
    #expect(delivery.checkStale(previousCount: 1) == (1, true))
    #expect(delivery.checkStale(previousCount: 1) == (1, false))  // said once
    _ = delivery.take(fix(0, at: 1), reduced: false)
    #expect(!delivery.isStale)
    #expect(delivery.checkStale(previousCount: 2) == (2, true))
  }
}
