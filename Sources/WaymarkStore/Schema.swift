/// The store's schema history. Append new migrations; never edit a released one.
///
/// Times are integers: milliseconds since 1970-01-01T00:00:00Z (UTC), the precision of
/// Waymark's timestamps. Coordinates are degrees, distances metres.
public enum Schema {
  /// Every migration, in order.
  public static let migrations: [Migration] = [
    Migration(
      version: 1, name: "places, visits, events",
      sql: """
        CREATE TABLE place (
          id TEXT PRIMARY KEY NOT NULL,
          name TEXT NOT NULL,
          latitude REAL NOT NULL CHECK (latitude BETWEEN -90 AND 90),
          longitude REAL NOT NULL CHECK (longitude BETWEEN -180 AND 180),
          radius REAL NOT NULL CHECK (radius > 0),
          category TEXT,
          subtitle TEXT,
          address TEXT,
          town TEXT,
          url TEXT,
          image TEXT,
          detail TEXT,
          created INTEGER,
          visited INTEGER NOT NULL DEFAULT 0 CHECK (visited IN (0, 1)),
          visit_count INTEGER NOT NULL DEFAULT 0,
          exit_radius REAL,
          maximum_accuracy REAL,
          confirmations INTEGER,
          dwell_seconds REAL
        ) STRICT;
        CREATE TABLE visit (
          id INTEGER PRIMARY KEY,
          place_id TEXT NOT NULL REFERENCES place (id) ON DELETE CASCADE,
          arrival INTEGER NOT NULL,
          departure INTEGER CHECK (departure IS NULL OR departure >= arrival),
          fix_count INTEGER NOT NULL DEFAULT 0,
          best_accuracy REAL,
          last_fix INTEGER,
          source TEXT,
          UNIQUE (place_id, arrival)
        ) STRICT;
        CREATE UNIQUE INDEX visit_open ON visit (place_id) WHERE departure IS NULL;
        CREATE INDEX visit_arrival ON visit (arrival);
        CREATE TABLE event (
          id INTEGER PRIMARY KEY,
          class TEXT NOT NULL CHECK (class IN ('ARRIVAL', 'DEPARTURE')),
          time INTEGER NOT NULL,
          place_id TEXT NOT NULL REFERENCES place (id) ON DELETE CASCADE,
          latitude REAL,
          longitude REAL,
          arrival INTEGER,
          reason TEXT NOT NULL CHECK (json_valid(reason)),
          UNIQUE (class, time, place_id)
        ) STRICT;
        CREATE INDEX event_place ON event (place_id, time);
        """),
    Migration(
      version: 2, name: "monitor state, last fix, authorization grants",
      sql: """
        CREATE TABLE monitor_state (
          place_id TEXT PRIMARY KEY NOT NULL REFERENCES place (id) ON DELETE CASCADE,
          snapshot TEXT NOT NULL,
          last_fix_time INTEGER
        ) STRICT;
        CREATE TABLE last_fix (
          id INTEGER PRIMARY KEY CHECK (id = 1),
          time INTEGER NOT NULL,
          latitude REAL NOT NULL,
          longitude REAL NOT NULL,
          accuracy REAL,
          source TEXT
        ) STRICT;
        CREATE TABLE authorization_grant (
          client_id TEXT PRIMARY KEY NOT NULL,
          level TEXT NOT NULL CHECK (level IN ('never', 'whenInUse', 'always')),
          accuracy TEXT NOT NULL CHECK (accuracy IN ('full', 'reduced')),
          granted_at INTEGER NOT NULL
        ) STRICT;
        """),
    Migration(
      version: 3, name: "MQTT outbox",
      sql: """
        CREATE TABLE outbox (
          -- AUTOINCREMENT: ids only grow, so "the rows after the last one sent" never skips a
          -- row that reused the id of an acknowledged (deleted) one.
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          kind TEXT NOT NULL CHECK (kind IN ('location', 'transition', 'waypoints')),
          topic TEXT NOT NULL,
          payload TEXT NOT NULL,
          qos INTEGER NOT NULL CHECK (qos IN (0, 1, 2)),
          retain INTEGER NOT NULL DEFAULT 0 CHECK (retain IN (0, 1)),
          created INTEGER NOT NULL
        ) STRICT;
        CREATE INDEX outbox_kind ON outbox (kind, id);
        """),
  ]
}
