import FoundationEssentials

/// Writes fixes as NMEA 0183 sentences: for simulation, test fixtures, the demo log, and
/// waymarkd's NMEA socket (GeoClue and other NMEA consumers).
///
/// Each epoch becomes GGA, GSA, GST and RMC (and GSV every `gsvInterval` epochs), talker `GP`,
/// with times to the millisecond and positions to 1e-6 minute (about 2 mm, so a round trip
/// through NMEA moves a point by less than 1 cm). Lives in `WaymarkCore` (Foundation
/// Essentials only) so that the daemon can write NMEA without linking all of Foundation.
public enum NMEAWriter {
  /// `$` + body + `*hh` + CR LF, with the XOR checksum of `body`.
  public static func checksummed(_ body: String) -> String {
    var checksum: UInt8 = 0
    for byte in body.utf8 { checksum ^= byte }
    let hex = Array("0123456789ABCDEF".utf8)
    let suffix = String(
      decoding: [hex[Int(checksum >> 4)], hex[Int(checksum & 15)]], as: UTF8.self)
    return "$\(body)*\(suffix)\r\n"
  }

  /// The sentences for one fix: GGA, GSA, GST (when the error is known), RMC and, when
  /// `includeSatellites`, GSV. A fix without a time gets none.
  public static func sentences(for fix: Fix, includeSatellites: Bool = false) -> [String] {
    guard let time = fix.time else { return [] }
    let (date, dayMilliseconds) = Timestamp.split(time)
    let clock = timeField(dayMilliseconds)
    let valid = fix.mode.hasPosition && fix.coordinate != nil
    let latitude = fix.coordinate.map { angleField($0.latitude, degreeDigits: 2, "N", "S") } ?? ","
    let longitude =
      fix.coordinate.map { angleField($0.longitude, degreeDigits: 3, "E", "W") } ?? ","
    let quality = valid ? ggaQuality(fix.status) : 0
    let used = fix.satellitesUsed ?? (valid ? 8 : 0)
    let hdop = fix.hdop.map { $0.fixed(1) } ?? ""
    var altitude = ","
    if fix.mode == .threeDimensional, let msl = fix.altitudeMSL { altitude = "\(msl.fixed(1)),M" }
    let separation = fix.geoidSeparation.map { "\($0.fixed(1)),M" } ?? ","
    var result: [String] = []
    result.append(
      checksummed(
        "GPGGA,\(clock),\(latitude),\(longitude),\(quality),\(twoDigits(used)),\(hdop),\(altitude),"
          + "\(separation),,"))
    let prns = (0..<min(used, 12)).map { twoDigits($0 * 2 + 1) }
    let prnFields = (prns + Array(repeating: "", count: 12 - prns.count)).joined(separator: ",")
    let fixType = valid ? (fix.mode == .threeDimensional ? 3 : 2) : 1
    let pdop = fix.pdop.map { $0.fixed(1) } ?? ""
    let vdop = fix.vdop.map { $0.fixed(1) } ?? ""
    result.append(checksummed("GPGSA,A,\(fixType),\(prnFields),\(pdop),\(hdop),\(vdop)"))
    if valid, let error = fix.horizontalError {
      let axis = error / 2.0.squareRoot()
      let vertical = fix.verticalError.map { $0.fixed(2) } ?? ""
      result.append(
        checksummed(
          "GPGST,\(clock),\(error.fixed(2)),\(axis.fixed(2)),\(axis.fixed(2)),0.0,"
            + "\(axis.fixed(2)),\(axis.fixed(2)),\(vertical)"))
    }
    if includeSatellites { result.append(contentsOf: gsv(count: fix.satellitesVisible ?? used)) }
    let knots = fix.speed.map { ($0 / metersPerSecondPerKnot).fixed(3) } ?? ""
    let track = fix.track.map { $0.fixed(2) } ?? ""
    let dateField = twoDigits(date.day) + twoDigits(date.month) + twoDigits(date.year % 100)
    result.append(
      checksummed(
        "GPRMC,\(clock),\(valid ? "A" : "V"),\(latitude),\(longitude),\(knots),\(track),\(dateField),,,"
          + "\(valid ? rmcMode(fix.status) : "N")"))
    return result
  }

  /// A whole log: `# ` + each header line, then the sentences of every fix, GSV every tenth.
  public static func log(_ fixes: [Fix], header: [String] = []) -> String {
    var text = ""
    for line in header { text += "# \(line)\n" }
    for (index, fix) in fixes.enumerated() {
      for sentence in sentences(for: fix, includeSatellites: index % 10 == 0) { text += sentence }
    }
    return text
  }

  static func gsv(count: Int) -> [String] {
    let messages = max(1, (count + 3) / 4)
    var result: [String] = []
    for message in 1...messages {
      var body = "GPGSV,\(messages),\(message),\(twoDigits(count))"
      for index in ((message - 1) * 4)..<min(count, message * 4) {
        let prn = index * 2 + 1
        body += ",\(twoDigits(prn)),\(twoDigits(15 + (prn * 7) % 70)),"
        body += "\(padded((prn * 37) % 360, 3)),\(twoDigits(25 + prn % 20))"
      }
      result.append(checksummed(body))
    }
    return result
  }

  static func timeField(_ milliseconds: Int) -> String {
    let seconds = milliseconds / 1000
    return twoDigits(seconds / 3600) + twoDigits(seconds / 60 % 60) + twoDigits(seconds % 60)
      + "." + padded(milliseconds % 1000, 3)
  }

  static func angleField(_ value: Double, degreeDigits: Int, _ positive: String, _ negative: String)
    -> String
  {
    let magnitude = abs(value)
    var degrees = Int(magnitude)
    var microMinutes = Int(saturating: ((magnitude - Double(degrees)) * 60 * 1_000_000).rounded())
    if microMinutes >= 60_000_000 {
      degrees += 1
      microMinutes -= 60_000_000
    }
    let degreeText = padded(degrees, degreeDigits)
    let minuteText =
      padded(microMinutes / 1_000_000, 2) + "." + padded(microMinutes % 1_000_000, 6)
    return "\(degreeText)\(minuteText),\(value < 0 ? negative : positive)"
  }

  static func twoDigits(_ value: Int) -> String { padded(value, 2) }

  /// `value` (not negative) in decimal with leading zeros to `width` digits.
  static func padded(_ value: Int, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width
      ? digits : String(repeating: "0", count: width - digits.count) + digits
  }

  /// Knots to metres per second: 1852 m per nautical mile, per hour.
  public static let metersPerSecondPerKnot = 1852.0 / 3600.0

  static func ggaQuality(_ status: FixStatus) -> Int {
    switch status {
    case .dgps: 2
    case .rtkFixed: 4
    case .rtkFloat: 5
    case .deadReckoning: 6
    case .simulated: 8
    default: 1
    }
  }

  static func rmcMode(_ status: FixStatus) -> String {
    switch status {
    case .dgps: "D"
    case .rtkFixed: "R"
    case .rtkFloat: "F"
    case .deadReckoning: "E"
    case .simulated: "S"
    default: "A"
    }
  }
}
