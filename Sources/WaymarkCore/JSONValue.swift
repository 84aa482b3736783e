/// A parsed JSON value. Objects keep their members in order.
package enum JSONValue: Sendable {
  case null
  case bool(Bool)
  case number(Double)
  case string(String)
  case array([JSONValue])
  case object([(key: String, value: JSONValue)])

  /// The member `key` of an object (the last one when repeated), or `nil`.
  package subscript(key: String) -> JSONValue? {
    guard case .object(let members) = self else { return nil }
    return members.last(where: { $0.key == key })?.value
  }
}
