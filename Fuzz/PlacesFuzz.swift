// libFuzzer entry point for the places file reader (`waymark places import`). Built by
// Fuzz/run-parsers.sh places; not part of the package.
import FoundationEssentials
import WaymarkCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPlaces(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Data(UnsafeBufferPointer(start: data, count: size))
  let result = Result { () throws(PlaceFileError) in try PlaceCollection.decode(bytes) }
  // Deterministic: the same bytes give the same answer.
  let again = Result { () throws(PlaceFileError) in try PlaceCollection.decode(bytes) }
  precondition(again == result, "two decodings of the same bytes differ")
  switch result {
  case .failure(let error):
    checkError(error, size: size)
  case .success(let places):
    var ids = Set<String>()
    for place in places {
      checkRanges(place)
      precondition(ids.insert(place.id).inserted, "duplicate id accepted: \(place.id)")
    }
    checkRoundTrip(places)
  }
  return 0
}

/// An error names a feature within the file, or a byte within it.
private func checkError(_ error: PlaceFileError, size: Int) {
  precondition(!error.reason.isEmpty, "an error without a reason")
  if let index = error.featureIndex { precondition(index >= 0 && index <= size) }
  let syntax = "not valid JSON at byte "
  if error.reason.hasPrefix(syntax) {
    let digits = error.reason.dropFirst(syntax.count).prefix { $0.isNumber }
    precondition(Int(digits).map { $0 <= size } ?? false, "byte offset past the input")
  }
}

/// Every accepted value is one the monitor can use.
private func checkRanges(_ place: Place) {
  let coordinate = place.coordinate
  precondition((-90.0...90.0).contains(coordinate.latitude), "latitude \(coordinate.latitude)")
  precondition((-180.0...180.0).contains(coordinate.longitude), "longitude \(coordinate.longitude)")
  precondition(Place.radiusProblem(place.radiusMeters) == nil, "radius \(place.radiusMeters)")
  precondition(Place.textProblem(place.id) == nil, "id \(place.id.debugDescription)")
  precondition(Place.textProblem(place.name) == nil, "name \(place.name.debugDescription)")
  let detection = place.detection
  if let exit = detection.exitRadiusMeters {
    precondition(
      Place.radiusProblem(exit) == nil && exit > place.radiusMeters, "exit radius \(exit)")
  }
  if let accuracy = detection.maximumAccuracyMeters {
    precondition(accuracy.isFinite && accuracy > 0, "maximum accuracy \(accuracy)")
  }
  if let count = detection.confirmations { precondition(count >= 1, "confirmations \(count)") }
  if let dwell = detection.dwellSeconds {
    precondition(dwell.isFinite && dwell >= 0, "dwell \(dwell)")
  }
  if detection.overlap == .nearest { precondition(detection.group != nil, "nearest without group") }
  if let group = detection.group { precondition(!group.isEmpty, "empty group") }
}

/// What `waymark places export` writes reads back as the same places (coordinates to 1 cm,
/// lengths exactly, dwell to the millisecond), and a second export is byte for byte the first.
private func checkRoundTrip(_ places: [Place]) {
  let exported = PlaceCollection.encode(places)
  let reread: [Place]
  do {
    reread = try PlaceCollection.decode(Data(exported))
  } catch {
    preconditionFailure("an export does not read back: \(error)")
  }
  precondition(reread.count == places.count, "an export lost places")
  for (original, copy) in zip(places, reread) {
    precondition(original.id == copy.id && original.name == copy.name, "id or name changed")
    precondition(original.category == copy.category && original.subtitle == copy.subtitle)
    precondition(original.address == copy.address && original.town == copy.town)
    precondition(original.url == copy.url && original.image == copy.image)
    precondition(original.detail == copy.detail, "detail changed")
    precondition(original.detection.group == copy.detection.group, "group changed")
    precondition(original.detection.overlap == copy.detection.overlap, "overlap changed")
    precondition(original.detection.confirmations == copy.detection.confirmations)
    precondition(abs(original.coordinate.latitude - copy.coordinate.latitude) <= 5.1e-8)
    precondition(abs(original.coordinate.longitude - copy.coordinate.longitude) <= 5.1e-8)
    precondition(original.radiusMeters == copy.radiusMeters, "radius changed")
    precondition(original.detection.exitRadiusMeters == copy.detection.exitRadiusMeters)
    precondition(original.detection.maximumAccuracyMeters == copy.detection.maximumAccuracyMeters)
    let dwell = (original.detection.dwellSeconds ?? 0) - (copy.detection.dwellSeconds ?? 0)
    precondition(abs(dwell) <= 0.00051, "dwell changed")
  }
  precondition(PlaceCollection.encode(reread) == exported, "a second export differs")
}
