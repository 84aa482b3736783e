// swift-tools-version:6.0
// An iOS 17 program on Linux: CLLocationUpdate.liveUpdates() and a CLMonitor with two circles,
// whose source differs from the iOS one only in its import (see README, "Porting from
// CoreLocation"). A package of its own that depends on Waymark by path, as yours would.
import PackageDescription

let package = Package(
  name: "LiveApp",
  dependencies: [
    // `name:` fixes the package name, so the product below resolves whatever the checkout's
    // directory is called.
    .package(name: "Waymark", path: "../..")
  ],
  targets: [
    .executableTarget(
      name: "live-app",
      dependencies: [
        // CoreLocation's names for Waymark's types; re-exports Waymark.
        .product(name: "WaymarkCoreLocation", package: "Waymark")
      ]
    )
  ],
  swiftLanguageModes: [.v6]
)
