import WaymarkCore

/// GGA: time, position, fix quality, satellites, HDOP, altitude and geoid separation.
public struct GGA: Sendable, Hashable {
  /// UTC time of day, milliseconds.
  public var timeOfDay: Int?
  /// Latitude, signed degrees.
  public var latitude: Double?
  /// Longitude, signed degrees.
  public var longitude: Double?
  /// Fix quality: 0 invalid, 1 GPS, 2 DGPS, 3 PPS, 4 RTK fixed, 5 RTK float, 6 dead reckoning,
  /// 7 manual, 8 simulator.
  public var quality: Int?
  /// Satellites used.
  public var satellitesUsed: Int?
  /// Horizontal dilution of precision.
  public var hdop: Double?
  /// Antenna altitude above mean sea level, metres.
  public var altitudeMSL: Double?
  /// Geoid separation, metres.
  public var geoidSeparation: Double?
  /// Age of differential corrections, seconds.
  public var differentialAge: Double?
  /// Differential reference station.
  public var differentialStation: String?
}

/// RMC: recommended minimum: time, status, position, speed, course, date.
public struct RMC: Sendable, Hashable {
  /// UTC time of day, milliseconds.
  public var timeOfDay: Int?
  /// `A` valid, `V` warning.
  public var status: UInt8?
  /// Latitude, signed degrees.
  public var latitude: Double?
  /// Longitude, signed degrees.
  public var longitude: Double?
  /// Speed over ground, knots.
  public var speedKnots: Double?
  /// Course over ground, degrees true.
  public var course: Double?
  /// Date.
  public var date: UTCDate?
  /// Magnetic variation, degrees, east positive.
  public var magneticVariation: Double?
  /// NMEA 2.3 mode indicator: A autonomous, D differential, E estimated, F float RTK,
  /// M manual, N not valid, P precise, R RTK, S simulator.
  public var mode: UInt8?
  /// NMEA 4.1 navigational status: S safe, C caution, U unsafe, V not valid.
  public var navigationalStatus: UInt8?
}

/// GNS: GNSS fix data with one mode letter per constellation.
public struct GNS: Sendable, Hashable {
  /// UTC time of day, milliseconds.
  public var timeOfDay: Int?
  /// Latitude, signed degrees.
  public var latitude: Double?
  /// Longitude, signed degrees.
  public var longitude: Double?
  /// Mode letters (GPS, GLONASS, Galileo, BeiDou, …), such as `AAN`.
  public var modes: [UInt8]
  /// Satellites used.
  public var satellitesUsed: Int?
  /// Horizontal dilution of precision.
  public var hdop: Double?
  /// Altitude above mean sea level, metres.
  public var altitudeMSL: Double?
  /// Geoid separation, metres.
  public var geoidSeparation: Double?
  /// NMEA 4.1 navigational status.
  public var navigationalStatus: UInt8?
}

/// GLL: position, time and status.
public struct GLL: Sendable, Hashable {
  /// Latitude, signed degrees.
  public var latitude: Double?
  /// Longitude, signed degrees.
  public var longitude: Double?
  /// UTC time of day, milliseconds.
  public var timeOfDay: Int?
  /// `A` valid, `V` not valid.
  public var status: UInt8?
  /// Mode indicator (NMEA 2.3).
  public var mode: UInt8?
}

/// VTG: course and speed over ground.
public struct VTG: Sendable, Hashable {
  /// Course, degrees true.
  public var courseTrue: Double?
  /// Course, degrees magnetic.
  public var courseMagnetic: Double?
  /// Speed, knots.
  public var speedKnots: Double?
  /// Speed, km/h.
  public var speedKilometersPerHour: Double?
  /// Mode indicator (NMEA 2.3).
  public var mode: UInt8?
}

