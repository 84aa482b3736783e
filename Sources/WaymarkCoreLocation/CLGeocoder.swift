import Foundation
import WaymarkGazetteer

/// CoreLocation's `CLGeocodeCompletionHandler`: the placemarks found, or the error. Not
/// `@Sendable`, as CoreLocation's is not: it runs on the main queue, so it may capture what
/// the main thread owns.
public typealias CLGeocodeCompletionHandler = ([CLPlacemark]?, (any Error)?) -> Void

/// CoreLocation's `CLGeocoder`, offline: answers come from the gazetteer built into Waymark
/// (GeoNames' 34,006 towns of at least 15,000 people, CC BY 4.0), never from a network.
///
/// ```swift
/// let geocoder = CLGeocoder()
/// geocoder.reverseGeocodeLocation(location) { placemarks, error in
///   print(placemarks?.first?.locality ?? "no town")
/// }
/// ```
///
/// As on iOS, the completion handler runs on the main queue, after the call has returned, and
/// `async` variants exist. What the answers are:
///
/// - **Reverse geocoding** names the town a location is in: the most populous town whose
///   extent holds it (a circle of √(population / 10,000) km: 10 km for a million people),
///   else the nearest town within ``localityRadius`` (20 km) — its ``CLPlacemark/locality``
///   and ``CLPlacemark/name`` — with the nearest town as ``CLPlacemark/subLocality`` when that
///   is another (GeoNames lists a large city's districts among its towns: Berlin's Mitte).
///   Farther from any town, up to ``countryRadius`` (300 km), the placemark has the country
///   alone. Beyond, or for an invalid coordinate, the handler gets
///   `CLError.geocodeFoundNoResult`. The country is the town's: near a border it can be the
///   neighbour's.
/// - **Forward geocoding** (`geocodeAddressString`) reads the text before the first comma as a
///   town's name (case and Latin accents do not matter) and each later part as a country (ISO
///   code or English name) or a US state's code, which narrows when it leaves a town; at most
///   ten towns, most populous first, those inside the `region` hint before the others. No
///   street is understood.
/// - `preferredLocale` is accepted and changes nothing: towns keep GeoNames' spelling,
///   countries are in English.
/// - ``cancelGeocode()`` ends the requests not yet delivered with `CLError.geocodeCanceled`.
open class CLGeocoder: NSObject, @unchecked Sendable {
  // @unchecked: the pending requests are behind a lock.

  /// How near a town's centre a location must be for the town to be its locality, metres.
  public static let localityRadius: CLLocationDistance = 20_000
  /// How near a town a location must be for a placemark with the town's country, metres.
  public static let countryRadius: CLLocationDistance = 300_000

  /// The handlers not yet called, by request number, and the next number.
  private let pending = Locked((handlers: [Int: Handler](), next: 0))

  /// A geocoder.
  public override init() {
    super.init()
  }

  /// Whether a request's handler has not run yet.
  open var isGeocoding: Bool { pending.withLock { !$0.handlers.isEmpty } }

  // MARK: Reverse geocoding

  /// Finds the town nearest `location` (see the type's overview) and calls
  /// `completionHandler` on the main queue.
  open func reverseGeocodeLocation(
    _ location: CLLocation, completionHandler: @escaping CLGeocodeCompletionHandler
  ) {
    submit(Result { try CLGeocoder.placemarks(near: location.coordinate) }, completionHandler)
  }

  /// ``reverseGeocodeLocation(_:completionHandler:)``; the locale changes nothing.
  open func reverseGeocodeLocation(
    _ location: CLLocation, preferredLocale locale: Locale?,
    completionHandler: @escaping CLGeocodeCompletionHandler
  ) {
    reverseGeocodeLocation(location, completionHandler: completionHandler)
  }

  /// The town nearest `location`, as placemarks; throws `CLError.geocodeFoundNoResult` when no
  /// town is within ``countryRadius``.
  open func reverseGeocodeLocation(_ location: CLLocation) async throws -> [CLPlacemark] {
    try await awaiting { self.reverseGeocodeLocation(location, completionHandler: $0) }
  }

  /// ``reverseGeocodeLocation(_:)``; the locale changes nothing.
  open func reverseGeocodeLocation(_ location: CLLocation, preferredLocale locale: Locale?)
    async throws -> [CLPlacemark]
  {
    try await reverseGeocodeLocation(location)
  }

  // MARK: Forward geocoding

  /// Finds the towns `addressString` names (see the type's overview) and calls
  /// `completionHandler` on the main queue.
  open func geocodeAddressString(
    _ addressString: String, completionHandler: @escaping CLGeocodeCompletionHandler
  ) {
    geocodeAddressString(addressString, in: nil, completionHandler: completionHandler)
  }

  /// ``geocodeAddressString(_:completionHandler:)`` with the towns inside `region` first.
  open func geocodeAddressString(
    _ addressString: String, in region: CLRegion?,
    completionHandler: @escaping CLGeocodeCompletionHandler
  ) {
    submit(
      Result { try CLGeocoder.placemarks(named: addressString, in: region) }, completionHandler)
  }

