import FoundationEssentials
import Glibc
import WaymarkCore

/// Coordinates binned into square cells at least `cellMeters` wide on the ground, for
/// neighbour searches: two coordinates within `n × cellMeters` of each other are at most `n`
/// cells apart in each direction. Cells are `cellMeters` tall in latitude and as wide in
/// longitude at the highest latitude of the set (narrower on the ground elsewhere).
struct StayGrid {
  struct Key: Hashable, Comparable {
    var row: Int
    var column: Int
    static func < (a: Key, b: Key) -> Bool { (a.row, a.column) < (b.row, b.column) }
  }

  private(set) var cells: [Key: [Int]] = [:]
  private var keys: [Key] = []

  init(_ coordinates: [Coordinate], cellMeters: Double) {
    let highest = min(89, coordinates.map { abs($0.latitude) }.max() ?? 0)
    let rowDegrees = cellMeters / Coordinate.metersPerDegree
    let columnDegrees = rowDegrees / cos(highest * .pi / 180)
    keys.reserveCapacity(coordinates.count)
    for (index, coordinate) in coordinates.enumerated() {
      let key = Key(
        row: Int(saturating: (coordinate.latitude / rowDegrees).rounded(.down)),
        column: Int(saturating: (coordinate.longitude / columnDegrees).rounded(.down)))
      keys.append(key)
      cells[key, default: []].append(index)
    }
  }

  /// The cells within `reach` cells of `key` (itself included) that hold coordinates.
  func neighbourKeys(of key: Key, within reach: Int) -> [Key] {
    var found: [Key] = []
    for row in (key.row - reach)...(key.row + reach) {
      for column in (key.column - reach)...(key.column + reach) {
        let other = Key(row: row, column: column)
        if cells[other] != nil { found.append(other) }
      }
    }
    return found
  }

  /// Calls `body` with every other coordinate within `reach` cells of coordinate `index`
  /// until it returns `false`.
  func forEachNeighbour(of index: Int, within reach: Int, _ body: (Int) -> Bool) {
    for key in neighbourKeys(of: keys[index], within: reach) {
      for other in cells[key]! where other != index {
        if !body(other) { return }
      }
    }
  }
}
