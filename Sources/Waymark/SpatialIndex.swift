import FoundationEssentials
import Glibc
import WaymarkCore

/// An immutable index of circles on the sphere, answering "which circles contain this point",
/// "which circles come within this distance of a point" and "which circles may a short segment
/// cross" in time that does not grow with the number of circles.
///
/// The index is a multi-level latitude/longitude grid. Level `k` has rows `4^k / 1024` degrees
/// of latitude high (level 0 is about 109 m, level 1 about 434 m, level 2 about 1.7 km …); each
/// circle goes into the finest level whose rows are at least twice as high as the circle is
/// wide, and into every cell of that level that its bounding box touches: 1 to 4 cells, about
/// 2 on average. Rows have fewer columns towards the poles — a row has
/// `floor(360 · cos(φ) / height)` columns at its poleward edge `φ` — so a cell is never
/// narrower than it is high and the rows that touch a pole are a single cell. Columns wrap at
/// the antimeridian. A point query reads one cell per level in use, whatever the number of
/// circles.
///
/// Cells live in an open-addressing hash table of 12-byte slots (44-bit `(level, row, column)`
/// key, 20-bit member count, first member); a cell's members are contiguous 8-byte entries that
/// carry the circle's number and its position as 16-bit fractions of the cell (a step of
/// 1/32768 of the cell, so within 0.05 % of the circle's radius), with the radius as an 8-bit
/// fraction of a quarter row rounded up in a parallel byte array, so a query touches a few
/// cache lines per cell before any exact distance. Memory: 24 bytes of exact geometry per
/// circle (12 when every centre has at most 7 decimals and every radius at most 3, as imported
/// places do: kept as integers that give back the same `Double`s), 9 bytes per cell membership,
/// 12–24 bytes per non-empty cell.
public struct SpatialIndex: Sendable {
  /// A cell: the low 32 bits of its key; the key's upper 12 bits and, above them, its member
  /// count (`countEscape` when the count is in `largeCounts`); its first member.
  struct Slot {
    var low: UInt32
    var high: UInt32
    var start: UInt32

    init(key: UInt64, start: UInt32, count: Int) {
      low = UInt32(truncatingIfNeeded: key)
      high = UInt32(truncatingIfNeeded: key >> 32) | UInt32(min(count, Slot.countEscape)) << 12
      self.start = start
    }

    static let empty = Slot(low: .max, high: .max, start: 0)
    static let countEscape = 0xF_FFFF

    init(low: UInt32, high: UInt32, start: UInt32) {
      self.low = low
      self.high = high
      self.start = start
    }

    var isEmpty: Bool { high == .max }
    var key: UInt64 { UInt64(high & 0xFFF) << 32 | UInt64(low) }
    var count: Int { Int(high >> 12) }
  }

  /// A circle's membership of a cell: its number and its centre as fractions of the cell's
  /// height and width from the south-west corner, `code / 32768 − 0.5` (so −0.5 ..< 1.5).
  struct Entry {
    var latitudeCode: UInt16
    var longitudeCode: UInt16
    var circle: UInt32
  }

  /// Number of circles indexed.
  public var count: Int { latitudes.count }

  // Exact geometry of circle `i`, in degrees and metres.
  let latitudes: ExactValues
  let longitudes: ExactValues
  let radii: ExactValues

  // Levels that hold at least one circle, finest first.
  let levels: [Int]
  let slots: [Slot]
  let slotMask: Int
  /// Member counts of the cells that hold `Slot.countEscape` members or more, by first member.
  let largeCounts: [UInt32: Int]
  let entries: [Entry]
  /// The radius of each entry's circle in 254ths of a quarter of its level's row height (in
  /// metres), rounded up; 255 when larger, or when the centre could not be coded.
  let entryRadii: [UInt8]
  /// Columns per row of each level, for the rows that hold cells (empty for the levels not in
  /// use), so queries need no cosine; a row outside its level's table holds no cell.
  let columnTables: [RowTable]

  /// Height in degrees of a level-0 row (about 109 m).
  static let baseRowHeightDegrees = 1.0 / 1024
  /// The coarsest level: rows of 256° cover the whole sphere in one row.
  static let maximumLevel = 9
  /// Slack added to every bounding box, radians (about 6 mm), against rounding at cell edges.
  static let slackRadians = 1e-9

