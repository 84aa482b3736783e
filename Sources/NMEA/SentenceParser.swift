import WaymarkCore

/// Turns the fields of a framed sentence into a typed ``NMEASentence``.
///
/// Field numbers follow NMEA 0183 4.11; field 0 is the address. Optional NMEA 2.3/4.1 fields are
/// read when present. A non-empty field that cannot be read becomes `nil` and marks the sentence
/// as having a malformed field; the rest of the sentence is still used.
struct SentenceParser {
  private(set) var malformed = false
  /// The century to put in front of two-digit RMC years, learnt from ZDA or a given date.
  var century: Int?
  /// Whether to fill per-satellite lists (GSA PRNs, GSV satellites), which fix assembly does
  /// not need.
  var detailed: Bool

  init(detailed: Bool = true) {
    self.detailed = detailed
  }

  private mutating func check<T>(_ value: T?, _ fields: NMEAFields, _ index: Int) -> T? {
    if value == nil && !fields.isEmpty(index) { malformed = true }
    return value
  }

  private mutating func time(_ f: NMEAFields, _ i: Int) -> Int? { check(f.timeOfDay(i), f, i) }

  private mutating func angle(_ f: NMEAFields, _ i: Int) -> Double? {
    let value = f.angle(i, hemisphere: i + 1)
    if value == nil && !(f.isEmpty(i) && f.isEmpty(i + 1)) { malformed = true }
    return value
  }

  /// The types of a usual log, which the decoder reads straight into the fix assembler.
  enum CommonType {
    case gga, rmc, gsa, gsv, gst
  }

  /// The type of the `$` sentence `f` when ``parse(_:isEncapsulated:)`` would read it as one of
  /// the ``CommonType``s, else `nil`.
  static func commonType(_ f: NMEAFields) -> CommonType? {
    guard f.length(0) == 5 else { return nil }
    let a = f.base + Int(f.starts[0])
    if a[0] == UInt8(ascii: "P") { return nil }
    switch (a[2], a[3], a[4]) {
    case (0x47, 0x47, 0x41): return .gga
    case (0x52, 0x4D, 0x43): return .rmc
    case (0x47, 0x53, 0x41): return .gsa
    case (0x47, 0x53, 0x56): return .gsv
    case (0x47, 0x53, 0x54): return .gst
    default: return nil
    }
  }

  /// Starts a sentence read by one of the per-type functions (``gga(_:)`` and the others)
  /// instead of ``parse(_:isEncapsulated:)``, which does this itself.
  mutating func begin() {
    malformed = false
  }

  /// Parses `fields`, whose address was framed from a `$` (or `!` when `isEncapsulated`).
  mutating func parse(_ f: NMEAFields, isEncapsulated: Bool) -> NMEASentence {
    malformed = false
    if isEncapsulated { return .encapsulated(f.string(0) ?? "") }
    let addressLength = f.length(0)
    let a = f.base + Int(f.starts[0])
    if a[0] == UInt8(ascii: "P") { return .proprietary(f.string(0) ?? "") }
    guard addressLength == 5 else { return .unsupported(f.string(0) ?? "") }
    switch (a[2], a[3], a[4]) {
    case (0x47, 0x47, 0x41): return .gga(gga(f))  // GGA
    case (0x52, 0x4D, 0x43): return .rmc(rmc(f))  // RMC
    case (0x47, 0x4E, 0x53): return .gns(gns(f))  // GNS
    case (0x47, 0x4C, 0x4C): return .gll(gll(f))  // GLL
    case (0x56, 0x54, 0x47): return .vtg(vtg(f))  // VTG
    case (0x47, 0x53, 0x41): return .gsa(gsa(f))  // GSA
    case (0x47, 0x53, 0x56): return .gsv(gsv(f))  // GSV
    case (0x47, 0x53, 0x54): return .gst(gst(f))  // GST
    case (0x5A, 0x44, 0x41): return .zda(zda(f))  // ZDA
    case (0x54, 0x58, 0x54):  // TXT
      return .txt(
        TXT(
          messageCount: f.int(1), messageNumber: f.int(2), identifier: f.int(3),
          text: f.string(4)))
    default: return .unsupported(f.string(0) ?? "")
    }
  }

  mutating func gga(_ f: NMEAFields) -> GGA {
    GGA(
      timeOfDay: time(f, 1), latitude: angle(f, 2), longitude: angle(f, 4),
      quality: check(f.int(6), f, 6), satellitesUsed: f.int(7), hdop: f.double(8),
      altitudeMSL: check(f.double(9), f, 9), geoidSeparation: f.double(11),
      differentialAge: f.double(13), differentialStation: f.string(14))
  }

