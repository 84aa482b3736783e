import FoundationEssentials
import Glibc
import WaymarkCore

/// Collects the sentences of one epoch (all sentences that share a UTC time of day) and turns
/// each finished epoch into a ``Fix``.
///
/// Sentences without a time (GSA, GSV, VTG) join the epoch that is open. An epoch is finished
/// when a sentence with another time arrives, or at the end of the input.
///
/// Dates: an epoch takes its date from an RMC or ZDA inside it; otherwise the last known date is
/// carried, and moved to the next day when the time of day falls back by more than 12 hours
/// (UTC midnight). Before any date is known, a given default date seeds the carry; without one,
/// fixes have a time of day but no `time`.
struct FixAssembler {
  let path: String
  private(set) var lastDate: UTCDate?
  /// Fixes emitted so far, and how many of them had a position.
  private(set) var epochs = 0
  private(set) var fixesWithPosition = 0
  private var lastTimeOfDay: Int?
  private var century: Int?
  private var epoch: Epoch?
  private var previousAltitude: (time: Date, altitude: Double)?
  private var satellitesInView: [Int: Int] = [:]
  /// Satellites in view over all talkers (the largest count of any signal per talker).
  private var visibleTotal: Int?

  init(path: String, defaultDate: UTCDate?) {
    self.path = path
    self.lastDate = defaultDate
    self.century = defaultDate.map { $0.year / 100 * 100 }
  }

  /// The century for two-digit RMC years, once known from ZDA or a default date.
  var knownCentury: Int? { century }

  /// Replaces the default date before any sentence has been seen (a `# Date:` header).
  mutating func seed(date: UTCDate) {
    guard lastTimeOfDay == nil, epoch == nil else { return }
    lastDate = date
    century = date.year / 100 * 100
  }

  private struct Epoch {
    var timeOfDay: Int
    var line: Int
    var hasPositionSentence = false
    var valid = false
    var latitude: Double?
    var longitude: Double?
    var positionRank = 0
    var ggaQuality: Int?
    var gsaFixType: Int?
    var modeLetter: UInt8?
    var date: UTCDate?
    var altitudeMSL: Double?
    var geoidSeparation: Double?
    var speed: Double?
    var track: Double?
    var hdop: Double?
    var vdop: Double?
    var pdop: Double?
    var satellitesUsed: Int?
    var gsaSatellites = 0
    var sawGSA = false
    /// The three errors of the epoch's GST that the fix uses (not the whole GST: the epoch is
    /// copied when it closes).
    var gstLatitudeError: Double?
    var gstLongitudeError: Double?
    var gstAltitudeError: Double?
  }

  /// Adds one sentence read at `line`; calls `emit` when it closes an epoch.
  mutating func add(_ sentence: NMEASentence, line: Int, emit: (consuming Fix) -> Void) {
    switch sentence {
    case .gga(let gga): add(gga: gga, line: line, emit: emit)
    case .rmc(let rmc): add(rmc: rmc, line: line, emit: emit)
    case .gns(let gns):
      guard let time = gns.timeOfDay else { return }
      openPosition(time, line: line, latitude: gns.latitude, longitude: gns.longitude, emit: emit)
      let valid = gns.modes.contains { $0 != UInt8(ascii: "N") && $0 != UInt8(ascii: "V") }
      position(latitude: gns.latitude, longitude: gns.longitude, valid: valid, rank: 2)
      if let letter = gns.modes.first(where: { $0 != UInt8(ascii: "N") }) {
        epoch!.modeLetter = letter
      }
      if valid, let altitude = gns.altitudeMSL {
        epoch!.altitudeMSL = altitude
      }
      if let separation = gns.geoidSeparation { epoch!.geoidSeparation = separation }
      if let hdop = gns.hdop { epoch!.hdop = hdop }
      if epoch!.satellitesUsed == nil, let used = gns.satellitesUsed {
        epoch!.satellitesUsed = used
      }
    case .gll(let gll):
      guard let time = gll.timeOfDay else { return }
      openPosition(time, line: line, latitude: gll.latitude, longitude: gll.longitude, emit: emit)
      let valid = gll.status == UInt8(ascii: "A") && gll.mode != UInt8(ascii: "N")
      position(latitude: gll.latitude, longitude: gll.longitude, valid: valid, rank: 1)
    case .vtg(let vtg):
      guard epoch != nil else { return }
      if let knots = vtg.speedKnots {
        epoch!.speed = knots * FixAssembler.metersPerSecondPerKnot
      } else if let kmh = vtg.speedKilometersPerHour {
        epoch!.speed = kmh / 3.6
      }
      if let course = vtg.courseTrue { epoch!.track = course }
    case .gsa(let gsa): add(gsa: gsa)
    case .gsv(let gsv): add(gsv: gsv)
    case .gst(let gst): add(gst: gst, line: line, emit: emit)
    case .zda(let zda):
      if let date = zda.date { century = date.year / 100 * 100 }
      guard let time = zda.timeOfDay else { return }
      open(time, line: line, emit: emit)
      if let date = zda.date { epoch!.date = date }
    case .txt, .proprietary, .encapsulated, .unsupported:
      return
    }
  }

