import FoundationEssentials
import Glibc
import WaymarkCore

/// Candidate places from recorded stays: density-based clustering (DBSCAN) of the stays'
/// centres, with distances on the Earth (`Coordinate.distance(to:)`).
///
/// A stay with at least `minimumVisits` stays (itself included) within `radiusMeters` is a
/// core stay; core stays within `radiusMeters` of each other are one place, and the other stays
/// within `radiusMeters` of one of its core stays belong to it. Stays that belong to no place
/// (errands made once or twice) are left out. A place's centre is the mean of its stays'
/// centres weighted by their accuracy (1 / accuracy²), its radius the distance from the centre
/// that holds 95 % of them, at least `radiusMeters`.
///
/// Neighbours are found on a grid of cells `radiusMeters / √2` wide (every pair of stays in one
/// cell is within the radius: a cell with `minimumVisits` stays is all core without a distance),
/// so 100,000 stays cluster in well under a second.
public struct PlaceSuggester: Sendable {
  /// A candidate place.
  public struct Suggestion: Sendable, Hashable {
    /// The error-weighted centre of its stays.
    public var coordinate: Coordinate
    /// Distance from the centre that holds 95 % of its stays, at least the clustering radius,
    /// metres.
    public var radiusMeters: Double
    /// How many stays it holds.
    public var visitCount: Int
    /// The first arrival of its stays.
    public var firstArrival: Date
    /// The last arrival of its stays.
    public var lastArrival: Date
  }

  /// Stays that make a place: a place needs this many within `radiusMeters` of one of them.
  public var minimumVisits: Int
  /// Neighbourhood radius, metres.
  public var radiusMeters: Double

  /// Creates a suggester (defaults: 3 visits within 50 m).
  public init(minimumVisits: Int = 3, radiusMeters: Double = 50) {
    self.minimumVisits = max(1, minimumVisits)
    self.radiusMeters = max(1, radiusMeters)
  }

  /// The candidate places among `stays`, most visited first (then north to south, west to
  /// east): the same stays always give the same list.
  public func suggestions(_ stays: [Stay]) -> [Suggestion] {
    let points = stays.filter { $0.coordinate.isValid }
    guard !points.isEmpty else { return [] }
    let grid = StayGrid(points.map(\.coordinate), cellMeters: radiusMeters / 2.squareRoot())
    let count = points.count
    // Core stays.
    var isCore = [Bool](repeating: false, count: count)
    for (_, members) in grid.cells where members.count >= minimumVisits {
      for index in members { isCore[index] = true }
    }
    for index in 0..<count where !isCore[index] {
      var found = 1  // itself
      grid.forEachNeighbour(of: index, within: 2) { other in
        if points[index].coordinate.distance(to: points[other].coordinate) <= radiusMeters {
          found += 1
        }
        return found < minimumVisits
      }
      isCore[index] = found >= minimumVisits
    }
    // Core stays within the radius of each other: one place (union-find on stays).
    var parent = Array(0..<count)
    func root(_ index: Int) -> Int {
      var index = index
      while parent[index] != index {
        parent[index] = parent[parent[index]]
        index = parent[index]
      }
      return index
    }
    for (_, members) in grid.cells {
      let cores = members.filter { isCore[$0] }
      guard let first = cores.first else { continue }
      for other in cores.dropFirst() { parent[root(other)] = root(first) }
    }
    for (key, members) in grid.cells {
      guard let first = members.first(where: { isCore[$0] }) else { continue }
      let cores = members.filter { isCore[$0] }
      for neighbourKey in grid.neighbourKeys(of: key, within: 2) where neighbourKey > key {
        guard let others = grid.cells[neighbourKey],
          let otherFirst = others.first(where: { isCore[$0] }), root(first) != root(otherFirst)
        else { continue }
        let linked = cores.contains { index in
          others.contains { other in
            isCore[other]
              && points[index].coordinate.distance(to: points[other].coordinate) <= radiusMeters
          }
        }
        if linked { parent[root(otherFirst)] = root(first) }
      }
    }
    // Border stays join a place of a core stay within the radius.
    var cluster = [Int](repeating: -1, count: count)
    for index in 0..<count where isCore[index] { cluster[index] = root(index) }
    for index in 0..<count where !isCore[index] {
      grid.forEachNeighbour(of: index, within: 2) { other in
        if isCore[other],
          points[index].coordinate.distance(to: points[other].coordinate) <= radiusMeters
        {
          cluster[index] = root(other)
          return false
        }
        return true
      }
    }
    var members: [Int: [Int]] = [:]
    for index in 0..<count where cluster[index] >= 0 {
      members[cluster[index], default: []].append(index)
    }
    return members.values.map { suggestion(members: $0.map { points[$0] }) }.sorted {
      ($0.visitCount, -$0.coordinate.latitude, $0.coordinate.longitude)
        > ($1.visitCount, -$1.coordinate.latitude, $1.coordinate.longitude)
    }
  }

  private func suggestion(members: [Stay]) -> Suggestion {
    let anchor = members[0].coordinate
    let metersPerDegreeLongitude = Coordinate.metersPerDegree * cos(anchor.latitude * .pi / 180)
    var weight = 0.0
    var east = 0.0
    var north = 0.0
    for stay in members {
      let w = 1 / pow(max(1, stay.horizontalAccuracy), 2)
      var dLongitude = stay.coordinate.longitude - anchor.longitude
      if dLongitude > 180 { dLongitude -= 360 } else if dLongitude < -180 { dLongitude += 360 }
      weight += w
      east += w * dLongitude * metersPerDegreeLongitude
      north += w * (stay.coordinate.latitude - anchor.latitude) * Coordinate.metersPerDegree
    }
    var longitude = anchor.longitude + east / weight / max(metersPerDegreeLongitude, 1e-6)
    longitude = (longitude + 540).truncatingRemainder(dividingBy: 360) - 180
    let centre = Coordinate(
      latitude: anchor.latitude + north / weight / Coordinate.metersPerDegree, longitude: longitude)
    let distances = members.map { $0.coordinate.distance(to: centre) }.sorted()
    let holding = distances[
      min(distances.count - 1, Int(saturating: (Double(distances.count) * 0.95)))]
    let arrivals = members.map(\.arrivalDate)
    return Suggestion(
      coordinate: centre, radiusMeters: max(radiusMeters, holding.rounded(.up)),
      visitCount: members.count, firstArrival: arrivals.min()!, lastArrival: arrivals.max()!)
  }
}