/// GSA: DOP and active satellites.
public struct GSA: Sendable, Hashable {
  /// `M` manual, `A` automatic 2D/3D.
  public var selectionMode: UInt8?
  /// 1 no fix, 2 2D, 3 3D.
  public var fixType: Int?
  /// PRNs of the satellites used (empty fields skipped). Left empty by the decoder's hot path,
  /// which only needs ``satelliteCount``; ``NMEADecoder/parseLine(_:)`` fills it.
  public var satellites: [Int]
  /// Number of non-empty PRN fields.
  public var satelliteCount: Int
  /// Position DOP.
  public var pdop: Double?
  /// Horizontal DOP.
  public var hdop: Double?
  /// Vertical DOP.
  public var vdop: Double?
  /// NMEA 4.1 GNSS system id (1 GPS, 2 GLONASS, 3 Galileo, 4 BeiDou, 5 QZSS, 6 NavIC).
  public var systemID: Int?
}

/// One satellite of a GSV sentence.
public struct SatelliteInView: Sendable, Hashable {
  /// PRN or satellite id.
  public var id: Int?
  /// Elevation, degrees.
  public var elevation: Int?
  /// Azimuth, degrees true.
  public var azimuth: Int?
  /// Signal to noise ratio, dB-Hz; `nil` when not tracked.
  public var snr: Int?
}

/// GSV: satellites in view (one message of a group).
public struct GSV: Sendable, Hashable {
  /// Messages in this group.
  public var messageCount: Int?
  /// This message's number, from 1.
  public var messageNumber: Int?
  /// Total satellites in view for this talker (and signal).
  public var satellitesInView: Int?
  /// Up to four satellites. Left empty by the decoder's hot path; ``NMEADecoder/parseLine(_:)``
  /// fills it.
  public var satellites: [SatelliteInView]
  /// NMEA 4.1 signal id, when present.
  public var signalID: Int?
}

/// GST: pseudorange error statistics.
public struct GST: Sendable, Hashable {
  /// UTC time of day, milliseconds.
  public var timeOfDay: Int?
  /// RMS of the pseudorange residuals, metres.
  public var rangeRMS: Double?
  /// Error ellipse semi-major axis, metres (1 sigma).
  public var semiMajor: Double?
  /// Error ellipse semi-minor axis, metres (1 sigma).
  public var semiMinor: Double?
  /// Orientation of the semi-major axis, degrees true.
  public var orientation: Double?
  /// Latitude error, metres (1 sigma).
  public var latitudeError: Double?
  /// Longitude error, metres (1 sigma).
  public var longitudeError: Double?
  /// Altitude error, metres (1 sigma).
  public var altitudeError: Double?
}

/// ZDA: time and date.
public struct ZDA: Sendable, Hashable {
  /// UTC time of day, milliseconds.
  public var timeOfDay: Int?
  /// UTC date.
  public var date: UTCDate?
  /// Local zone hours.
  public var zoneHours: Int?
  /// Local zone minutes.
  public var zoneMinutes: Int?
}

/// TXT: text transmission.
public struct TXT: Sendable, Hashable {
  /// Messages in this group.
  public var messageCount: Int?
  /// This message's number.
  public var messageNumber: Int?
  /// Text identifier.
  public var identifier: Int?
  /// The text.
  public var text: String?
}

/// One accepted sentence, typed.
public enum NMEASentence: Sendable, Hashable {
  /// GGA: time, position, fix quality, satellites, HDOP, altitude.
  case gga(GGA)
  /// RMC: the recommended minimum (time, status, position, speed, course, date).
  case rmc(RMC)
  /// GNS: fix data with one mode letter per constellation.
  case gns(GNS)
  /// GLL: position, time and status.
  case gll(GLL)
  /// VTG: course and speed over ground.
  case vtg(VTG)
  /// GSA: dilutions of precision and the satellites used.
  case gsa(GSA)
  /// GSV: one message of a group listing the satellites in view.
  case gsv(GSV)
  /// GST: pseudorange error statistics (the error estimates in metres).
  case gst(GST)
  /// ZDA: time and date.
  case zda(ZDA)
  /// TXT: a text transmission from the receiver.
  case txt(TXT)
  /// A proprietary sentence (`$P…`), recognised and skipped; the address without `$`.
  case proprietary(String)
  /// An encapsulated (`!…`) sentence such as AIS, recognised and skipped.
  case encapsulated(String)
  /// A standard-looking sentence of a type Waymark does not use (DBT, HDT, …).
  case unsupported(String)
}
