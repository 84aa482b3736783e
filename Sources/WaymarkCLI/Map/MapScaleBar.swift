import WaymarkCore

/// The scale bar of a map: a round ground length (1, 2 or 5 × 10ⁿ metres) and its length in
/// pixels.
struct MapScaleBar: Sendable, Equatable {
  /// Ground length, metres.
  let meters: Double
  /// Drawn length, pixels.
  let pixels: Double

  /// The longest round length that is drawn at most `maximumPixels` long at `metersPerPixel`.
  ///
  /// - Parameters:
  ///   - metersPerPixel: the map's scale, ground metres per pixel (positive).
  ///   - maximumPixels: the longest bar wanted, pixels (positive).
  init(metersPerPixel: Double, maximumPixels: Double) {
    let limit = metersPerPixel * maximumPixels
    var exponent = 0
    while PowerOfTen.double(exponent + 1) <= limit, exponent < 18 { exponent += 1 }
    let unit = PowerOfTen.double(exponent)
    var meters = unit
    if limit < 1 {
      meters = 1
    } else {
      for factor in [5.0, 2.0] where factor * unit <= limit {
        meters = factor * unit
        break
      }
    }
    self.meters = meters
    self.pixels = meters / metersPerPixel
  }

  /// The length for people: `500 m`, `2 km`.
  var label: String {
    meters >= 1000 ? "\(Int(saturating: meters / 1000)) km" : "\(Int(saturating: meters)) m"
  }
}
