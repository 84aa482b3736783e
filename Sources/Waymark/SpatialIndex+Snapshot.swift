import FoundationEssentials

extension SpatialIndex {
  /// Writes the built index (geometry, levels, cells, memberships) for ``init(snapshot:)``;
  /// the row tables are not written (they are recomputed for the rows that hold cells, one
  /// cosine a row).
  func write(to writer: inout SnapshotWriter) {
    for values in [latitudes, longitudes, radii] {
      writer.write(array: values.codes)
      writer.write(array: values.values)
    }
    writer.write(array: levels.map { UInt8(truncatingIfNeeded: $0) })
    writer.write(array: slots.map(\.low))
    writer.write(array: slots.map(\.high))
    writer.write(array: slots.map(\.start))
    let large = largeCounts.sorted { $0.key < $1.key }
    writer.write(array: large.map(\.key))
    writer.write(array: large.map { UInt64($0.value) })
    writer.write(
      array: entries.map {
        UInt64($0.latitudeCode) | UInt64($0.longitudeCode) << 16 | UInt64($0.circle) << 32
      })
    writer.write(array: entryRadii)
  }

  /// Reads back an index that ``write(to:)`` wrote over `count` circles, or `nil` when the
  /// bytes do not make a sound one: every count, level, cell and circle number is checked, so
  /// that no query on the result can go out of bounds or loop, whatever the bytes.
  init?(snapshot reader: inout SnapshotReader, count: Int) {
    var geometry: [ExactValues] = []
    for scale in [1e7, 1e7, 1e3] {
      guard let codes = reader.readArray(Int32.self), let values = reader.readDoubleArray(),
        let exact = ExactValues(codes: codes, values: values, scale: scale), exact.count == count
      else { return nil }
      geometry.append(exact)
    }
    for circle in 0..<count {
      let radius = geometry[2][circle]
      guard
        Coordinate(latitude: geometry[0][circle], longitude: geometry[1][circle]).isValid,
        radius.isFinite, radius >= 0
      else { return nil }
    }
    guard let levelBytes = reader.readArray(UInt8.self),
      let lows = reader.readArray(UInt32.self), let highs = reader.readArray(UInt32.self),
      let starts = reader.readArray(UInt32.self),
      let largeStarts = reader.readArray(UInt32.self),
      let largeValues = reader.readArray(UInt64.self),
      let packedEntries = reader.readArray(UInt64.self),
      let entryRadii = reader.readArray(UInt8.self)
    else { return nil }
    let levels = levelBytes.map(Int.init)
    // Levels: ascending, each once, within the grid.
    guard zip(levels, levels.dropFirst()).allSatisfy({ $0 < $1 }),
      levels.allSatisfy({ $0 <= SpatialIndex.maximumLevel }),
      count == 0 || !levels.isEmpty,
      entryRadii.count == packedEntries.count, largeStarts.count == largeValues.count
    else { return nil }
    var entries: [Entry] = []
    entries.reserveCapacity(packedEntries.count)
    for packed in packedEntries {
      let circle = UInt32(truncatingIfNeeded: packed >> 32)
      guard Int(circle) < count else { return nil }
      entries.append(
        Entry(
          latitudeCode: UInt16(truncatingIfNeeded: packed),
          longitudeCode: UInt16(truncatingIfNeeded: packed >> 16), circle: circle))
    }
    var largeCounts: [UInt32: Int] = [:]
    for (start, value) in zip(largeStarts, largeValues) {
      guard value <= UInt64(entries.count), UInt64(start) + value <= UInt64(entries.count)
      else { return nil }
      largeCounts[start] = Int(value)
    }
    // Slots: a power of two of them, at least one empty (a probe ends), every cell's members
    // within the entries.
    let capacity = lows.count
    guard capacity >= 16, capacity & (capacity - 1) == 0, highs.count == capacity,
      starts.count == capacity
    else { return nil }
    var slots: [Slot] = []
    slots.reserveCapacity(capacity)
    var emptySlots = 0
    for index in 0..<capacity {
      let slot = Slot(low: lows[index], high: highs[index], start: starts[index])
      if slot.isEmpty {
        emptySlots += 1
      } else {
        let members =
          slot.count == Slot.countEscape ? largeCounts[slot.start] : Optional(slot.count)
        guard let members, Int(slot.start) + members <= entries.count else { return nil }
      }
      slots.append(slot)
    }
    guard emptySlots > 0 else { return nil }
    self.latitudes = geometry[0]
    self.longitudes = geometry[1]
    self.radii = geometry[2]
    self.levels = levels
    self.slots = slots
    self.slotMask = capacity - 1
    self.largeCounts = largeCounts
    self.entries = entries
    self.entryRadii = entryRadii
    // Every cell within the grid; the row tables cover the rows that hold cells.
    let cells = slots.lazy.filter { !$0.isEmpty }.map {
      (level: Int($0.key >> 40), row: Int(($0.key >> 20) & 0xF_FFFF))
    }
    for cell in cells {
      guard cell.level <= SpatialIndex.maximumLevel,
        cell.row < SpatialIndex.rowCount(level: cell.level)
      else { return nil }
    }
    self.columnTables = RowTable.tables(covering: cells.map { ($0.level, $0.row...$0.row) })
  }
}
