// swift-tools-version:6.0
// An application outside the Waymark repository, written as an iOS 17 app uses CLMonitor: a
// package of its own that depends on Waymark by path, as yours would.
import PackageDescription

let package = Package(
  name: "MonitorApp",
  dependencies: [
    // `name:` fixes the package name, so the products below resolve whatever the checkout's
    // directory is called.
    .package(name: "Waymark", path: "../..")
  ],
  targets: [
    .executableTarget(
      name: "monitor-app",
      dependencies: [
        .product(name: "Waymark", package: "Waymark"),  // Monitor and the value types
        .product(name: "NMEA", package: "Waymark"),  // NMEAReplay: a log as the locations
      ]
    )
  ],
  swiftLanguageModes: [.v6]
)
