// `import Waymark` is all an application needs for the manager *and* the values it hands out:
// `Location`, `Coordinate`, `Fix`, `FixSource`, `AuthorizationStatus`, `Grant`, `Place`, `Visit`
// and the other types of WaymarkCore, which this module's public API is written in; and
// waymarkd's client (`DaemonLocationService`, `DaemonMessage`, `BrokerConnection`): the daemon
// is one of the sources `LocationUpdate.liveUpdates` chooses from.
@_exported import WaymarkClient
@_exported import WaymarkCore
