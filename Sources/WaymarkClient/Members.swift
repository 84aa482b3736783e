import WaymarkCore

/// The members of one object of the location socket's protocol, looked up by name, in both
/// directions: a client reads the daemon's messages with it, the daemon its clients' requests.
/// `null` counts as absent, a repeated member by its last value; a member of the wrong type, or
/// a missing required one, is an error naming it.
///
/// The members are read by the project's one object reader (`JSONObjectReader`, which reads its
/// files too); this names its errors as the protocol does (`WATCH: "distance" must be a
/// number`) and keeps the protocol's numbers finite.
package struct Members {
  /// The class (or the object) named in errors, `WATCH: "distance" must be a number`; `nil`
  /// names the member alone.
  package let className: String?
  /// The object.
  package let json: JSONValue
  /// The object's reader; `nil` when `json` is not an object (every member is absent).
  private let reader: JSONObjectReader?

  /// Reads the members of `json`, naming `className` in errors.
  package init(className: String?, json: JSONValue) {
    self.className = className
    self.json = json
    self.reader = try? JSONObjectReader(json)
  }

  private func failure(_ key: String, _ expected: String) -> DaemonMessageError {
    let member = "\"\(key)\" must be \(expected)"
    return DaemonMessageError(className.map { "\($0): \(member)" } ?? member)
  }

  /// The string member `key`; `nil` when absent or `null`.
  package func optionalString(_ key: String) throws(DaemonMessageError) -> String? {
    do { return try reader?.optionalString(key) } catch { throw failure(key, error.expected) }
  }

  /// The finite number member `key`; `nil` when absent or `null`.
  package func optionalNumber(_ key: String) throws(DaemonMessageError) -> Double? {
    let number: Double?
    do { number = try reader?.optionalDouble(key) } catch { throw failure(key, error.expected) }
    if let number, !number.isFinite { throw failure(key, "a number") }
    return number
  }

  /// The Boolean member `key`; `nil` when absent or `null`.
  package func optionalBool(_ key: String) throws(DaemonMessageError) -> Bool? {
    do { return try reader?.optionalBool(key) } catch { throw failure(key, error.expected) }
  }

  /// The string member `key`, required.
  package func string(_ key: String) throws(DaemonMessageError) -> String {
    guard let text = try optionalString(key) else { throw failure(key, "a string") }
    return text
  }

  /// The finite number member `key`, required.
  package func number(_ key: String) throws(DaemonMessageError) -> Double {
    guard let number = try optionalNumber(key) else { throw failure(key, "a number") }
    return number
  }

  /// The Boolean member `key`, required.
  package func bool(_ key: String) throws(DaemonMessageError) -> Bool {
    guard let flag = try optionalBool(key) else { throw failure(key, "true or false") }
    return flag
  }

  /// A whole number that a JSON reader keeps exactly (below 2^53 in magnitude).
  package func optionalInteger(_ key: String) throws(DaemonMessageError) -> Int? {
    guard let number = try optionalNumber(key) else { return nil }
    guard number == number.rounded(), abs(number) < 9e15 else { throw failure(key, "an integer") }
    return Int(number)
  }

  /// The integer member `key`, required.
  package func integer(_ key: String) throws(DaemonMessageError) -> Int {
    guard let number = try optionalInteger(key) else { throw failure(key, "an integer") }
    return number
  }

  /// The string member `key` read by `make` (a raw value, a time).
  package func parsed<T>(_ key: String, _ make: (String) -> T?) throws(DaemonMessageError) -> T {
    try parsed(try string(key), key, make)
  }

  /// `text`, the member `key`, read by `make`.
  package func parsed<T>(_ text: String, _ key: String, _ make: (String) -> T?)
    throws(DaemonMessageError)
    -> T
  {
    guard let made = make(text) else {
      throw failure(key, "one of the protocol's values, not '\(LogText.escaped(text))'")
    }
    return made
  }
}
