import Foundation
import Testing
import WaymarkCore
import WaymarkStore
import WaymarkTesting

@testable import WaymarkCLI

/// A year of history on the interactive map (``SyntheticYear``): the track is thinned for each
/// zoom level, so the page draws few vertices for the whole year and the recording's detail
/// close up.
@Suite(.serialized) struct MapYearTests {
  @Test("each level keeps at most the points of the next, and the finest keeps the detail")
  func levels() throws {
    let points = SyntheticYear.points()
    var segments: [[Coordinate]] = []
    var segment = -1
    for point in points {
      if point.segment != segment { segments.append([]) }
      segments[segments.count - 1].append(point.coordinate)
      segment = point.segment
    }
    let levels = MapTrackLevels(segments).levels
    #expect(levels.map(\.zoom) == MapTrackLevels.zooms)
    for (coarse, fine) in zip(levels, levels.dropFirst()) {
      #expect(coarse.pointCount <= fine.pointCount, "zoom \(coarse.zoom) and \(fine.zoom)")
    }
    // 220,000 points of the same drives again and again: a few thousand show at zoom 14.
    #expect(points.count > 200_000)
    let zoom14 = try #require(levels.first { $0.zoom == 14 })
    #expect(zoom14.pointCount < points.count / 20, "\(zoom14.pointCount)")
    let finest = try #require(levels.last)
    #expect(finest.pointCount > points.count * 9 / 10, "\(finest.pointCount)")
    for corner in SyntheticYear.squareCorners {
      let nearest = finest.lines.joined().map { $0.distance(to: corner) }.min() ?? .infinity
      #expect(nearest < 0.5, "corner \(corner): \(nearest) m")
    }
  }

  @Test(
    "a year in the browser: few vertices at the zoom that shows it all, the detail at zoom 17",
    .enabled(if: MapLeafletTests.canRun, MapLeafletTests.needs))
  func year() throws {
    let year = try DemoStore(empty: "year.db")
    let points = SyntheticYear.points()
    try Database(path: year.store).write { _ = try TrackRepository($0).insert(points) }
    let file = year.file("year.html")
    let run = try CommandRun.waymark([
      "map", "--store", year.store, "--output", file.path, "--tiles", "none",
    ])
    #expect(run.status == 0, "\(run.stderr)")
    let page = try String(contentsOf: file, encoding: .utf8)
    let corners = SyntheticYear.squareCorners.map {
      "[\($0.latitude.fixed(7)), \($0.longitude.fixed(7))]"
    }.joined(separator: ", ")
    let findings = """
      probe.corners = [\(corners)].map(function (c) {
        var p = window.waymark.map.latLngToLayerPoint(c);
        return [p.x, p.y];
      });
      probe.zoom = window.waymark.map.getZoom();
      """
    let probed = MapLeafletTests.probed(page, findings: findings)
    let whole = try MapLeafletTests.load(probed, in: year.directory, name: "whole.html")
    let wholeZoom = try #require(whole.probe["zoom"] as? Int, "\(whole.probe)")
    let drawn = whole.trackVertices.count
    // The whole year at the zoom that fits it: a drawing's worth, not the recording's.
    #expect(drawn > 100 && drawn < 1_500, "\(drawn) of \(points.count) at zoom \(wholeZoom)")
    #expect(whole.hasNoErrors, "\(whole.probe)")

    let centre = SyntheticYear.home.offset(by: 28, bearingDegrees: 45)
    let close = try MapLeafletTests.load(
      probed, in: year.directory, name: "close.html",
      fragment: "view=\(centre.latitude.fixed(7)),\(centre.longitude.fixed(7)),17")
    #expect(close.probe["zoom"] as? Int == 17, "\(close.probe)")
    #expect(close.probe["level"] as? Int == MapTrackLevels.finestZoom, "\(close.probe)")
    let vertices = close.trackVertices
    let projected = try #require(close.probe["corners"] as? [[Double]])
    #expect(projected.count == 4)
    for corner in projected {
      let nearest = vertices.map { hypot($0.x - corner[0], $0.y - corner[1]) }.min() ?? .infinity
      #expect(nearest < 3, "corner at \(corner): nearest vertex \(nearest) px")
    }
  }
}
