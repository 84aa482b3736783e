import FoundationEssentials
import Waymark
import WaymarkCore
import WaymarkStore

/// Finds stays in the fixes (``StayDetector``) and records them in the store: an arrival
/// inserts an open stay, a departure closes it, and while it is open its centre, accuracy,
/// fix count and newest fix inside are saved every ``saveIntervalSeconds`` of fix time. Used
/// by `waymarkd` and `waymark replay --store --visits`.
///
/// **Restarts.** A recorder that ``resumes`` continues the open stay of the store: fixes
/// inside it go on with it, and a departure closes the same row. So a daemon restarted (or
/// killed) in the middle of a stay records one stay, not two; a kill loses at most the last
/// ``saveIntervalSeconds`` of the stay's end.
///
/// A stay whose centre lies in a declared place names it (``Stay/placeID``).
///
/// Not thread-safe, and its writes block on the disk: one caller, on a thread of its own.
package final class StayRecorder {
  private var detector: StayDetector
  private let database: Database
  private let places: StayPlaces
  private let source: String
  /// The device whose stays these are (``StoreDevice``).
  private let device: String
  /// Seconds of fix time between saves of the open stay (`.infinity`: on arrival and
  /// departure only).
  package var saveIntervalSeconds: Double
  private var lastSave: Date?
  /// Stays inserted so far.
  package private(set) var inserted = 0
  /// Transactions written so far (a fix that wrote nothing leaves it as it was).
  package private(set) var writeCount = 0
  /// What a failed write left, written first by the next one.
  private var unwritten: [(Stay, Date)] = []

  /// Creates a recorder over `database`.
  ///
  /// - Parameters:
  ///   - places: where the declared places that name stays are found.
  ///   - device: the device whose stays are recorded (and resumed).
  ///   - resumes: continue the device's open stay in the store (the daemon); a replay starts
  ///     afresh, and recording its stays again finds their rows.
  /// - Throws: ``StoreError`` when the store cannot be read.
  package init(
    database: Database, places: StayPlaces, configuration: StayDetector.Configuration,
    source: String, device: String = StoreDevice.local, resumes: Bool,
    saveIntervalSeconds: Double = 5
  ) throws {
    self.database = database
    self.device = device
    self.places = places
    self.source = source
    self.saveIntervalSeconds = saveIntervalSeconds
    if resumes, let open = try database.read({ try StayRepository($0, device: device).open() }) {
      detector = StayDetector(
        resuming: open.stay, lastSeen: open.lastFix, configuration: configuration)
      lastSave = open.lastFix
    } else {
      detector = StayDetector(configuration: configuration)
    }
  }

  /// The stay the device is in, named, or `nil`.
  package var openStay: Stay? { detector.openStay.map(named) }

  /// The declared place `stay` names, as it is now; `nil` at no declared place.
  package func place(of stay: Stay) -> Place? {
    stay.placeID.flatMap(places.place)
  }

  /// Feeds one fix; records the stays it began or ended and returns them (named).
  ///
  /// - Throws: ``StoreError`` when a write fails (the detector has moved on: the stay is
  ///   written again at its next save or departure).
  @discardableResult
  package func process(_ fix: Fix) throws -> [StayDetector.Event] {
    guard let location = Location(fix) else { return [] }
    let events = detector.process(location).map { event -> StayDetector.Event in
      switch event {
      case .arrival(let stay): .arrival(named(stay))
      case .departure(let stay): .departure(named(stay))
      }
    }
    var writes = events.map { event in
      (event.stay, event.stay.departureDate ?? detector.lastFixInside ?? location.timestamp)
    }
    if events.isEmpty, let open = openStay, let last = detector.lastFixInside,
      lastSave.map({ last.timeIntervalSince($0) >= saveIntervalSeconds }) ?? true
    {
      writes.append((open, last))
    }
    try write(writes)
    if !writes.isEmpty, let last = detector.lastFixInside { lastSave = last }
    return events
  }

  /// Saves the open stay as it is (the daemon's periodic save and its stop).
  package func save() throws {
    if let open = openStay, let last = detector.lastFixInside {
      try write([(open, last)])
      lastSave = last
    }
  }

  /// Ends the input: records the stay the device had left, and the open one as it is.
  ///
  /// - Returns: the departure of the stay the device had left, if any (named).
  @discardableResult
  package func finish() throws -> [StayDetector.Event] {
    let events = detector.finish().map { StayDetector.Event.departure(named($0.stay)) }
    var writes = events.map { ($0.stay, $0.stay.departureDate ?? $0.stay.arrivalDate) }
    if let open = openStay, let last = detector.lastFixInside { writes.append((open, last)) }
    try write(writes)
    return events
  }

  /// Writes `writes` after those a failed write left, in one transaction. On failure they are
  /// all kept (the newest of each stay only) for the next write: a closed stay whose departure
  /// could not be written is not lost when the store is full for a while.
  private func write(_ writes: [(Stay, Date)]) throws {
    let all = Self.newestOfEachStay(unwritten + writes)
    guard !all.isEmpty else { return }
    do {
      let new = try database.write { connection in
        let repository = StayRepository(connection, device: device)
        return try all.reduce(0) { count, write in
          count + (try repository.record(write.0, lastFix: write.1) ? 1 : 0)
        }
      }
      unwritten = []
      inserted += new
      writeCount += 1
    } catch {
      unwritten = all
      throw error
    }
  }

  /// `writes` in order, with only the last write of each stay (stays are keyed by arrival).
  private static func newestOfEachStay(_ writes: [(Stay, Date)]) -> [(Stay, Date)] {
    var last: [Date: Int] = [:]
    for (index, write) in writes.enumerated() { last[write.0.arrivalDate] = index }
    return writes.enumerated().filter { last[$0.element.0.arrivalDate] == $0.offset }.map(\.element)
  }

  private func named(_ stay: Stay) -> Stay {
    var stay = stay
    stay.placeID = places.placeID(stay)
    stay.source = source
    return stay
  }
}
