import CMosquitto
import Glibc

/// libmosquitto's functions, loaded at run time (`dlopen` of Debian's `libmosquitto.so.1`) the
/// first time MQTT starts: a daemon without `mqtt` maps neither libmosquitto nor the OpenSSL it
/// brings. The header (`CMosquitto`) gives the types and constants only; nothing links it.
struct MosquittoLibrary: @unchecked Sendable {
  // @unchecked: immutable after `load()`; C function pointers.
  typealias Handle = OpaquePointer
  let libInit: @convention(c) () -> Int32
  let new: @convention(c) (UnsafePointer<CChar>?, Bool, UnsafeMutableRawPointer?) -> Handle?
  let destroy: @convention(c) (Handle?) -> Void
  let intOption: @convention(c) (Handle?, mosq_opt_t, Int32) -> Int32
  let usernamePwSet: @convention(c) (Handle?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
  let tlsSet:
    @convention(c) (
      Handle?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
      UnsafePointer<CChar>?,
      (
        @convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?) ->
          Int32
      )?
    ) -> Int32
  let tlsOptsSet:
    @convention(c) (Handle?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
  let tlsInsecureSet: @convention(c) (Handle?, Bool) -> Int32
  let connectCallbackSet:
    @convention(c) (
      Handle?, (@convention(c) (Handle?, UnsafeMutableRawPointer?, Int32) -> Void)?
    ) -> Void
  let connectV5CallbackSet:
    @convention(c) (
      Handle?,
      (@convention(c) (Handle?, UnsafeMutableRawPointer?, Int32, Int32, OpaquePointer?) -> Void)?
    ) -> Void
  let disconnectV5CallbackSet:
    @convention(c) (
      Handle?, (@convention(c) (Handle?, UnsafeMutableRawPointer?, Int32, OpaquePointer?) -> Void)?
    ) -> Void
  let publishCallbackSet:
    @convention(c) (
      Handle?, (@convention(c) (Handle?, UnsafeMutableRawPointer?, Int32) -> Void)?
    ) -> Void
  let messageCallbackSet:
    @convention(c) (
      Handle?,
      (
        @convention(c) (Handle?, UnsafeMutableRawPointer?, UnsafePointer<mosquitto_message>?) ->
          Void
      )?
    ) -> Void
  let willSet:
    @convention(c) (Handle?, UnsafePointer<CChar>?, Int32, UnsafeRawPointer?, Int32, Bool) -> Int32
  let connect: @convention(c) (Handle?, UnsafePointer<CChar>?, Int32, Int32) -> Int32
  let connectBindV5:
    @convention(c) (
      Handle?, UnsafePointer<CChar>?, Int32, Int32, UnsafePointer<CChar>?, OpaquePointer?
    ) -> Int32
  let propertyAddInt32:
    @convention(c) (UnsafeMutablePointer<OpaquePointer?>?, Int32, UInt32) -> Int32
  let propertyFreeAll: @convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Void
  let loop: @convention(c) (Handle?, Int32, Int32) -> Int32
  let disconnect: @convention(c) (Handle?) -> Int32
  let publish:
    @convention(c) (
      Handle?, UnsafeMutablePointer<Int32>?, UnsafePointer<CChar>?, Int32, UnsafeRawPointer?,
      Int32, Bool
    ) -> Int32
  let subscribe:
    @convention(c) (Handle?, UnsafeMutablePointer<Int32>?, UnsafePointer<CChar>?, Int32) -> Int32
  let strerror: @convention(c) (Int32) -> UnsafePointer<CChar>
  let reasonString: @convention(c) (Int32) -> UnsafePointer<CChar>
  let socket: @convention(c) (Handle?) -> Int32

  /// The library, loaded once; `nil` when `libmosquitto.so.1` or one of its functions is missing.
  static let shared: MosquittoLibrary? = load()

  /// The library `start()` loaded: only called after ``shared`` was found.
  static var loaded: MosquittoLibrary { shared! }

  private struct Missing: Error {}

  private static func load() -> MosquittoLibrary? {
    guard let library = dlopen("libmosquitto.so.1", RTLD_NOW | RTLD_LOCAL) else { return nil }
    func symbol<Function>(_ name: String) throws -> Function {
      guard let address = dlsym(library, "mosquitto_" + name) else { throw Missing() }
      return unsafeBitCast(address, to: Function.self)
    }
    do {
      return MosquittoLibrary(
        libInit: try symbol("lib_init"),
        new: try symbol("new"),
        destroy: try symbol("destroy"),
        intOption: try symbol("int_option"),
        usernamePwSet: try symbol("username_pw_set"),
        tlsSet: try symbol("tls_set"),
        tlsOptsSet: try symbol("tls_opts_set"),
        tlsInsecureSet: try symbol("tls_insecure_set"),
        connectCallbackSet: try symbol("connect_callback_set"),
        connectV5CallbackSet: try symbol("connect_v5_callback_set"),
        disconnectV5CallbackSet: try symbol("disconnect_v5_callback_set"),
        publishCallbackSet: try symbol("publish_callback_set"),
        messageCallbackSet: try symbol("message_callback_set"),
        willSet: try symbol("will_set"),
        connect: try symbol("connect"),
        connectBindV5: try symbol("connect_bind_v5"),
        propertyAddInt32: try symbol("property_add_int32"),
        propertyFreeAll: try symbol("property_free_all"),
        loop: try symbol("loop"),
        disconnect: try symbol("disconnect"),
        publish: try symbol("publish"),
        subscribe: try symbol("subscribe"),
        strerror: try symbol("strerror"),
        reasonString: try symbol("reason_string"),
        socket: try symbol("socket"))
    } catch {
      return nil
    }
  }
}