  // The types of a usual log, each also added on its own: the decoder calls these directly for
  // them, without wrapping the sentence in an ``NMEASentence`` (a copy of it into the enum's
  // payload, and another out of it here).

  /// Adds a GGA read at `line`; calls `emit` when it closes an epoch.
  mutating func add(gga: GGA, line: Int, emit: (consuming Fix) -> Void) {
    guard let time = gga.timeOfDay else { return }
    openPosition(time, line: line, latitude: gga.latitude, longitude: gga.longitude, emit: emit)
    let valid = (gga.quality ?? 0) > 0
    position(latitude: gga.latitude, longitude: gga.longitude, valid: valid, rank: 4)
    epoch!.ggaQuality = gga.quality
    if valid, let altitude = gga.altitudeMSL {
      epoch!.altitudeMSL = altitude
    }
    if let separation = gga.geoidSeparation { epoch!.geoidSeparation = separation }
    if let hdop = gga.hdop { epoch!.hdop = hdop }
    if let used = gga.satellitesUsed { epoch!.satellitesUsed = used }
  }

  /// Adds an RMC read at `line`; calls `emit` when it closes an epoch.
  mutating func add(rmc: RMC, line: Int, emit: (consuming Fix) -> Void) {
    guard let time = rmc.timeOfDay else { return }
    openPosition(time, line: line, latitude: rmc.latitude, longitude: rmc.longitude, emit: emit)
    let valid =
      rmc.status == UInt8(ascii: "A")
      || (rmc.mode != nil && rmc.mode != UInt8(ascii: "N") && rmc.status != UInt8(ascii: "V"))
    position(latitude: rmc.latitude, longitude: rmc.longitude, valid: valid, rank: 3)
    if let mode = rmc.mode { epoch!.modeLetter = mode }
    if let date = rmc.date { epoch!.date = date }
    if let knots = rmc.speedKnots { epoch!.speed = knots * FixAssembler.metersPerSecondPerKnot }
    if let course = rmc.course { epoch!.track = course }
  }

  /// Adds a GSA to the open epoch.
  mutating func add(gsa: GSA) {
    guard epoch != nil else { return }
    epoch!.sawGSA = true
    if let type = gsa.fixType { epoch!.gsaFixType = max(epoch!.gsaFixType ?? 0, type) }
    epoch!.gsaSatellites += gsa.satelliteCount
    if let pdop = gsa.pdop { epoch!.pdop = pdop }
    if let hdop = gsa.hdop { epoch!.hdop = hdop }
    if let vdop = gsa.vdop { epoch!.vdop = vdop }
  }

