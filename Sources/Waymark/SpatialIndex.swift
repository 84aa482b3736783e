import Foundation
import WaymarkCore

/// An immutable index of circles on the sphere, answering "which circles contain this point" and
/// "which circles come within this distance of a point" in time that does not grow with the
/// number of circles.
///
/// The index is a multi-level latitude/longitude grid. Level `k` has rows `2^k / 1024` degrees
/// of latitude high (level 0 is about 109 m); each circle goes into the finest level whose rows
/// are at least as high as the circle is wide, and into every cell of that level that its
/// bounding box touches, so it occupies at most about 2 × 2 cells. Rows have fewer columns
/// towards the poles — a row has `floor(360 · cos(φ) / height)` columns at its poleward edge
/// `φ` — so a cell is never narrower than it is high and the rows that touch a pole are a single
/// cell. Columns wrap at the antimeridian. A point query therefore reads one cell per level in
/// use (usually one level), whatever the number of circles.
///
/// Cells live in an open-addressing hash table over packed `(level, row, column)` keys; the
/// members of each cell are a contiguous run of `UInt32` circle numbers. Memory is about
/// 24 bytes of geometry per circle, 4 bytes per cell membership, and about 28 bytes per
/// non-empty cell.
public struct SpatialIndex: Sendable {
  /// Number of circles indexed.
  public var count: Int { latitudes.count }

  // Geometry of circle `i`, in degrees and metres.
  private let latitudes: [Double]
  private let longitudes: [Double]
  private let radii: [Double]

  // Levels that hold at least one circle, finest first.
  private let levels: [Int]

  // Hash table: slot -> packed cell key and cell ordinal (`UInt32.max` when empty).
  private let slotKeys: [UInt64]
  private let slotCells: [UInt32]
  private let slotMask: Int
  // Members of cell `c` are `members[cellStarts[c]..<cellStarts[c + 1]]`.
  private let cellStarts: [UInt32]
  private let members: [UInt32]

  /// Height in degrees of a level-0 row (about 109 m).
  static let baseRowHeightDegrees = 1.0 / 1024
  /// The coarsest level: rows of 256° cover the whole sphere in one row.
  static let maximumLevel = 18
  /// Slack added to every bounding box, radians (about 6 mm), against rounding at cell edges.
  static let slackRadians = 1e-9

  /// Builds an index over circles given by their centres and radii.
  ///
  /// - Parameters:
  ///   - centers: Circle centres; circle `i` is reported as the integer `i`.
  ///   - radiiMeters: Radius of each circle in metres (same count as `centers`, ≥ 0).
  public init(centers: [Coordinate], radiiMeters: [Double]) {
    precondition(centers.count == radiiMeters.count, "one radius per centre")
    precondition(centers.count < Int(UInt32.max), "too many circles")
    latitudes = centers.map(\.latitude)
    longitudes = centers.map(\.longitude)
    radii = radiiMeters.map { $0.isFinite ? max(0, $0) : 0 }

    var pairs: [(key: UInt64, circle: UInt32)] = []
    pairs.reserveCapacity(centers.count * 3)
    var usedLevels = Set<Int>()
    for i in 0..<centers.count {
      let level = SpatialIndex.level(forRadiusMeters: radii[i])
      usedLevels.insert(level)
      SpatialIndex.forEachCell(
        level: level, latitude: latitudes[i], longitude: longitudes[i],
        radiusMeters: radii[i]
      ) { key in
        pairs.append((key, UInt32(i)))
      }
    }
    pairs.sort { $0.key < $1.key || ($0.key == $1.key && $0.circle < $1.circle) }

    var keys: [UInt64] = []
    var starts: [UInt32] = []
    var members: [UInt32] = []
    members.reserveCapacity(pairs.count)
    for pair in pairs {
      if keys.last != pair.key {
        keys.append(pair.key)
        starts.append(UInt32(members.count))
      }
      members.append(pair.circle)
    }
    starts.append(UInt32(members.count))
    pairs = []

    var capacity = 16
    while capacity < keys.count * 2 { capacity *= 2 }
    var slotKeys = [UInt64](repeating: 0, count: capacity)
    var slotCells = [UInt32](repeating: .max, count: capacity)
    let mask = capacity - 1
    for (ordinal, key) in keys.enumerated() {
      var slot = SpatialIndex.hash(key) & mask
      while slotCells[slot] != .max { slot = (slot + 1) & mask }
      slotKeys[slot] = key
      slotCells[slot] = UInt32(ordinal)
    }
    self.slotKeys = slotKeys
    self.slotCells = slotCells
    self.slotMask = mask
    self.cellStarts = starts
    self.members = members
    self.levels = usedLevels.sorted()
  }

