import FoundationEssentials

extension PlaceEvent {
  /// The event as one NDJSON object, keys in this order:
  ///
  /// - `ARRIVAL`: `class`, `time`, `place`, `name`, `lat`, `lon`, `reason`.
  /// - `DEPARTURE`: `class`, `time`, `place`, `arrival`, `duration` (seconds, 3 decimals),
  ///   `name`, `lat`, `lon`, `reason`.
  ///
  /// Times are ISO 8601 UTC with milliseconds, `lat`/`lon` degrees with 9 decimals (gpsd's
  /// precision). `reason` is `{"rule":…,"distance":…,"accuracy":…,"enter":…,"exit":…,
  /// "confirmations":…,"dwell":…}`: metres with 1 decimal (`accuracy` absent when unknown),
  /// the count of confirming fixes, and seconds with 3 decimals.
  public func jsonLine() -> JSONLine {
    var line = JSONLine(class: className)
    line.add("time", time)
    line.add("place", placeID)
    let coordinate: Coordinate
    let reason: EventReason
    switch self {
    case .arrival(let arrival):
      line.add("name", arrival.placeName)
      coordinate = arrival.coordinate
      reason = arrival.reason
    case .departure(let departure):
      line.add("arrival", departure.arrival)
      line.add("duration", departure.durationSeconds, decimals: 3)
      line.add("name", departure.placeName)
      coordinate = departure.coordinate
      reason = departure.reason
    }
    line.add("lat", coordinate.latitude, decimals: 9)
    line.add("lon", coordinate.longitude, decimals: 9)
    line.add("reason", object: reason.jsonObject())
    return line
  }
}

extension EventReason {
  /// The reason as a JSON object (see `PlaceEvent.jsonLine()`).
  public func jsonObject() -> JSONLine {
    var object = JSONLine()
    object.add("rule", rule)
    object.add("distance", distanceMeters, decimals: 1)
    object.add("accuracy", horizontalAccuracyMeters, decimals: 1)
    object.add("enter", enterRadiusMeters, decimals: 1)
    object.add("exit", exitRadiusMeters, decimals: 1)
    object.add("confirmations", confirmations)
    object.add("dwell", dwellSeconds, decimals: 3)
    return object
  }
}