  /// Counts the satellites in view of a GSV (carried from epoch to epoch).
  mutating func add(gsv: GSV) {
    if let count = gsv.satellitesInView, gsv.messageNumber == 1 || gsv.messageNumber == nil {
      let key = talkerKey &* 16 &+ (gsv.signalID ?? 0)
      if satellitesInView[key] != count {
        satellitesInView[key] = count
        var byTalker: [Int: Int] = [:]
        for (key, count) in satellitesInView {
          byTalker[key / 16] = max(byTalker[key / 16] ?? 0, count)
        }
        visibleTotal = byTalker.values.reduce(0, +)
      }
    }
  }

  /// Adds a GST read at `line`; calls `emit` when it closes an epoch.
  mutating func add(gst: GST, line: Int, emit: (consuming Fix) -> Void) {
    guard let time = gst.timeOfDay else { return }
    open(time, line: line, emit: emit)
    epoch!.gstLatitudeError = gst.latitudeError
    epoch!.gstLongitudeError = gst.longitudeError
    epoch!.gstAltitudeError = gst.altitudeError
  }

  /// The talker of the sentence being added, packed (set by the decoder before ``add``).
  var talkerKey = 0

  /// Knots to metres per second (1852 m / 3600 s).
  static let metersPerSecondPerKnot = NMEAWriter.metersPerSecondPerKnot

  private mutating func open(_ timeOfDay: Int, line: Int, emit: (consuming Fix) -> Void) {
    if epoch?.timeOfDay == timeOfDay { return }
    finish(emit: emit)
    epoch = Epoch(timeOfDay: timeOfDay, line: line)
  }

  /// Positions that differ by more than this (degrees) within one epoch are separate reports.
  static let samePositionTolerance = 1e-6

  /// Whether a position sentence for the open epoch reports a different position than the one
  /// the epoch already has. Marine multiplexers interleave sentences from several sources with
  /// the same time; gpsd reports each, and so do we: the epoch is split.
  private func conflicts(latitude: Double?, longitude: Double?) -> Bool {
    // Read through the optional (a `let` of the whole epoch would copy it).
    guard let latitude, let longitude, let current = epoch?.latitude,
      let currentLongitude = epoch?.longitude
    else { return false }
    return abs(current - latitude) > FixAssembler.samePositionTolerance
      || abs(currentLongitude - longitude) > FixAssembler.samePositionTolerance
  }

  private mutating func openPosition(
    _ timeOfDay: Int, line: Int, latitude: Double?, longitude: Double?,
    emit: (consuming Fix) -> Void
  ) {
    // Same time but a different position: a new epoch (after emitting this one).
    if epoch?.timeOfDay == timeOfDay, conflicts(latitude: latitude, longitude: longitude) {
      finish(emit: emit)
    }
    open(timeOfDay, line: line, emit: emit)
  }

  private mutating func position(latitude: Double?, longitude: Double?, valid: Bool, rank: Int) {
    epoch!.hasPositionSentence = true
    if valid { epoch!.valid = true }
    guard let latitude, let longitude else { return }
    // A valid sentence's position beats an invalid one's; among equals the richer type wins.
    let effectiveRank = rank + (valid ? 10 : 0)
    if effectiveRank >= epoch!.positionRank {
      epoch!.latitude = latitude
      epoch!.longitude = longitude
      epoch!.positionRank = effectiveRank
    }
  }

  /// Finishes the open epoch, if any, and emits its fix.
  mutating func finish(emit: (consuming Fix) -> Void) {
    guard let current = epoch.take() else { return }
    let date = advanceDate(current)
    guard current.hasPositionSentence else { return }
    // A `let` the fix is moved from (`emit` still copies it once: its provenance is retained
    // and released one more time than in a direct call; no spelling of it here avoids that).
    let fix = makeFix(current, date: date)
    epochs += 1
    if fix.mode.hasPosition, fix.coordinate != nil { fixesWithPosition += 1 }
    emit(consume fix)
  }

