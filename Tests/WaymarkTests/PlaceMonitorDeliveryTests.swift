import Foundation
import Testing
import Waymark
import WaymarkCore
import WaymarkNotifications

private final class Recorder: PlaceMonitorDelegate {
  let events = Locked<[PlaceEvent]>([])

  func placeMonitor(_ monitor: PlaceMonitor, didArriveAt arrival: PlaceEvent.Arrival) {
    events.withLock { $0.append(.arrival(arrival)) }
  }

  func placeMonitor(_ monitor: PlaceMonitor, didDepartFrom departure: PlaceEvent.Departure) {
    events.withLock { $0.append(.departure(departure)) }
  }
}

private final class Sentinel: Sendable {}

/// Streams, delegate and NotificationCenter: one source, same events, leak-free observation.
@Suite struct PlaceMonitorDeliveryTests {
  static let place = Fixture.place("home", at: Fixture.origin)

  /// Arrive, stay, leave, come back: arrival, departure, arrival.
  static func walk() -> [Location] {
    var walk = Walk(
      start: "2026-11-29T10:00:00.000Z", at: Fixture.origin.offset(by: 400, bearingDegrees: 0))
    walk.move(to: Fixture.origin, speed: 5)
    walk.stay(seconds: 30)
    walk.move(to: Fixture.origin.offset(by: 400, bearingDegrees: 0), speed: 5)
    walk.move(to: Fixture.origin, speed: 5)
    return walk.locations
  }

  @Test func streamsDelegateAndNotificationsAgree() async {
    let center = NotificationCenter()
    let monitor = PlaceMonitor(places: [Self.place], notificationCenter: center)
    let recorder = Recorder()
    monitor.delegate = recorder
    let observed = Locked<[PlaceEvent]>([])
    let token = monitor.observeEvents { event in observed.withLock { $0.append(event) } }
    let first = monitor.events
    let second = monitor.events

    let returned = Self.walk().flatMap { monitor.process($0) }
    monitor.finish()

    var streamed: [PlaceEvent] = []
    for await event in first { streamed.append(event) }
    var streamedAgain: [PlaceEvent] = []
    for await event in second { streamedAgain.append(event) }
    #expect(returned.map(\.className) == ["ARRIVAL", "DEPARTURE", "ARRIVAL"])
    #expect(streamed == returned)
    #expect(streamedAgain == returned)
    #expect(recorder.events.withLock { $0 } == returned)
    #expect(observed.withLock { $0 } == returned)
    #expect(token.isActive)
  }