  mutating func rmc(_ f: NMEAFields) -> RMC {
    var variation = f.double(10)
    if let value = variation, f.character(11) == UInt8(ascii: "W") { variation = -value }
    return RMC(
      timeOfDay: time(f, 1), status: f.character(2), latitude: angle(f, 3),
      longitude: angle(f, 5), speedKnots: f.double(7), course: f.double(8),
      date: check(f.date(9, century: century), f, 9), magneticVariation: variation,
      mode: f.character(12), navigationalStatus: f.character(13))
  }

  mutating func gns(_ f: NMEAFields) -> GNS {
    var modes: [UInt8] = []
    if !f.isEmpty(6) {
      for index in Int(f.starts[6])..<Int(f.ends[6]) { modes.append(f.base[index]) }
    }
    return GNS(
      timeOfDay: time(f, 1), latitude: angle(f, 2), longitude: angle(f, 4), modes: modes,
      satellitesUsed: f.int(7), hdop: f.double(8), altitudeMSL: check(f.double(9), f, 9),
      geoidSeparation: f.double(10), navigationalStatus: f.character(13))
  }

  mutating func gll(_ f: NMEAFields) -> GLL {
    GLL(
      latitude: angle(f, 1), longitude: angle(f, 3), timeOfDay: time(f, 5),
      status: f.character(6), mode: f.character(7))
  }

  mutating func vtg(_ f: NMEAFields) -> VTG {
    // NMEA 2.0 and later tag each value with a letter (T, M, N, K); older receivers omit them.
    if f.count <= 5 || (f.character(2) != UInt8(ascii: "T") && f.character(4) != UInt8(ascii: "M"))
    {
      return VTG(
        courseTrue: f.double(1), courseMagnetic: f.double(2), speedKnots: f.double(3),
        speedKilometersPerHour: f.double(4), mode: nil)
    }
    return VTG(
      courseTrue: f.double(1), courseMagnetic: f.double(3), speedKnots: f.double(5),
      speedKilometersPerHour: f.double(7), mode: f.character(9))
  }

  mutating func gsa(_ f: NMEAFields) -> GSA {
    // Standard: 12 PRN fields, then PDOP, HDOP, VDOP and (NMEA 4.1) the system id. Some
    // receivers send more PRN fields; the DOPs are always the three numbers before the end or
    // before a trailing integer system id.
    var last = f.count - 1
    var systemID: Int?
    if f.count >= 19, let id = f.int(last), f.length(last) == 1 {
      systemID = id
      last -= 1
    }
    let dopStart = max(3, last - 2)
    var satellites: [Int] = []
    var satelliteCount = 0
    if dopStart > 3 {
      for index in 3..<dopStart where !f.isEmpty(index) {
        satelliteCount += 1
        if detailed, let prn = f.int(index) { satellites.append(prn) }
      }
    }
    return GSA(
      selectionMode: f.character(1), fixType: f.int(2), satellites: satellites,
      satelliteCount: satelliteCount,
      pdop: f.double(dopStart), hdop: f.double(dopStart + 1), vdop: f.double(dopStart + 2),
      systemID: systemID)
  }

  mutating func gsv(_ f: NMEAFields) -> GSV {
    var signalID: Int?
    var end = f.count
    if f.count > 4 && (f.count - 4) % 4 == 1 {
      signalID = f.int(f.count - 1)
      end -= 1
    }
    var satellites: [SatelliteInView] = []
    var index = detailed ? 4 : end
    while index < end {
      satellites.append(
        SatelliteInView(
          id: f.int(index), elevation: f.int(index + 1), azimuth: f.int(index + 2),
          snr: f.int(index + 3)))
      index += 4
    }
    return GSV(
      messageCount: f.int(1), messageNumber: f.int(2), satellitesInView: f.int(3),
      satellites: satellites, signalID: signalID)
  }

  mutating func gst(_ f: NMEAFields) -> GST {
    GST(
      timeOfDay: time(f, 1), rangeRMS: f.double(2), semiMajor: f.double(3),
      semiMinor: f.double(4), orientation: f.double(5), latitudeError: f.double(6),
      longitudeError: f.double(7), altitudeError: f.double(8))
  }

  mutating func zda(_ f: NMEAFields) -> ZDA {
    var date: UTCDate?
    if let day = f.int(2), let month = f.int(3), let year = f.int(4) {
      date = UTCDate(year: year, month: month, day: day)
    }
    if date == nil && !(f.isEmpty(2) && f.isEmpty(3) && f.isEmpty(4)) { malformed = true }
    return ZDA(
      timeOfDay: time(f, 1), date: date, zoneHours: f.int(5), zoneMinutes: f.int(6))
  }
}
