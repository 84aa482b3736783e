import FoundationEssentials
import Glibc
import WaymarkCore

extension SpatialIndex {
  /// The widths (columns) of a band of consecutive rows of one level, each as
  /// ``SpatialIndex/columnCount(level:row:)`` gives it: the rows that hold cells, so that a
  /// query finds a row's width without a cosine and skips the rows that hold nothing.
  struct RowTable: Sendable {
    /// The first row of the band.
    let firstRow: Int
    /// Columns of row `firstRow + i` at `i`.
    private let columns: [Int32]

    /// No rows.
    static let empty = RowTable(firstRow: 0, columns: [])

    private init(firstRow: Int, columns: [Int32]) {
      self.firstRow = firstRow
      self.columns = columns
    }

    /// The widths of `rows` of `level` (none for `nil`). Where the band covers more than half of
    /// a level whose rows tile the sphere exactly (180° a whole number of rows), the northern
    /// half mirrors the southern one — a row and its mirror have the same poleward edge,
    /// computed from the same exact values — so one cosine serves both.
    init(level: Int, rows: ClosedRange<Int>?) {
      guard let rows else {
        self = .empty
        return
      }
      let count = SpatialIndex.rowCount(level: level)
      firstRow = rows.lowerBound
      let tiles = Double(count) * SpatialIndex.rowHeight(level: level) == 180 && count % 2 == 0
      guard tiles, rows.count > count / 2 else {
        columns = rows.map { Int32(SpatialIndex.columnCount(level: level, row: $0)) }
        return
      }
      var table = [Int32](repeating: 0, count: rows.count)
      for row in rows where table[row - rows.lowerBound] == 0 {
        let width = Int32(SpatialIndex.columnCount(level: level, row: row))
        table[row - rows.lowerBound] = width
        let mirror = count - 1 - row
        if rows.contains(mirror) { table[mirror - rows.lowerBound] = width }
      }
      columns = table
    }

    /// A table for each level of the grid, covering the rows that `rows` names for it (none
    /// for a level it does not name).
    static func tables(
      covering rows: some Sequence<(level: Int, rows: ClosedRange<Int>)>
    ) -> [RowTable] {
      var bands = [ClosedRange<Int>?](repeating: nil, count: SpatialIndex.maximumLevel + 1)
      for (level, band) in rows {
        bands[level] =
          bands[level].map {
            min($0.lowerBound, band.lowerBound)...max($0.upperBound, band.upperBound)
          } ?? band
      }
      return bands.indices.map { RowTable(level: $0, rows: bands[$0]) }
    }

    /// The last row of the band (`firstRow - 1` when it is empty).
    var lastRow: Int { firstRow + columns.count - 1 }

    /// Whether `row` is in the band.
    @inline(__always)
    func holds(_ row: Int) -> Bool { row >= firstRow && row - firstRow < columns.count }

    /// The columns of `row`, which must be in the band.
    @inline(__always)
    subscript(row: Int) -> Int { Int(columns[row - firstRow]) }

    /// Heap bytes held.
    var byteCount: Int { columns.capacity * MemoryLayout<Int32>.stride }
  }
}