  /// Builds an index over circles given by their centres and radii.
  ///
  /// - Parameters:
  ///   - centers: Circle centres; circle `i` is reported as the integer `i`.
  ///   - radiiMeters: Radius of each circle in metres (same count as `centers`, ≥ 0).
  public init(centers: [Coordinate], radiiMeters: [Double]) {
    precondition(centers.count == radiiMeters.count, "one radius per centre")
    self.init(
      latitudes: centers.map(\.latitude), longitudes: centers.map(\.longitude),
      radiiMeters: radiiMeters)
  }

  /// Builds an index over circles given by the latitudes and longitudes of their centres
  /// (degrees) and their radii (metres), circle `i` at position `i` of each.
  init(latitudes: [Double], longitudes: [Double], radiiMeters: [Double]) {
    precondition(
      latitudes.count == radiiMeters.count && longitudes.count == radiiMeters.count,
      "one radius per centre")
    precondition(latitudes.count < Int(UInt32.max), "too many circles")
    let radii = radiiMeters.map { $0.isFinite ? max(0, $0) : 0 }

    let circleLevels = radii.map { SpatialIndex.level(forRadiusMeters: $0) }
    let usedLevels = Set(circleLevels)
    // The rows each level's circles reach, so that its table holds only those: 11 places in one
    // town need a few rows, not the 46,080 of a whole level (a cosine each).
    let columnTables = RowTable.tables(
      covering: latitudes.indices.lazy.map { i in
        let level = circleLevels[i]
        return (
          level, SpatialIndex.rows(level: level, latitude: latitudes[i], radiusMeters: radii[i])
        )
      })
    // (cell key, circle) pairs as one integer each, so that sorting compares integers.
    var pairs: [UInt128] = []
    pairs.reserveCapacity(latitudes.count * 2)
    for i in 0..<latitudes.count {
      let level = circleLevels[i]
      SpatialIndex.forEachCell(
        level: level, latitude: latitudes[i], longitude: longitudes[i],
        radiusMeters: radii[i], columnTable: columnTables[level]
      ) { row, column, _ in
        pairs.append(
          UInt128(SpatialIndex.key(level: level, row: row, column: column)) << 32 | UInt128(i))
      }
    }
    pairs.radixSort()

    var cells: [(key: UInt64, start: UInt32, count: Int)] = []
    var entries: [Entry] = []
    var entryRadii: [UInt8] = []
    entries.reserveCapacity(pairs.count)
    entryRadii.reserveCapacity(pairs.count)
    for packed in pairs {
      let pair = (key: UInt64(packed >> 32), circle: UInt32(truncatingIfNeeded: packed))
      if cells.last?.key != pair.key {
        cells.append((pair.key, UInt32(entries.count), 0))
      }
      cells[cells.count - 1].count += 1
      let level = Int(pair.key >> 40)
      let row = Int((pair.key >> 20) & 0xF_FFFF)
      let (south, west) = SpatialIndex.corner(
        level: level, row: row, column: Int(pair.key & 0xF_FFFF),
        columns: columnTables[level][row])
      let circle = Int(pair.circle)
      let width = 360 / Double(columnTables[level][row])
      let latitudeCode = SpatialIndex.code(
        (latitudes[circle] - south) / SpatialIndex.rowHeight(level: level))
      let longitudeCode = SpatialIndex.code(
        SpatialIndex.wrapped(longitudes[circle] - west) / width)
      var radiusCode = UInt8.max
      if let latitudeCode, let longitudeCode {
        entries.append(
          Entry(latitudeCode: latitudeCode, longitudeCode: longitudeCode, circle: pair.circle))
        let steps = radii[circle] / SpatialIndex.radiusUnitMeters(level: level)
        if steps < 254 { radiusCode = UInt8(clamping: Int(saturating: steps.rounded(.up))) }
      } else {
        entries.append(Entry(latitudeCode: 0, longitudeCode: 0, circle: pair.circle))
      }
      entryRadii.append(radiusCode)
    }
    pairs = []

    var capacity = 16
    while capacity * 7 < cells.count * 10 { capacity *= 2 }  // load factor ≤ 0.7
    var slots = [Slot](repeating: .empty, count: capacity)
    var largeCounts: [UInt32: Int] = [:]
    let mask = capacity - 1
    for cell in cells {
      var slot = SpatialIndex.hash(cell.key) & mask
      while !slots[slot].isEmpty { slot = (slot + 1) & mask }
      slots[slot] = Slot(key: cell.key, start: cell.start, count: cell.count)
      if cell.count >= Slot.countEscape { largeCounts[cell.start] = cell.count }
    }
    self.slots = slots
    self.slotMask = mask
    self.largeCounts = largeCounts
    self.latitudes = ExactValues(latitudes, scale: 1e7)
    self.longitudes = ExactValues(longitudes, scale: 1e7)
    self.radii = ExactValues(radii, scale: 1e3)
    self.entries = entries
    self.entryRadii = entryRadii
    self.levels = usedLevels.sorted()
    self.columnTables = columnTables
  }

