import Testing
import WaymarkCore

@testable import WaymarkGazetteer

/// The built-in gazetteer: the table read whole, nearest towns that a scan of every town
/// confirms, names found without their accents, and no trap on any coordinate.
@Suite struct GazetteerTests {
  let gazetteer = Gazetteer.bundled

  @Test func theWholeTableIsRead() {
    // GeoNames' cities15000 as generated: every line a town (a line the reader skipped would
    // make this smaller).
    #expect(gazetteer.count == 34_006)
    #expect(gazetteer.isCountry("CH") && gazetteer.isCountry("switzerland"))
    #expect(!gazetteer.isCountry("Atlantis"))
  }

  @Test func aPointInATownIsNearestToIt() throws {
    let (zurich, meters) = try #require(
      gazetteer.nearest(to: Coordinate(latitude: 47.3769, longitude: 8.5417), within: 20_000))
    #expect(
      zurich.name == "Zürich" && zurich.countryCode == "CH" && zurich.country == "Switzerland")
    #expect(zurich.timeZoneIdentifier == "Europe/Zurich" && zurich.region == nil)
    #expect(meters < 2_000)
    let (boston, _) = try #require(
      gazetteer.nearest(to: Coordinate(latitude: 42.3601, longitude: -71.0589), within: 20_000))
    #expect(boston.name == "Boston" && boston.region == "MA" && boston.countryCode == "US")
    // Control: mid-Atlantic, no town within 300 km.
    #expect(gazetteer.nearest(to: Coordinate(latitude: 0, longitude: -30), within: 300_000) == nil)
  }

  @Test func aCitysDistrictIsNamedUnderTheCity() throws {
    // Spandau is a town of the table and Berlin's district: the city is the locality.
    let spandau = try #require(
      gazetteer.locality(of: Coordinate(latitude: 52.5505, longitude: 13.199)))
    #expect(spandau.town.name == "Berlin" && spandau.district?.name == "Spandau")
    // Control: Potsdam, 26 km from Berlin's centre, beyond its extent, is itself.
    let potsdam = try #require(
      gazetteer.locality(of: Coordinate(latitude: 52.3989, longitude: 13.0657)))
    #expect(potsdam.town.name == "Potsdam" && potsdam.district == nil)
    // Far from every town: nothing (mid-Atlantic).
    #expect(gazetteer.locality(of: Coordinate(latitude: 0, longitude: -30)) == nil)
  }

  @Test func theGridFindsWhatAScanOfEveryTownFinds() throws {
    // Seeded points everywhere, poles and the antimeridian among them, against the nearest
    // town by a scan of the whole table.
    var generator = SeededGenerator(seed: 36)
    var points = (0..<400).map { _ in
      Coordinate(
        latitude: Double.random(in: -90...90, using: &generator),
        longitude: Double.random(in: -180...180, using: &generator))
    }
    points += [
      Coordinate(latitude: -17.8, longitude: 179.99),
      Coordinate(latitude: -17.8, longitude: -179.99),
      Coordinate(latitude: 89.9, longitude: 0), Coordinate(latitude: -89.9, longitude: 10),
      Coordinate(latitude: 69.35, longitude: 88.2), Coordinate(latitude: 64.8, longitude: -147.7),
    ]
    var found = 0
    for point in points {
      for radius in [20_000.0, 300_000, 3_000_000] {
        let expected = gazetteer.scanForNearest(to: point, within: radius)
        let actual = gazetteer.nearest(to: point, within: radius)
        #expect(actual?.town == expected?.town, "\(point) within \(radius)")
        if actual != nil { found += 1 }
      }
    }
    // Positive control: most points find a town within 3,000 km.
    #expect(found > 250)
  }

  @Test func namesMatchWithoutCaseOrAccents() {
    #expect(gazetteer.towns(named: "zurich").first?.name == "Zürich")
    #expect(gazetteer.towns(named: "KRAKOW").first?.name == "Kraków")
    #expect(gazetteer.towns(named: "Paris").first?.countryCode == "FR")
    #expect(gazetteer.towns(named: "Paris", country: "US").first?.region == "TX")
    let springfields = gazetteer.towns(named: "Springfield")
    #expect(springfields.count > 3)
    #expect(
      zip(springfields, springfields.dropFirst()).allSatisfy { $0.population >= $1.population })
    #expect(gazetteer.towns(named: "Springfield", region: "IL").map(\.region) == ["IL"])
    #expect(gazetteer.towns(named: "Nowhereville").isEmpty)
  }

  @Test func extremeValuesFindNothingAndNeverTrap() {
    let berlin = Coordinate(latitude: 52.52, longitude: 13.405)
    for radius in [0, -1, .nan, .infinity, -.infinity, 1e308] {
      let result = gazetteer.nearest(to: berlin, within: radius)
      #expect((result != nil) == (radius == 1e308), "\(radius)")
    }
    for point in [
      Coordinate(latitude: .nan, longitude: 0), Coordinate(latitude: 0, longitude: .infinity),
      Coordinate(latitude: 91, longitude: 0), Coordinate(latitude: 0, longitude: -181),
    ] {
      #expect(gazetteer.nearest(to: point, within: 300_000) == nil)
    }
    #expect(gazetteer.towns(named: "").isEmpty && gazetteer.towns(named: "Paris", limit: 0).isEmpty)
    #expect(gazetteer.towns(named: String(repeating: "ä\u{301}", count: 10_000)).isEmpty)
  }
}

/// SplitMix64, so that the points are the same in every run.
struct SeededGenerator: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
