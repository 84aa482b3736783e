import CMosquitto

/// libmosquitto's functions, loaded at run time (`dlopen` of Debian's `libmosquitto.so.1`) the
/// first time MQTT starts: a daemon without `mqtt` maps neither libmosquitto nor the OpenSSL it
/// brings. Nothing links the library: `CMosquitto` gives its headers and the table
/// `waymark_mosquitto_load` fills, whose members have the header's own types (the way `CCurl`
/// loads libcurl for the Traccar output).
///
/// One table for the process, not one per publisher: libmosquitto's callbacks are C functions
/// without context, and the session reset's callback disconnects through it.
enum MosquittoLibrary {
  /// The table, loaded once; `nil` when `libmosquitto.so.1` or one of its functions is missing.
  static let shared: waymark_mosquitto_api? = {
    var api = waymark_mosquitto_api()
    return waymark_mosquitto_load(&api) != 0 ? api : nil
  }()

  /// The table `MQTTPublisher.start()` found: used only after ``shared`` was checked.
  static var loaded: waymark_mosquitto_api { shared! }
}
