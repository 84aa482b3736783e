// The server's module re-exports its client (`DaemonLocationService`, `DaemonMessage`,
// `BrokerConnection`), which lived here before WaymarkClient was split out, so that code
// importing WaymarkBroker for them keeps compiling.
@_exported import WaymarkClient
