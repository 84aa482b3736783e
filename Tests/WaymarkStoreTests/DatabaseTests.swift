import CSQLite
import Foundation
import Testing
import WaymarkCore
import WaymarkTesting

@testable import WaymarkStore

@Suite("Database")
struct DatabaseTests {
  @Test("opening sets WAL, foreign keys and the current schema version")
  func pragmas() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("a.db"))
    #expect(database.schemaVersion == Schema.migrations.last?.version)
    let (mode, keys, synchronous) = try database.read { connection in
      (
        try connection.queryFirst("PRAGMA journal_mode") { $0.text(0) },
        try connection.queryFirst("PRAGMA foreign_keys") { $0.int(0) },
        try connection.queryFirst("PRAGMA synchronous") { $0.int(0) }
      )
    }
    #expect(mode == "wal")
    #expect(keys == 1)
    #expect(synchronous == 2)  // FULL
  }

  @Test("an older file is upgraded, keeping its rows")
  func upgradesOlderSchema() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("old.db")
    do {
      let old = try Database(path: path, migrations: Array(Schema.migrations.prefix(1)))
      #expect(old.schemaVersion == 1)
      try old.write { try insertPlacesBeforeGroups($0, [cafe]) }
      // Version 1 has no grants table.
      #expect(throws: StoreError.self) {
        try old.read { try GrantRepository($0).all() }
      }
    }
    let upgraded = try Database(path: path)
    #expect(upgraded.schemaVersion == Schema.migrations.last?.version)
    #expect(try upgraded.read { try PlaceRepository($0).place(id: "cafe") }?.name == "Blue Bottle")
    try upgraded.write {
      try GrantRepository($0).set(
        Grant(clientID: "a", level: .always, accuracy: .full, grantedAt: time(0)))
    }
    #expect(try upgraded.read { try GrantRepository($0).all() }.count == 1)
  }

  @Test("a file from a newer Waymark is refused with a clear message and left alone")
  func refusesNewerSchema() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("new.db")
    let current = Schema.migrations.last!.version
    let future =
      Schema.migrations + [
        Migration(
          version: current + 1, name: "future", sql: "CREATE TABLE future (x INTEGER) STRICT;")
      ]
    _ = try Database(path: path, migrations: future)
    do {
      _ = try Database(path: path)
      Issue.record("opening a newer file succeeded")
    } catch let error as StoreError {
      #expect(error.kind == .newerSchema(found: current + 1, supported: current))
      #expect(error.description.contains("schema version \(current + 1)"))
      #expect(error.description.contains("supports up to version \(current)"))
    }
    // Still the newer version, still usable by the newer code.
    #expect(try Database(path: path, migrations: future).schemaVersion == current + 1)
  }

  @Test("errors carry the SQL and SQLite's message but never the bound values")
  func errorsCarrySQLNotValues() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("e.db"))
    try database.write { try PlaceRepository($0).insert(cafe) }
    var secret = cafe
    secret.name = "SECRET-NAME-4711"
    secret.coordinate = Coordinate(latitude: 12.3456789, longitude: 98.7654321)
    do {
      try database.write { try PlaceRepository($0).insert(secret) }
      Issue.record("duplicate insert succeeded")
    } catch let error as StoreError {
      #expect(error.isConstraintViolation)
      #expect(error.sql?.hasPrefix("INSERT INTO place") == true)
      #expect(error.message.contains("UNIQUE constraint failed: place.id"))
      let text = error.description + String(describing: error) + "\(error)"
      #expect(!text.contains("SECRET"))
      #expect(!text.contains("12.345"))
      #expect(!text.contains("98.765"))
      #expect(!text.contains("cafe"))
    }
    do {
      _ = try database.write {
        try $0.execute("SELECT nonsense FROM nowhere WHERE x = ?", [.text("v")])
      }
      Issue.record("bad SQL ran")
    } catch let error as StoreError {
      #expect(error.sql == "SELECT nonsense FROM nowhere WHERE x = ?")
      #expect(error.message.contains("no such table"))
    }
  }

  @Test("a throwing write rolls back everything it did")
  func rollsBack() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("r.db"))
    struct Stop: Error {}
    #expect(throws: Stop.self) {
      try database.write { connection in
        try PlaceRepository(connection).insert(cafe)
        throw Stop()
      }
    }
    #expect(try database.read { try PlaceRepository($0).count() } == 0)
    // The connection is usable afterwards.
    try database.write { try PlaceRepository($0).insert(cafe) }
    #expect(try database.read { try PlaceRepository($0).count() } == 1)
  }

  @Test("a visit or event needs its place in the store; removing the place keeps both")
  func visitsNeedTheirPlace() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("f.db"))
    do {
      try database.write {
        _ = try VisitRepository($0).insert(Visit(placeID: "nowhere", arrivalDate: time(0)))
      }
      Issue.record("a visit of an unknown place was inserted")
    } catch let error as StoreError {
      #expect(error.kind == .notFound)
      #expect(error.message == "no place with id 'nowhere' in the store")
    }
    #expect(throws: StoreError.self) {
      try database.write { try EventRepository($0).record(StoredEvent(arrival(cafe, at: 0))) }
    }
    try database.write { connection in
      try PlaceRepository(connection).insert(cafe)
      _ = try VisitRepository(connection).insert(Visit(placeID: "cafe", arrivalDate: time(0)))
      try EventRepository(connection).record(StoredEvent(arrival(cafe, at: 0)))
    }
    try database.write { _ = try PlaceRepository($0).remove(id: "cafe") }
    #expect(try database.read { try VisitRepository($0).count() } == 1)
    #expect(try database.read { try EventRepository($0).count() } == 1)
    // Monitor state still goes with its place (a foreign key with ON DELETE CASCADE).
    #expect(
      try database.read { connection in
        try connection.queryFirst("PRAGMA foreign_key_list(monitor_state)") { $0.text(6) }
      } == "CASCADE")
  }

  @Test("a file that is not a database is an error naming the file")
  func notADatabase() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = try directory.write("junk.db", String(repeating: "not sqlite\n", count: 200))
    do {
      _ = try Database(path: path)
      Issue.record("opened junk")
    } catch let error as StoreError {
      #expect(error.resultCode == 26)  // SQLITE_NOTADB
      #expect(error.path == path)
    }
  }

  @Test("releasing the database closes the file")
  func closesOnRelease() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("close.db")
    func openDescriptors() -> Int {
      let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
      return entries.filter {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)"))
          == path
      }.count
    }
    do {
      let database = try Database(path: path)
      try database.write { try PlaceRepository($0).insert(cafe) }
      #expect(openDescriptors() == 1)
    }
    #expect(openDescriptors() == 0)
  }

  @Test("a nested call on the same thread throws instead of deadlocking")
  func nestedCallThrows() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("nested.db"))
    do {
      try database.write { _ in try database.read { _ in } }
      Issue.record("nested read ran")
    } catch let error as StoreError {
      #expect(error.message.hasPrefix("nested database access"))
    }
    // The outer write rolled back and released the lock.
    try database.write { try PlaceRepository($0).insert(cafe) }
  }

  @Test("concurrent writers from many tasks are serialized")
  func serializedWriters() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("c.db"))
    try await withThrowingTaskGroup(of: Void.self) { group in
      for task in 0..<8 {
        group.addTask {
          for index in 0..<25 {
            try database.write { connection in
              try PlaceRepository(connection).insert(
                Place(
                  id: "p\(task)-\(index)", name: "P",
                  coordinate: Coordinate(latitude: 1, longitude: 2)))
            }
          }
        }
      }
      try await group.waitForAll()
    }
    #expect(try database.read { try PlaceRepository($0).count() } == 200)
  }

  @Test("one writer thread holds the only write connection; reads use a read-only one")
  func oneWriterConnection() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("one.db")
    let database = try Database(path: path)
    let threads = Locked<Set<String>>([])
    let done = Locked(0)
    for thread in 0..<4 {
      DetachedThread.start(name: "writer-\(thread)") {
        for index in 0..<10 {
          try? database.write { connection in
            let name = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
            _ = threads.withLock { $0.insert(name ?? "?") }
            try PlaceRepository(connection).insert(
              Place(
                id: "t\(thread)-\(index)", name: "P",
                coordinate: Coordinate(latitude: 1, longitude: 2)))
          }
        }
        done.withLock { $0 += 1 }
        done.signal()
      }
    }
    done.withLock(waitingUntil: { $0 == 4 }, { _ in })
    // Every write ran on the store's thread, none on the four callers'.
    #expect(threads.withLock { $0 } == ["waymark-store\n"])
    #expect(try database.read { try PlaceRepository($0).count() } == 40)
    let modes = OpenFiles.accessModes(of: path)
    #expect(modes.filter { $0 == .readWrite }.count == 1, "\(modes)")
    #expect(modes.filter { $0 == .readOnly }.count == 1, "\(modes)")
    // The read-only connection refuses a write.
    #expect(throws: StoreError.self) {
      try database.read { try $0.execute("DELETE FROM place") }
    }
    #expect(try database.read { try PlaceRepository($0).count() } == 40)
  }

  @Test("a limited page cache holds on each connection, the read one opened after included")
  func limitedPageCache() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("cache.db"))
    func sizes() throws -> (write: Int?, read: Int?) {
      (
        try database.withWriteConnection { try $0.queryFirst("PRAGMA cache_size") { $0.int(0) } },
        try database.read { try $0.queryFirst("PRAGMA cache_size") { $0.int(0) } }
      )
    }
    // Control: SQLite's default (2,000 KiB), on a store that was not limited.
    let unlimited = try Database(path: directory.path("default.db"))
    #expect(
      try unlimited.read { try $0.queryFirst("PRAGMA cache_size") { $0.int(0) } } == -2000)
    // The limit set before the read connection exists reaches it when it opens.
    try database.limitPageCache(kibibytes: 256)
    #expect(try sizes() == (-256, -256))
    // And a later limit reaches the open one.
    try database.limitPageCache(kibibytes: 512)
    #expect(try sizes() == (-512, -512))
  }

  @Test("a cached statement forgets its bound values once it has run")
  func statementForgetsBoundValues() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("bind.db"))
    let sql = "SELECT ? || ''"
    func expanded(_ statement: Statement) -> String {
      sqlite3_expanded_sql(statement.handle).map { pointer in
        defer { sqlite3_free(pointer) }
        return String(cString: pointer)
      } ?? ""
    }
    try database.read { connection in
      // Control: bound and not yet run, the statement holds the value.
      let statement = try connection.statement(sql)
      try statement.bind([.text("52.520008")])
      #expect(expanded(statement).contains("52.520008"))
      statement.reset()
      #expect(!expanded(statement).contains("52.520008"))
      // Run through the connection, as every repository does.
      let echoed = try connection.queryFirst(sql, [.text("13.404954")]) { $0.text(0) }
      #expect(echoed == "13.404954")
      #expect(try connection.statement(sql) === statement)
      #expect(!expanded(statement).contains("13.404954"), "\(expanded(statement))")
    }
  }
}