  /// The centre of circle `circle`.
  public func center(of circle: Int) -> Coordinate {
    Coordinate(latitude: latitudes[circle], longitude: longitudes[circle])
  }

  /// The radius of circle `circle`, metres.
  public func radiusMeters(of circle: Int) -> Double { radii[circle] }

  /// A candidate circle as stored in a cell: its number, its approximate centre (within
  /// 0.05 % of its radius, or a few millimetres for the smallest circles) and an upper bound of
  /// its radius (at most a thousandth of a row height over it; `.infinity` when the cell does not
  /// hold it precisely).
  public struct Candidate: Sendable {
    /// The circle number.
    public var circle: Int
    /// Approximate centre latitude, degrees.
    public var latitude: Double
    /// Approximate centre longitude, degrees (may lie outside ±180 by up to one cell width).
    public var longitude: Double
    /// At least the radius, metres; `.infinity` when unknown.
    public var radiusMeters: Double
  }

  /// Calls `body` with every circle whose bounding cells overlap the cap of `radiusMeters`
  /// around `center`: a superset of the circles that come within `radiusMeters` of `center`.
  ///
  /// A circle may be reported more than once when the cap spans several cells; a point query
  /// (`radiusMeters == 0`) reports each circle at most once.
  public func forEachCandidate(
    near center: Coordinate, radiusMeters: Double = 0, _ body: (Candidate) -> Void
  ) {
    for level in levels {
      let table = columnTables[level]
      if radiusMeters <= 0 {
        let row = SpatialIndex.row(level: level, latitude: center.latitude)
        guard table.holds(row) else { continue }
        let columns = table[row]
        let column = SpatialIndex.column(
          SpatialIndex.unwrappedColumn(longitude: center.longitude, columns: columns),
          columns: columns)
        forEachMember(level: level, row: row, column: column, columns: columns, body)
      } else {
        SpatialIndex.forEachCell(
          level: level, latitude: center.latitude, longitude: center.longitude,
          radiusMeters: radiusMeters, columnTable: table
        ) { row, column, columns in
          forEachMember(level: level, row: row, column: column, columns: columns, body)
        }
      }
    }
  }

  /// Calls `body` with every circle whose cells the short segment from `start` to `end` may
  /// pass through: the cells of the latitude/longitude box of the two ends, widened by about
  /// a metre. Right for segments of a few kilometres away from the poles (the great circle
  /// then bows out of that box by centimetres); use the cap query elsewhere. Circles may be
  /// reported more than once.
  public func forEachCandidate(
    alongSegmentFrom start: Coordinate, to end: Coordinate, _ body: (Candidate) -> Void
  ) {
    forEachCandidate(in: Box(segmentFrom: start, to: end), body)
  }

  /// Calls `body` with every circle held by a cell that `box` touches: a superset of the
  /// circles whose bounding cells meet the box. Circles may be reported more than once.
  func forEachCandidate(in box: Box, _ body: (Candidate) -> Void) {
    for level in levels {
      let table = columnTables[level]
      let firstRow = SpatialIndex.row(level: level, latitude: box.south)
      let lastRow = SpatialIndex.row(level: level, latitude: box.north)
      // Only the rows that hold cells.
      let (low, high) = (max(firstRow, table.firstRow), min(lastRow, table.lastRow))
      guard low <= high else { continue }
      for row in low...high {
        let columns = table[row]
        let first = SpatialIndex.unwrappedColumn(longitude: box.west, columns: columns)
        let last = SpatialIndex.unwrappedColumn(longitude: box.east, columns: columns)
        for unwrapped in first...min(last, first + columns - 1) {
          let column = SpatialIndex.column(unwrapped, columns: columns)
          forEachMember(level: level, row: row, column: column, columns: columns, body)
        }
      }
    }
  }