  /// The centre of circle `circle`.
  public func center(of circle: Int) -> Coordinate {
    Coordinate(latitude: latitudes[circle], longitude: longitudes[circle])
  }

  /// The radius of circle `circle`, metres.
  public func radiusMeters(of circle: Int) -> Double { radii[circle] }

  /// Calls `body` with every circle whose bounding cells overlap the cap of `radiusMeters`
  /// around `center`: a superset of the circles that come within `radiusMeters` of `center`.
  ///
  /// A circle may be reported more than once when the cap spans several cells; a point query
  /// (`radiusMeters == 0`) reports each circle at most once.
  public func forEachCandidate(
    near center: Coordinate, radiusMeters: Double = 0, _ body: (Int) -> Void
  ) {
    for level in levels {
      if radiusMeters <= 0 {
        let key = SpatialIndex.pointKey(
          level: level, latitude: center.latitude, longitude: center.longitude)
        forEachMember(ofCell: key, body)
      } else {
        SpatialIndex.forEachCell(
          level: level, latitude: center.latitude, longitude: center.longitude,
          radiusMeters: radiusMeters
        ) { key in
          forEachMember(ofCell: key, body)
        }
      }
    }
  }

  /// The circles that contain `point` (distance to the centre ≤ radius), in ascending order.
  public func circles(containing point: Coordinate) -> [Int] {
    var found: [Int] = []
    forEachCandidate(near: point) { circle in
      if center(of: circle).distance(to: point) <= radii[circle] { found.append(circle) }
    }
    found.sort()
    return found
  }

  /// The circles that come within `distanceMeters` of `point` (centre distance ≤ radius +
  /// `distanceMeters`), in ascending order, each once.
  public func circles(within distanceMeters: Double, of point: Coordinate) -> [Int] {
    var found: [Int] = []
    forEachCandidate(near: point, radiusMeters: distanceMeters) { circle in
      if center(of: circle).distance(to: point) <= radii[circle] + distanceMeters {
        found.append(circle)
      }
    }
    found.sort()
    var unique: [Int] = []
    unique.reserveCapacity(found.count)
    for circle in found where unique.last != circle { unique.append(circle) }
    return unique
  }

  /// Approximate heap bytes held by the index (geometry, cells, members, hash table).
  public var approximateByteCount: Int {
    latitudes.capacity * 8 + longitudes.capacity * 8 + radii.capacity * 8
      + slotKeys.capacity * 8 + slotCells.capacity * 4 + cellStarts.capacity * 4
      + members.capacity * 4
  }

  // MARK: - Cells

  @inline(__always)
  private func forEachMember(ofCell key: UInt64, _ body: (Int) -> Void) {
    var slot = SpatialIndex.hash(key) & slotMask
    while true {
      let cell = slotCells[slot]
      if cell == .max { return }
      if slotKeys[slot] == key {
        let start = Int(cellStarts[Int(cell)])
        let end = Int(cellStarts[Int(cell) + 1])
        for position in start..<end { body(Int(members[position])) }
        return
      }
      slot = (slot + 1) & slotMask
    }
  }

