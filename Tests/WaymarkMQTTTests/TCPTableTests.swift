import Foundation
import Glibc
import Testing

@testable import WaymarkMQTT

/// The kernel's TCP tables as `LocalBroker` reads them.
@Suite struct TCPTableTests {
  /// Rows as `/proc/net/tcp` and `tcp6` print them: the address words in the kernel's byte
  /// order, the port in hex, the state and the owner's uid.
  @Test func rowsOfBothTablesParse() throws {
    let v4 = try #require(
      TCPTable.row(
        "   1: 0100007F:075B 00000000:0000 0A 00000000:00000000 00:00000000 00000000   102"
          + "        0 833557 1 0000000000000000 100 0 0 10 0"))
    #expect(v4.local == TCPTable.Endpoint(address: TCPTable.Address("127.0.0.1")!, port: 1883))
    #expect(v4.state == 10 && v4.uid == 102)
    let v6 = try #require(
      TCPTable.row(
        "   0: 00000000000000000000000001000000:D8F1 00000000000000000000000000000000:0000 0A"
          + " 00000000:00000000 00:00000000 00000000     0        0 833562 1 0000000010b47568"))
    #expect(v6.local == TCPTable.Endpoint(address: TCPTable.Address("::1")!, port: 0xD8F1))
    #expect(TCPTable.Address("::ffff:127.0.0.1") == TCPTable.Address("127.0.0.1")!.mapped)
    #expect(TCPTable.row("  sl  local_address rem_address   st tx_queue rx_queue") == nil)
    #expect(TCPTable.row("   2: 0100007F:ZZZZ 00000000:0000 0A 0 0 0 0") == nil)
  }

  /// A socket this test listens on is found with its owner (us); the same port without a
  /// listener has none.
  @Test func aLiveListenerIsFoundWithItsOwner() throws {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    var size = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, size) == 0 && getsockname(descriptor, $0, &size) == 0
      }
    }
    try #require(bound)
    let port = UInt16(bigEndian: address.sin_port)
    let loopback = TCPTable.Address("127.0.0.1")!
    #expect(TCPTable.listeners(accepting: loopback, port: port).isEmpty)
    try #require(listen(descriptor, 1) == 0)
    #expect(TCPTable.listeners(accepting: loopback, port: port) == [getuid()])
  }
}
