extension Fix {
  /// The fix as a gpsd-style `TPV` object (see gpsd's `gpsd_json(5)`).
  ///
  /// Members, in this order and only when known: `class`, `mode`, `status` (when 2 or more, as
  /// gpsd prints it), `time`, `lat`, `lon` (9 decimals), `altHAE`, `altMSL`, `geoidSep`
  /// (3 decimals), `epv`, `track` (4), `speed`, `climb`, `eph` (3). Position and altitudes are
  /// printed only for 2D/3D fixes, altitudes only for 3D ones, as gpsd does.
  public func tpv() -> JSONLine {
    var line = JSONLine(class: "TPV")
    line.add("mode", mode.rawValue)
    if status.rawValue >= 2 { line.add("status", status.rawValue) }
    line.add("time", time)
    if mode.hasPosition, let coordinate {
      line.add("lat", coordinate.latitude, decimals: 9)
      line.add("lon", coordinate.longitude, decimals: 9)
    }
    if mode == .threeDimensional {
      line.add("altHAE", altitudeHAE, decimals: 3)
      line.add("altMSL", altitudeMSL, decimals: 3)
    }
    line.add("geoidSep", geoidSeparation, decimals: 3)
    line.add("epv", verticalError, decimals: 3)
    line.add("track", track, decimals: 4)
    line.add("speed", speed, decimals: 3)
    line.add("climb", climb, decimals: 3)
    line.add("eph", horizontalError, decimals: 3)
    return line
  }
}