  /// The fix of the finished epoch `current`, dated `date`.
  @inline(__always)
  private mutating func makeFix(_ current: Epoch, date: UTCDate?) -> Fix {
    // Each value in a local, then the fix at once (its initializer is inlinable): setting the
    // members of a default fix one by one copied it twice more.
    let time = date?.instant(millisecondsOfDay: current.timeOfDay)
    var coordinate: Coordinate?
    if let latitude = current.latitude, let longitude = current.longitude {
      coordinate = Coordinate(latitude: latitude, longitude: longitude)
    }
    let mode: FixMode
    var status = FixStatus.unknown
    if current.valid {
      if let type = current.gsaFixType, type >= 2 {
        mode = type == 3 ? .threeDimensional : .twoDimensional
      } else {
        mode = current.altitudeMSL != nil ? .threeDimensional : .twoDimensional
      }
      status = FixAssembler.status(quality: current.ggaQuality, letter: current.modeLetter)
    } else {
      mode = .noFix
    }
    let altitudeMSL = mode == .threeDimensional ? current.altitudeMSL : nil
    var horizontalError: Double?
    var verticalError: Double?
    if mode.hasPosition {
      if let latitudeError = current.gstLatitudeError,
        let longitudeError = current.gstLongitudeError
      {
        horizontalError =
          (latitudeError * latitudeError + longitudeError * longitudeError).squareRoot()
        if mode == .threeDimensional { verticalError = current.gstAltitudeError }
      } else {
        let uere = ErrorModel.userEquivalentRangeError(for: status)
        horizontalError = current.hdop.map { $0 * uere }
        if mode == .threeDimensional { verticalError = current.vdop.map { $0 * uere } }
      }
    }
    var climb: Double?
    if mode == .threeDimensional, let time, let altitude = altitudeMSL {
      if let previous = previousAltitude {
        let seconds = time.timeIntervalSince(previous.time)
        if seconds > 0 && seconds <= 10 { climb = (altitude - previous.altitude) / seconds }
      }
      previousAltitude = (time, altitude)
    }
    // Fields beyond physical limits (an HDOP of 1e18, a speed of 1e300) are dropped here.
    return Fix(
      time: time, timeOfDayMilliseconds: current.timeOfDay, mode: mode, status: status,
      coordinate: coordinate, altitudeMSL: altitudeMSL, geoidSeparation: current.geoidSeparation,
      speed: current.speed, track: current.track, climb: climb,
      horizontalError: horizontalError, verticalError: verticalError, hdop: current.hdop,
      vdop: current.vdop, pdop: current.pdop,
      satellitesUsed: current.satellitesUsed ?? (current.sawGSA ? current.gsaSatellites : nil),
      satellitesVisible: visibleTotal, provenance: .file(path: path, line: current.line)
    ).withinLimits()
  }

  private mutating func advanceDate(_ current: Epoch) -> UTCDate? {
    var date: UTCDate?
    if let own = current.date {
      date = own
    } else if let carried = lastDate {
      date = carried
      if let last = lastTimeOfDay, current.timeOfDay + 43_200_000 < last { date = carried.next }
    }
    lastDate = date
    lastTimeOfDay = current.timeOfDay
    return date
  }

  static func status(quality: Int?, letter: UInt8?) -> FixStatus {
    switch quality {
    case 2: return .dgps
    case 3: return .precise
    case 4: return .rtkFixed
    case 5: return .rtkFloat
    case 6: return .deadReckoning
    case 7: return .timeOnly
    case 8: return .simulated
    default: break
    }
    switch letter {
    case UInt8(ascii: "D"): return .dgps
    case UInt8(ascii: "E"): return .deadReckoning
    case UInt8(ascii: "F"): return .rtkFloat
    case UInt8(ascii: "R"): return .rtkFixed
    case UInt8(ascii: "P"): return .precise
    case UInt8(ascii: "S"): return .simulated
    case UInt8(ascii: "M"): return .timeOnly
    default: return .gps
    }
  }
}
