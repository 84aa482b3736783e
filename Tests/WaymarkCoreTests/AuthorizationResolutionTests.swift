import Testing
import WaymarkCore

@Suite("AuthorizationResolution")
struct AuthorizationResolutionTests {
  struct Unreadable: Error {}

  static let always = AuthorizationState(status: .authorizedAlways)
  static let once = AuthorizationState(status: .authorizedWhenInUse, accuracy: .reduced)

  @Test("the switch first: neither the store nor the session is consulted")
  func switchFirst() {
    var asked = false
    let resolution = AuthorizationResolution.resolve(
      servicesEnabled: false,
      stored: {
        asked = true
        return Self.always
      },
      session: { Self.once })
    #expect(resolution.state == AuthorizationState(status: .restricted))
    #expect(!asked)
    // The control: enabled, the same store decides.
    #expect(
      AuthorizationResolution.resolve(
        servicesEnabled: true, stored: { Self.always }, session: { Self.once }
      ).state == Self.always)
  }

  @Test("an unreadable store gives nothing, whatever the session says")
  func unreadableStore() {
    let resolution = AuthorizationResolution.resolve(
      servicesEnabled: true, stored: { throw Unreadable() }, session: { Self.once })
    guard case .grantsUnreadable(let error) = resolution else {
      Issue.record("resolved as \(resolution)")
      return
    }
    #expect(error is Unreadable)
    #expect(resolution.state.status == .restricted)
    #expect(!resolution.isStored)
  }

  @Test("a stored grant wins over the session's answer, which counts only without one")
  func storedThenSession() {
    let stored = AuthorizationResolution.resolve(
      servicesEnabled: true, stored: { Self.always }, session: { Self.once })
    #expect(stored.isStored)
    #expect(stored.state == Self.always)
    let denied = AuthorizationState(status: .denied)
    #expect(
      AuthorizationResolution.resolve(
        servicesEnabled: true, stored: { denied }, session: { Self.once }
      ).state == denied)
    for none in [nil, AuthorizationState(status: .notDetermined)] {
      let session = AuthorizationResolution.resolve(
        servicesEnabled: true, stored: { none }, session: { Self.once })
      #expect(!session.isStored)
      #expect(session.state == Self.once)
      let nothing = AuthorizationResolution.resolve(
        servicesEnabled: true, stored: { none }, session: { nil })
      #expect(nothing.state == AuthorizationState(status: .notDetermined))
    }
  }
}
