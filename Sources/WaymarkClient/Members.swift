import WaymarkCore

/// The members of one object, looked up by name; a missing required one is an error naming it.
struct Members {
  let className: String
  let json: JSONValue

  private func failure(_ key: String, _ expected: String) -> DaemonMessageError {
    DaemonMessageError("\(className): \"\(key)\" must be \(expected)")
  }

  func optionalString(_ key: String) throws(DaemonMessageError) -> String? {
    switch json[key] {
    case nil, .null?: return nil
    case .string(let text)?: return text
    default: throw failure(key, "a string")
    }
  }

  func optionalNumber(_ key: String) throws(DaemonMessageError) -> Double? {
    switch json[key] {
    case nil, .null?: return nil
    case .number(let number)? where number.isFinite: return number
    default: throw failure(key, "a number")
    }
  }

  func optionalBool(_ key: String) throws(DaemonMessageError) -> Bool? {
    switch json[key] {
    case nil, .null?: return nil
    case .bool(let flag)?: return flag
    default: throw failure(key, "true or false")
    }
  }

  func string(_ key: String) throws(DaemonMessageError) -> String {
    guard let text = try optionalString(key) else { throw failure(key, "a string") }
    return text
  }

  func number(_ key: String) throws(DaemonMessageError) -> Double {
    guard let number = try optionalNumber(key) else { throw failure(key, "a number") }
    return number
  }

  func bool(_ key: String) throws(DaemonMessageError) -> Bool {
    guard let flag = try optionalBool(key) else { throw failure(key, "true or false") }
    return flag
  }

  /// A whole number that a JSON reader keeps exactly (below 2^53 in magnitude).
  func optionalInteger(_ key: String) throws(DaemonMessageError) -> Int? {
    guard let number = try optionalNumber(key) else { return nil }
    guard number == number.rounded(), abs(number) < 9e15 else { throw failure(key, "an integer") }
    return Int(number)
  }

  func integer(_ key: String) throws(DaemonMessageError) -> Int {
    guard let number = try optionalInteger(key) else { throw failure(key, "an integer") }
    return number
  }

  /// The string member `key` read by `make` (a raw value, a time).
  func parsed<T>(_ key: String, _ make: (String) -> T?) throws(DaemonMessageError) -> T {
    try parsed(try string(key), key, make)
  }

  /// `text`, the member `key`, read by `make`.
  func parsed<T>(_ text: String, _ key: String, _ make: (String) -> T?) throws(DaemonMessageError)
    -> T
  {
    guard let made = make(text) else {
      throw failure(key, "one of the protocol's values, not '\(LogText.escaped(text))'")
    }
    return made
  }
}