  /// The circles that contain `point` (distance to the centre ≤ radius), in ascending order.
  public func circles(containing point: Coordinate) -> [Int] {
    var found: [Int] = []
    forEachCandidate(near: point) { candidate in
      let circle = candidate.circle
      if center(of: circle).distance(to: point) <= radii[circle] { found.append(circle) }
    }
    found.sort()
    return found
  }

  /// The circles that come within `distanceMeters` of `point` (centre distance ≤ radius +
  /// `distanceMeters`), in ascending order, each once.
  public func circles(within distanceMeters: Double, of point: Coordinate) -> [Int] {
    var found: [Int] = []
    forEachCandidate(near: point, radiusMeters: distanceMeters) { candidate in
      let circle = candidate.circle
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

  /// Number of (cell, circle) memberships: about 2 per circle.
  public var membershipCount: Int { entries.count }

  /// Approximate heap bytes held by the index (geometry, cells, entries, row tables).
  public var approximateByteCount: Int {
    latitudes.byteCount + longitudes.byteCount + radii.byteCount
      + slots.capacity * MemoryLayout<Slot>.stride + entries.capacity * MemoryLayout<Entry>.stride
      + entryRadii.capacity + columnTables.reduce(0) { $0 + $1.byteCount }
  }

  // MARK: - Cells

  @inline(__always)
  private func forEachMember(
    level: Int, row: Int, column: Int, columns: Int, _ body: (Candidate) -> Void
  ) {
    let key = SpatialIndex.key(level: level, row: row, column: column)
    var slot = SpatialIndex.hash(key) & slotMask
    while true {
      let found = slots[slot]
      if found.low == UInt32(truncatingIfNeeded: key)
        && found.high & 0xFFF == UInt32(truncatingIfNeeded: key >> 32)
      {
        let (south, west) = SpatialIndex.corner(
          level: level, row: row, column: column, columns: columns)
        let height = SpatialIndex.rowHeight(level: level) / 32768
        let width = 360 / Double(columns) / 32768
        let unit = SpatialIndex.radiusUnitMeters(level: level)
        let start = Int(found.start)
        let count =
          found.count == Slot.countEscape ? largeCounts[found.start, default: 0] : found.count
        for position in start..<(start + count) {
          let entry = entries[position]
          let radiusCode = entryRadii[position]
          body(
            Candidate(
              circle: Int(entry.circle),
              latitude: south + (Double(entry.latitudeCode) - 16384) * height,
              longitude: west + (Double(entry.longitudeCode) - 16384) * width,
              radiusMeters: radiusCode == UInt8.max ? .infinity : Double(radiusCode) * unit))
        }
        return
      }
      if found.isEmpty { return }
      slot = (slot + 1) & slotMask
    }
  }

  /// `fraction` of a cell as an entry code, `nil` outside −0.5 ..< 1.5.
  static func code(_ fraction: Double) -> UInt16? {
    let code = ((fraction + 0.5) * 32768).rounded()
    guard code >= 0, code <= 65535 else { return nil }
    return UInt16(code)
  }

  /// Metres of one step of an entry's radius code at `level`: a 254th of a quarter row.
  @inline(__always)
  static func radiusUnitMeters(level: Int) -> Double {
    rowHeight(level: level) * Coordinate.metersPerDegree / 4 / 254
  }

  @inline(__always)
  static func hash(_ key: UInt64) -> Int {
    Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 20)
  }

  /// The finest level whose row height (metres) is at least twice the circle's diameter.
  static func level(forRadiusMeters radius: Double) -> Int {
    let spanDegrees = 4 * radius / Coordinate.metersPerDegree
    var level = 0
    while level < maximumLevel && rowHeight(level: level) < spanDegrees { level += 1 }
    return level
  }

  @inline(__always)
  static func rowHeight(level: Int) -> Double { baseRowHeightDegrees * Double(1 << (2 * level)) }

  @inline(__always)
  static func rowCount(level: Int) -> Int {
    Int(saturating: (180 / rowHeight(level: level)).rounded(.up))
  }

  @inline(__always)
  static func row(level: Int, latitude: Double) -> Int {
    let clamped = min(90, max(-90, latitude))
    let row = Int(saturating: ((clamped + 90) / rowHeight(level: level)).rounded(.down))
    return min(rowCount(level: level) - 1, max(0, row))
  }

  /// The rows of `level` that the bounding box of the spherical cap of `radiusMeters` around
  /// a centre at `latitude` touches: the rows that `forEachCell` visits for that cap.
  static func rows(level: Int, latitude: Double, radiusMeters: Double) -> ClosedRange<Int> {
    let deltaDegrees = capHalfHeightRadians(radiusMeters: radiusMeters) * 180 / .pi
    let south = row(level: level, latitude: latitude - deltaDegrees)
    return south...row(level: level, latitude: latitude + deltaDegrees)
  }

  /// Half the height of the bounding box of a spherical cap of `radiusMeters`, radians, with
  /// the slack against rounding at cell edges.
  @inline(__always)
  static func capHalfHeightRadians(radiusMeters: Double) -> Double {
    radiusMeters / Coordinate.earthRadiusMeters + slackRadians
  }

  /// Columns in `row`: the row's width at its poleward edge divided by the row height.
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
    Int(saturating: ((longitude + 180) / 360 * Double(columns)).rounded(.down))
  }

