import CMosquitto
import Glibc

/// libmosquitto's functions, loaded at run time (`dlopen` of Debian's `libmosquitto.so.1`) the
/// first time MQTT starts: a daemon without `mqtt` maps neither libmosquitto nor the OpenSSL it
/// brings. The header (`CMosquitto`) gives the types and constants only; nothing links it.
struct MosquittoLibrary: @unchecked Sendable {
  // @unchecked: immutable after `load()`; C function pointers.
  typealias Handle = OpaquePointer
  let lib_init: @convention(c) () -> Int32
  let new: @convention(c) (UnsafePointer<CChar>?, Bool, UnsafeMutableRawPointer?) -> Handle?
  let destroy: @convention(c) (Handle?) -> Void
  let int_option: @convention(c) (Handle?, mosq_opt_t, Int32) -> Int32
  let username_pw_set:
    @convention(c) (Handle?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
  let tls_set:
    @convention(c) (
      Handle?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
      UnsafePointer<CChar>?,
      (@convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?) ->
        Int32)?
    ) -> Int32
  let tls_opts_set:
    @convention(c) (Handle?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
  let tls_insecure_set: @convention(c) (Handle?, Bool) -> Int32
  let connect_callback_set:
    @convention(c) (
      Handle?, (@convention(c) (Handle?, UnsafeMutableRawPointer?, Int32) -> Void)?
    ) -> Void
  let connect_v5_callback_set:
    @convention(c) (
      Handle?,
      (@convention(c) (Handle?, UnsafeMutableRawPointer?, Int32, Int32, OpaquePointer?) -> Void)?
    ) -> Void
  let disconnect_v5_callback_set:
    @convention(c) (
      Handle?, (@convention(c) (Handle?, UnsafeMutableRawPointer?, Int32, OpaquePointer?) -> Void)?
    ) -> Void
  let publish_callback_set:
    @convention(c) (
      Handle?, (@convention(c) (Handle?, UnsafeMutableRawPointer?, Int32) -> Void)?
    ) -> Void
  let message_callback_set:
    @convention(c) (
      Handle?,
      (@convention(c) (Handle?, UnsafeMutableRawPointer?, UnsafePointer<mosquitto_message>?) ->
        Void)?
    ) -> Void
  let will_set:
    @convention(c) (Handle?, UnsafePointer<CChar>?, Int32, UnsafeRawPointer?, Int32, Bool) -> Int32
  let connect: @convention(c) (Handle?, UnsafePointer<CChar>?, Int32, Int32) -> Int32
  let connect_bind_v5:
    @convention(c) (
      Handle?, UnsafePointer<CChar>?, Int32, Int32, UnsafePointer<CChar>?, OpaquePointer?
    ) -> Int32
  let property_add_int32:
    @convention(c) (UnsafeMutablePointer<OpaquePointer?>?, Int32, UInt32) -> Int32
  let property_free_all: @convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Void
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
  let reason_string: @convention(c) (Int32) -> UnsafePointer<CChar>
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
        lib_init: try symbol("lib_init"),
        new: try symbol("new"),
        destroy: try symbol("destroy"),
        int_option: try symbol("int_option"),
        username_pw_set: try symbol("username_pw_set"),
        tls_set: try symbol("tls_set"),
        tls_opts_set: try symbol("tls_opts_set"),
        tls_insecure_set: try symbol("tls_insecure_set"),
        connect_callback_set: try symbol("connect_callback_set"),
        connect_v5_callback_set: try symbol("connect_v5_callback_set"),
        disconnect_v5_callback_set: try symbol("disconnect_v5_callback_set"),
        publish_callback_set: try symbol("publish_callback_set"),
        message_callback_set: try symbol("message_callback_set"),
        will_set: try symbol("will_set"),
        connect: try symbol("connect"),
        connect_bind_v5: try symbol("connect_bind_v5"),
        property_add_int32: try symbol("property_add_int32"),
        property_free_all: try symbol("property_free_all"),
        loop: try symbol("loop"),
        disconnect: try symbol("disconnect"),
        publish: try symbol("publish"),
        subscribe: try symbol("subscribe"),
        strerror: try symbol("strerror"),
        reason_string: try symbol("reason_string"),
        socket: try symbol("socket"))
    } catch {
      return nil
    }
  }
}
