// swift-tools-version:6.0
// An application outside the Waymark repository: a package of its own that depends on Waymark by
// path, as yours would (or by URL: `.package(url: "…/waymark.git", branch: "main")`).
import PackageDescription

let package = Package(
  name: "LocationApp",
  dependencies: [
    // `name:` fixes the package name, so the products below resolve whatever the checkout's
    // directory is called.
    .package(name: "Waymark", path: "../..")
  ],
  targets: [
    .executableTarget(
      name: "location-app",
      dependencies: [
        // LocationManager, the value types, waymarkd's client (DaemonLocationService)
        .product(name: "Waymark", package: "Waymark"),
        .product(name: "NMEA", package: "Waymark"),  // NMEAReplay: a log as a FixSource
        .product(name: "GPSD", package: "Waymark"),  // GPSDSource: a receiver through gpsd
      ]
    )
  ],
  swiftLanguageModes: [.v6]
)
