// `import Waymark` is all an application needs for the manager *and* the values it hands out:
// `Location`, `Coordinate`, `Fix`, `FixSource`, `AuthorizationStatus`, `Grant`, `Place`, `Visit`
// and the other types of WaymarkCore, which this module's public API is written in.
@_exported import WaymarkCore
