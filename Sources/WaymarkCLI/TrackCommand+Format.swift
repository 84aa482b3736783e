import FoundationEssentials
import Glibc
import WaymarkCore

/// Writes track points, streamed in time order, as GPX, GeoJSON or CSV.
///
/// GPX and CSV are written point by point; GeoJSON holds one segment at a time (a feature's
/// properties need its end and point count).
struct TrackWriter {
  let format: TrackCommand.Format
  private var segment: Int?
  private var segmentPoints: [TrackPoint] = []
  private var frame = FeatureCollectionFrame()

  init(format: TrackCommand.Format) {
    self.format = format
  }

  /// The document's opening.
  mutating func begin(into bytes: inout [UInt8]) {
    switch format {
    case .gpx:
      bytes.append(
        contentsOf: Array(
          """
          <?xml version="1.0" encoding="UTF-8"?>
          <gpx version="1.1" creator="waymark" xmlns="http://www.topografix.com/GPX/1/1">

          """.utf8))
    case .geojson:
      bytes.append(contentsOf: FeatureCollectionFrame.opening)
    case .csv:
      bytes.append(
        contentsOf: Array("time,segment,lat,lon,altitude,speed,course,accuracy\r\n".utf8))
    }
  }

  /// One point, the next in time order.
  mutating func add(_ point: TrackPoint, into bytes: inout [UInt8]) {
    let startsSegment = point.segment != segment
    switch format {
    case .gpx:
      if startsSegment {
        bytes.append(
          contentsOf: Array(
            (segment == nil ? "  <trk>\n    <name>waymark</name>\n" : "    </trkseg>\n").utf8))
        bytes.append(contentsOf: Array("    <trkseg>\n".utf8))
      }
      var line = "      <trkpt lat=\"\(point.coordinate.latitude.fixed(7))\" "
      line += "lon=\"\(point.coordinate.longitude.fixed(7))\">"
      if let altitude = point.altitude { line += "<ele>\(altitude.fixed(2))</ele>" }
      line += "<time>\(Timestamp.format(point.timestamp))</time></trkpt>\n"
      bytes.append(contentsOf: Array(line.utf8))
    case .geojson:
      if startsSegment { writeFeature(into: &bytes) }
      segmentPoints.append(point)
    case .csv:
      let fields = [
        Timestamp.format(point.timestamp), String(point.segment),
        point.coordinate.latitude.fixed(7), point.coordinate.longitude.fixed(7),
        point.altitude.map { $0.fixed(2) } ?? "", point.speed.map { $0.fixed(2) } ?? "",
        point.course.map { $0.fixed(1) } ?? "", point.horizontalAccuracy.map { $0.fixed(1) } ?? "",
      ]
      bytes.append(contentsOf: Array((fields.joined(separator: ",") + "\r\n").utf8))
    }
    segment = point.segment
  }

  /// The document's end (and, for GeoJSON, the last segment's feature).
  mutating func end(into bytes: inout [UInt8]) {
    switch format {
    case .gpx:
      if segment != nil { bytes.append(contentsOf: Array("    </trkseg>\n  </trk>\n".utf8)) }
      bytes.append(contentsOf: Array("</gpx>\n".utf8))
    case .geojson:
      writeFeature(into: &bytes)
      bytes.append(contentsOf: FeatureCollectionFrame.closing)
    case .csv:
      break
    }
  }

  /// Writes the feature of the segment held, if any: a LineString, or a Point for a segment of
  /// one point (a LineString needs two positions, RFC 7946 §3.1.4).
  private mutating func writeFeature(into bytes: inout [UInt8]) {
    guard let first = segmentPoints.first, let last = segmentPoints.last else { return }
    frame.appendSeparator(to: &bytes)
    func position(_ point: TrackPoint) {
      bytes.append(UInt8(ascii: "["))
      JSONLine.appendFixed(point.coordinate.longitude, decimals: 7, to: &bytes)
      bytes.append(UInt8(ascii: ","))
      JSONLine.appendFixed(point.coordinate.latitude, decimals: 7, to: &bytes)
      if let altitude = point.altitude {
        bytes.append(UInt8(ascii: ","))
        JSONLine.appendFixed(altitude, decimals: 2, to: &bytes)
      }
      bytes.append(UInt8(ascii: "]"))
    }
    let isLine = segmentPoints.count > 1
    bytes.append(
      contentsOf: Array(
        #"{"type":"Feature","geometry":{"type":"\#(isLine ? "LineString" : "Point")","coordinates":"#
          .utf8))
    if isLine {
      bytes.append(UInt8(ascii: "["))
      for (index, point) in segmentPoints.enumerated() {
        if index > 0 { bytes.append(UInt8(ascii: ",")) }
        position(point)
      }
      bytes.append(UInt8(ascii: "]"))
    } else {
      position(first)
    }
    var properties = JSONLine()
    properties.add("segment", first.segment)
    properties.add("start", first.timestamp)
    properties.add("end", last.timestamp)
    properties.add("points", segmentPoints.count)
    var times: [UInt8] = [UInt8(ascii: "[")]
    for (index, point) in segmentPoints.enumerated() {
      if index > 0 { times.append(UInt8(ascii: ",")) }
      times.append(UInt8(ascii: "\""))
      Timestamp.append(point.timestamp, to: &times)
      times.append(UInt8(ascii: "\""))
    }
    times.append(UInt8(ascii: "]"))
    properties.add("times", rawJSON: String(decoding: times, as: UTF8.self))
    bytes.append(contentsOf: Array(#"},"properties":"#.utf8))
    bytes.append(contentsOf: properties.closed)
    bytes.append(UInt8(ascii: "}"))
    segmentPoints.removeAll(keepingCapacity: true)
  }
}
