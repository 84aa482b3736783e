import FoundationEssentials

extension Stay {
  /// The stay as a `VISIT` object: the shape `waymark visits` prints, `waymark replay
  /// --visits` prints and `waymarkd` sends on its location socket.
  ///
  /// `place` and `name` are `null` at no declared place, `departure` and `duration` `null`
  /// while the stay is open; `departure_observed` is present only when the departure was
  /// inferred in a gap of the fixes (``observedDepartureDate``); `lat`/`lon` are the stay's
  /// centre (7 decimals) and `accuracy` the centre's, metres.
  ///
  /// - Parameters:
  ///   - place: the declared place the stay lies in, for its name and descriptive fields.
  ///   - source: where the fixes came from.
  public func visitLine(place: PlaceSnapshot?, source: String?) -> JSONLine {
    visitFields(place: place, source: source, into: JSONLine(class: "VISIT"))
  }

  /// The members of ``visitLine(place:source:)`` appended to `line` (a GeoJSON feature's
  /// properties).
  public func visitFields(place: PlaceSnapshot?, source: String?, into line: JSONLine) -> JSONLine {
    var line = line
    line.addNullable("place", placeID)
    line.addNullable("name", place?.name)
    line.add("arrival", arrivalDate)
    if let departureDate {
      line.add("departure", departureDate)
    } else {
      line.addNullable("departure", nil)
    }
    // Only when the departure was inferred in a gap: the last fix seen at the stay.
    if let observedDepartureDate { line.add("departure_observed", observedDepartureDate) }
    if let durationSeconds {
      line.add("duration", durationSeconds, decimals: 3)
    } else {
      line.add("duration", rawJSON: "null")
    }
    line.add("lat", coordinate.latitude, decimals: 7)
    line.add("lon", coordinate.longitude, decimals: 7)
    for field in place?.details.descriptiveFields ?? [] { line.add(field.key, field.value) }
    line.add("fixes", fixCount)
    line.add("accuracy", horizontalAccuracy, decimals: 1)
    line.add("source", source)
    line.addNullable("removed", nil)
    return line
  }
}
