extension Fix {
  /// The fix as a gpsd-style `TPV` object (see gpsd's `gpsd_json(5)`).
  ///
  /// Members, in this order and only when known: `class`, `mode`, `status` (when 2 or more, as
  /// gpsd prints it), `time`, `lat`, `lon` (9 decimals), `altHAE`, `altMSL`, `geoidSep`
  /// (3 decimals), `epv`, `track` (4), `speed`, `climb`, `eph` (3). Position and altitudes are
  /// printed only for 2D/3D fixes, altitudes only for 3D ones, as gpsd does.
  public func tpv() -> JSONLine {
    var bytes: [UInt8] = []
    appendTPV(to: &bytes)
    return JSONLine(finishedObject: bytes.dropLast())  // without the newline
  }

  /// Appends the ``tpv()`` object and a newline to `output`, without intermediate allocations.
  public func appendTPV(to output: inout [UInt8]) {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 512) { buffer in
      var json = RawJSONWriter(buffer.baseAddress!)
      json.byte(UInt8(ascii: "{"))
      json.key("class")
      json.bytes("\"TPV\"")
      json.key("mode")
      json.integer(mode.rawValue)
      if status.rawValue >= 2 {
        json.key("status")
        json.integer(status.rawValue)
      }
      if let time {
        json.key("time")
        json.timestamp(time)
      }
      if mode.hasPosition, let coordinate {
        json.number("lat", coordinate.latitude, 9)
        json.number("lon", coordinate.longitude, 9)
      }
      if mode == .threeDimensional {
        json.number("altHAE", altitudeHAE, 3)
        json.number("altMSL", altitudeMSL, 3)
      }
      json.number("geoidSep", geoidSeparation, 3)
      json.number("epv", verticalError, 3)
      json.number("track", track, 4)
      json.number("speed", speed, 3)
      json.number("climb", climb, 3)
      json.number("eph", horizontalError, 3)
      json.byte(UInt8(ascii: "}"))
      json.byte(UInt8(ascii: "\n"))
      output.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[0..<json.count]))
    }
  }
}