  @Test func notificationsCarryTheDocumentedUserInfo() {
    let center = NotificationCenter()
    let monitor = PlaceMonitor(places: [Self.place], notificationCenter: center)
    let names = Locked<[String]>([])
    let observer = center.addObserver(forName: nil, object: monitor, queue: nil) { note in
      let id = note.userInfo?[PlaceNotificationKey.placeID] as? String ?? "?"
      let event = note.userInfo?[PlaceNotificationKey.event] as? PlaceEvent
      names.withLock { $0.append("\(note.name.rawValue) \(id) \(event?.className ?? "?")") }
    }
    defer { center.removeObserver(observer) }
    for location in Self.walk() { monitor.process(location) }
    #expect(
      names.withLock { $0 } == [
        "WaymarkPlaceMonitorDidArrive home ARRIVAL", "WaymarkPlaceMonitorDidDepart home DEPARTURE",
        "WaymarkPlaceMonitorDidArrive home ARRIVAL",
      ])
  }

  /// Once the token is released, nothing is delivered and the center holds nothing of the
  /// handler (what it captured is deallocated).
  @Test func releasedTokenStopsDeliveryAndRetainsNothing() {
    let center = NotificationCenter()
    let monitor = PlaceMonitor(places: [Self.place], notificationCenter: center)
    let count = Locked(0)
    weak var weakSentinel: Sentinel?
    let locations = Self.walk()
    let split = locations.firstIndex { !monitor.process($0).isEmpty }
    #expect(split != nil)  // the first arrival happened before anyone observed

    var token: PlaceEventObservation?
    do {
      let sentinel = Sentinel()
      weakSentinel = sentinel
      token = monitor.observeEvents { _ in
        _ = sentinel
        count.withLock { $0 += 1 }
      }
    }
    #expect(weakSentinel != nil, "the registered handler keeps its captures alive")
    var index = split! + 1
    while count.withLock({ $0 }) == 0, index < locations.count {
      monitor.process(locations[index])
      index += 1
    }
    #expect(count.withLock { $0 } == 1, "the departure reached the observer")

    token = nil
    #expect(token == nil)
    #expect(weakSentinel == nil, "the center released the handler")
    let later = locations[index...].flatMap { monitor.process($0) }
    #expect(later.map(\.className) == ["ARRIVAL"])
    #expect(count.withLock { $0 } == 1, "no delivery after the token is gone")
  }

  @Test func cancelledTokenStopsDelivery() {
    let center = NotificationCenter()
    let monitor = PlaceMonitor(places: [Self.place], notificationCenter: center)
    let count = Locked(0)
    let token = monitor.observeEvents { _ in count.withLock { $0 += 1 } }
    token.cancel()
    token.cancel()
    #expect(!token.isActive)
    let events = Self.walk().flatMap { monitor.process($0) }
    #expect(events.count == 3)
    #expect(count.withLock { $0 } == 0)
  }

  /// An observer sees only its own monitor's events, even on a shared center.
  @Test func observationIsPerMonitor() {
    let center = NotificationCenter()
    let mine = PlaceMonitor(places: [Self.place], notificationCenter: center)
    let other = PlaceMonitor(places: [Self.place], notificationCenter: center)
    let count = Locked(0)
    let token = mine.observeEvents { _ in count.withLock { $0 += 1 } }
    for location in Self.walk() { other.process(location) }
    #expect(count.withLock { $0 } == 0)
    for location in Self.walk() { mine.process(location) }
    #expect(count.withLock { $0 } == 3)
    token.cancel()
  }

  @Test func withoutANotificationCenterTheTokenIsInactive() {
    let monitor = PlaceMonitor(places: [Self.place], notificationCenter: nil)
    let token = monitor.observeEvents { _ in }
    #expect(!token.isActive)
    #expect(Self.walk().flatMap { monitor.process($0) }.count == 3)
  }

  @Test func delegateIsHeldWeakly() {
    let monitor = PlaceMonitor(places: [Self.place], notificationCenter: nil)
    weak var weakRecorder: Recorder?
    do {
      let recorder = Recorder()
      weakRecorder = recorder
      monitor.delegate = recorder
      #expect(monitor.delegate != nil)
    }
    #expect(weakRecorder == nil)
    #expect(monitor.delegate == nil)
    #expect(Self.walk().flatMap { monitor.process($0) }.count == 3)
  }

  /// Fixes processed while readers, a delegate and state queries run on other tasks: every
  /// reader gets every event in order (run under `--sanitize=thread`).
  @Test func concurrentReadersAndQueries() async {
    let center = NotificationCenter()
    let monitor = PlaceMonitor(places: [Self.place], notificationCenter: center)
    let recorder = Recorder()
    monitor.delegate = recorder
    let observed = Locked(0)
    let token = monitor.observeEvents { _ in observed.withLock { $0 += 1 } }
    let streams = (0..<3).map { _ in monitor.events }
    let locations = (0..<20).flatMap { round in
      Self.walk().map { location in
        var location = location
        location.timestamp += Double(round) * 10_000
        return location
      }
    }
    let produced = await withTaskGroup(of: [PlaceEvent].self) { group in
      for stream in streams {
        group.addTask {
          var events: [PlaceEvent] = []
          for await event in stream { events.append(event) }
          return events
        }
      }
      group.addTask {
        for _ in 0..<200 {
          _ = monitor.snapshot()
          _ = monitor.state(for: "home")
          _ = monitor.openVisits()
          await Task.yield()
        }
        return []
      }
      let producer = Task {
        let events = locations.flatMap { monitor.process($0) }
        monitor.finish()
        return events
      }
      let produced = await producer.value
      var received: [[PlaceEvent]] = []
      for await events in group where !events.isEmpty { received.append(events) }
      #expect(received.count == 3)
      #expect(received.allSatisfy { $0 == produced })
      return produced
    }
    // Round 1: arrival, departure, arrival; each later round starts 400 m away after a
    // 10,000 s gap, so it adds a `fix-loss` departure first.
    #expect(produced.count == 3 + 19 * 4)
    #expect(produced.filter { $0.reason.rule == "fix-loss" }.count == 19)
    #expect(recorder.events.withLock { $0 } == produced)
    #expect(observed.withLock { $0 } == produced.count)
    token.cancel()
  }
}

@Suite struct PlaceMonitorLifecycleTests {
  /// A whole stream fed with `process(_:) async`; events reach a stream subscriber.
  @Test func processesAnAsyncSequence() async {
    let monitor = PlaceMonitor(
      places: [PlaceMonitorDeliveryTests.place], notificationCenter: nil)
    let events = monitor.events
    let locations = PlaceMonitorDeliveryTests.walk()
    let source = AsyncStream<Location> { continuation in
      for location in locations { continuation.yield(location) }
      continuation.finish()
    }
    await monitor.process(source)
    monitor.finish()
    var received: [String] = []
    for await event in events { received.append(event.className) }
    #expect(received == ["ARRIVAL", "DEPARTURE", "ARRIVAL"])
  }

  /// Replacing the places keeps the open visit of a place that stays.
  @Test func setPlacesKeepsOpenVisits() {
    let home = PlaceMonitorDeliveryTests.place
    let monitor = PlaceMonitor(places: [home], notificationCenter: nil)
    var walk = Walk(start: "2026-11-29T10:00:00.000Z", at: home.coordinate)
    walk.stay(seconds: 10)
    let arrival = walk.locations.flatMap { monitor.process($0) }
    #expect(arrival.map(\.className) == ["ARRIVAL"])

    let shop = Fixture.place("shop", at: home.coordinate.offset(by: 5000, bearingDegrees: 0))
    monitor.setPlaces([shop, home])
    #expect(monitor.placeCount == 2)
    #expect(monitor.state(for: "home")?.isInside == true)
    walk.move(to: shop.coordinate, speed: 20)
    walk.stay(seconds: 10)
    let later = walk.locations.suffix(from: 10).flatMap { monitor.process($0) }
    #expect(later.map { "\($0.className) \($0.placeID)" } == ["DEPARTURE home", "ARRIVAL shop"])
    let lastInside = walk.locations.last { $0.coordinate.distance(to: home.coordinate) <= 100 }
    #expect(later.first?.time == lastInside?.timestamp)
    #expect(later.first.map { $0.time > walk.locations[9].timestamp } == true)
  }
}
