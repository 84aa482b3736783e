// `import NMEA` also gives the value types it works with (`Fix`, `Coordinate`, …) and the
// writer, which lives in WaymarkCore so that waymarkd can write NMEA without all of Foundation.
@_exported import WaymarkCore