  @inline(__always)
  static func hash(_ key: UInt64) -> Int {
    Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 20)
  }

  /// The finest level whose row height (metres) is at least the circle's diameter.
  static func level(forRadiusMeters radius: Double) -> Int {
    let diameterDegrees = 2 * radius / (Coordinate.earthRadiusMeters * .pi / 180)
    var level = 0
    while level < maximumLevel && rowHeight(level: level) < diameterDegrees { level += 1 }
    return level
  }

  @inline(__always)
  static func rowHeight(level: Int) -> Double { baseRowHeightDegrees * Double(1 << level) }

  @inline(__always)
  static func rowCount(level: Int) -> Int { Int((180 / rowHeight(level: level)).rounded(.up)) }

  @inline(__always)
  static func row(level: Int, latitude: Double) -> Int {
    let clamped = min(90, max(-90, latitude))
    let row = Int(((clamped + 90) / rowHeight(level: level)).rounded(.down))
    return min(rowCount(level: level) - 1, max(0, row))
  }

  /// Columns in `row`: the row's width at its poleward edge divided by the row height.
  @inline(__always)
  static func columnCount(level: Int, row: Int) -> Int {
    let height = rowHeight(level: level)
    let south = -90 + Double(row) * height
    let north = min(90, south + height)
    let poleward = max(abs(south), abs(north))
    let columns = (360 * cos(poleward * .pi / 180) / height).rounded(.down)
    return columns < 1 ? 1 : Int(columns)
  }

  /// The unwrapped column of `longitude` in a row of `columns` columns.
  @inline(__always)
  static func unwrappedColumn(longitude: Double, columns: Int) -> Int {
    Int(((longitude + 180) / 360 * Double(columns)).rounded(.down))
  }

  @inline(__always)
  static func key(level: Int, row: Int, column: Int) -> UInt64 {
    UInt64(level) << 56 | UInt64(row) << 28 | UInt64(column)
  }

  @inline(__always)
  static func pointKey(level: Int, latitude: Double, longitude: Double) -> UInt64 {
    let row = row(level: level, latitude: latitude)
    let columns = columnCount(level: level, row: row)
    var column = unwrappedColumn(longitude: longitude, columns: columns) % columns
    if column < 0 { column += columns }
    return key(level: level, row: row, column: column)
  }

  /// Calls `body` with the key of every cell of `level` that the bounding box of the spherical
  /// cap of `radiusMeters` around `(latitude, longitude)` touches, each once.
  static func forEachCell(
    level: Int, latitude: Double, longitude: Double, radiusMeters: Double,
    _ body: (UInt64) -> Void
  ) {
    let delta = radiusMeters / Coordinate.earthRadiusMeters + slackRadians
    let deltaDegrees = delta * 180 / .pi
    let south = latitude - deltaDegrees
    let north = latitude + deltaDegrees
    var halfWidthDegrees = 180.0
    if south > -90 && north < 90 {
      let ratio = sin(delta) / cos(latitude * .pi / 180)
      if ratio < 1 { halfWidthDegrees = asin(ratio) * 180 / .pi }
    }
    let firstRow = row(level: level, latitude: south)
    let lastRow = row(level: level, latitude: north)
    for row in firstRow...lastRow {
      let columns = columnCount(level: level, row: row)
      if halfWidthDegrees >= 180 {
        for column in 0..<columns { body(key(level: level, row: row, column: column)) }
        continue
      }
      let west = unwrappedColumn(longitude: longitude - halfWidthDegrees, columns: columns)
      let east = unwrappedColumn(longitude: longitude + halfWidthDegrees, columns: columns)
      if east - west + 1 >= columns {
        for column in 0..<columns { body(key(level: level, row: row, column: column)) }
        continue
      }
      for unwrapped in west...east {
        var column = unwrapped % columns
        if column < 0 { column += columns }
        body(key(level: level, row: row, column: column))
      }
    }
  }
}