  @inline(__always)
  static func key(level: Int, row: Int, column: Int) -> UInt64 {
    UInt64(level) << 40 | UInt64(row) << 20 | UInt64(column)
  }

  /// The south-west corner of a cell, degrees.
  @inline(__always)
  static func corner(level: Int, row: Int, column: Int, columns: Int) -> (
    latitude: Double, longitude: Double
  ) {
    return (
      -90 + Double(row) * rowHeight(level: level), -180 + 360 * Double(column) / Double(columns)
    )
  }

  /// A column index wrapped around the antimeridian into `0..<columns`.
  @inline(__always)
  static func column(_ unwrapped: Int, columns: Int) -> Int {
    let column = unwrapped % columns
    return column < 0 ? column + columns : column
  }

  /// `degrees` brought into -180...180.
  @inline(__always)
  static func wrapped(_ degrees: Double) -> Double {
    degrees > 180 ? degrees - 360 : degrees < -180 ? degrees + 360 : degrees
  }

  /// Calls `body` with the row, column and row width of every cell of `level` that the bounding box of the spherical
  /// cap of `radiusMeters` around `(latitude, longitude)` touches, each once. `columnTable` is
  /// the level's precomputed row widths.
  @inline(__always)
  static func forEachCell(
    level: Int, latitude: Double, longitude: Double, radiusMeters: Double,
    columnTable: RowTable, _ body: (_ row: Int, _ column: Int, _ columns: Int) -> Void
  ) {
    let delta = capHalfHeightRadians(radiusMeters: radiusMeters)
    let deltaDegrees = delta * 180 / .pi
    var halfWidthDegrees = 180.0
    if latitude - deltaDegrees > -90 && latitude + deltaDegrees < 90 {
      let ratio = sin(delta) / cos(latitude * .pi / 180)
      if ratio < 1 { halfWidthDegrees = asin(ratio) * 180 / .pi }
    }
    // The cap's rows (those a table built for it covers), of them those that hold cells.
    let rows = rows(level: level, latitude: latitude, radiusMeters: radiusMeters)
    let firstRow = max(rows.lowerBound, columnTable.firstRow)
    let lastRow = min(rows.upperBound, columnTable.lastRow)
    guard firstRow <= lastRow else { return }
    for row in firstRow...lastRow {
      let columns = columnTable[row]
      if halfWidthDegrees >= 180 {
        for column in 0..<columns { body(row, column, columns) }
        continue
      }
      let west = unwrappedColumn(longitude: longitude - halfWidthDegrees, columns: columns)
      let east = unwrappedColumn(longitude: longitude + halfWidthDegrees, columns: columns)
      if east - west + 1 >= columns {
        for column in 0..<columns { body(row, column, columns) }
        continue
      }
      for unwrapped in west...east {
        body(row, SpatialIndex.column(unwrapped, columns: columns), columns)
      }
    }
  }
}