  /// ``geocodeAddressString(_:in:completionHandler:)``; the locale changes nothing.
  open func geocodeAddressString(
    _ addressString: String, in region: CLRegion?, preferredLocale locale: Locale?,
    completionHandler: @escaping CLGeocodeCompletionHandler
  ) {
    geocodeAddressString(addressString, in: region, completionHandler: completionHandler)
  }

  /// The towns `addressString` names, most populous first; throws
  /// `CLError.geocodeFoundNoResult` when there is none.
  open func geocodeAddressString(_ addressString: String) async throws -> [CLPlacemark] {
    try await awaiting { self.geocodeAddressString(addressString, completionHandler: $0) }
  }

  /// ``geocodeAddressString(_:)`` with the towns inside `region` first.
  open func geocodeAddressString(_ addressString: String, in region: CLRegion?) async throws
    -> [CLPlacemark]
  {
    try await awaiting {
      self.geocodeAddressString(addressString, in: region, completionHandler: $0)
    }
  }

  /// ``geocodeAddressString(_:in:)``; the locale changes nothing.
  open func geocodeAddressString(
    _ addressString: String, in region: CLRegion?, preferredLocale locale: Locale?
  ) async throws -> [CLPlacemark] {
    try await geocodeAddressString(addressString, in: region)
  }

  // MARK: Cancelling

  /// Ends every request whose handler has not run: each handler gets
  /// `CLError.geocodeCanceled` on the main queue.
  open func cancelGeocode() {
    let cancelled = pending.withLock { state in
      defer { state.handlers.removeAll() }
      return state.handlers.sorted { $0.key < $1.key }.map(\.value)
    }
    for handler in cancelled {
      DispatchQueue.main.async { handler.call(nil, CLError(.geocodeCanceled)) }
    }
  }

  // MARK: The answers

  /// The placemark of the town nearest `coordinate`, or the error iOS gives when there is none.
  static func placemarks(near coordinate: CLLocationCoordinate2D) throws -> [CLPlacemark] {
    let gazetteer = Gazetteer.bundled
    if let (town, district) = gazetteer.locality(of: coordinate, nearbyMeters: localityRadius) {
      return [CLPlacemark(town: town, district: district)]
    }
    guard let (town, _) = gazetteer.nearest(to: coordinate, within: countryRadius) else {
      throw CLError(.geocodeFoundNoResult)
    }
    return [CLPlacemark(countryOf: town)]
  }

  /// The placemarks of the towns `address` names, inside `region` first.
  static func placemarks(named address: String, in region: CLRegion?) throws -> [CLPlacemark] {
    let gazetteer = Gazetteer.bundled
    let parts = address.split(separator: ",").map { gazetteer.fold(String($0)) }
    guard let name = parts.first else { throw CLError(.geocodeFoundNoResult) }
    var towns = gazetteer.towns(named: name, limit: .max)
    // Each later part narrows to the towns whose country (code or name) or US state it names,
    // when some are left: "Springfield, IL" is Illinois's (IL is also Israel's code), and a
    // part that names nothing known (a street) is passed over.
    for part in parts.dropFirst() {
      let narrowed = towns.filter { town in
        gazetteer.fold(town.countryCode) == part || gazetteer.fold(town.country) == part
          || town.region.map(gazetteer.fold) == part
      }
      if !narrowed.isEmpty { towns = narrowed }
    }
    if let circle = region as? CLCircularRegion {
      let inside = towns.filter { circle.contains($0.coordinate) }
      towns = inside + towns.filter { !circle.contains($0.coordinate) }
    }
    guard !towns.isEmpty else { throw CLError(.geocodeFoundNoResult) }
    return towns.prefix(10).map { CLPlacemark(town: $0, district: nil) }
  }

  private func submit(
    _ answer: Result<[CLPlacemark], any Error>, _ handler: @escaping CLGeocodeCompletionHandler
  ) {
    let id = pending.withLock { state -> Int in
      state.next += 1
      state.handlers[state.next] = Handler(call: handler)
      return state.next
    }
    let placemarks = try? answer.get()
    let error: (any Error)? = if case .failure(let failure) = answer { failure } else { nil }
    DispatchQueue.main.async { [pending] in
      guard let handler = pending.withLock({ $0.handlers.removeValue(forKey: id) }) else {
        return
      }
      handler.call(placemarks, error)
    }
  }

  private func awaiting(_ start: (@escaping CLGeocodeCompletionHandler) -> Void) async throws
    -> [CLPlacemark]
  {
    try await withCheckedThrowingContinuation { continuation in
      start { placemarks, error in
        // Delivered on the main queue, once: the continuation resumes the caller's task.
        if let placemarks {
          continuation.resume(returning: placemarks)
        } else {
          continuation.resume(throwing: error ?? CLError(.geocodeFoundNoResult))
        }
      }
    }
  }
}

/// A completion handler on its way to the main queue, which alone calls it.
private struct Handler: @unchecked Sendable {
  // @unchecked: the closure is called on the main queue only, as CoreLocation calls it.
  let call: CLGeocodeCompletionHandler
}
