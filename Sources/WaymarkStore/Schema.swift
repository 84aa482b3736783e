/// The store's schema history. Append new migrations; never change what a released one does
/// (the column lists named once at the end are interpolated into the same statements).
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
          \(descriptionColumns)
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
          \(visitColumns)
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
          \(lastFixColumns)
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
    Migration(
      version: 4, name: "history outlives its place: visit snapshots, removed places",
      sql: """
        -- Visits and events no longer reference place (no foreign key, no cascade): removing a
        -- place keeps its history. A visit carries the place as it was when the visit was
        -- recorded (name, centre, descriptive fields); place_removed is when its place was
        -- removed (NULL while it exists). The uniqueness that makes recording idempotent
        -- holds among the rows of existing places only, so a place added again with a removed
        -- one's id starts a history of its own.
        -- Foreign keys have been on for every connection since version 1, so every visit has
        -- its place; should one not, this fails (and rolls back) rather than drop the visit.
        CREATE TEMP TABLE visit_v4_guard (orphans INTEGER NOT NULL CHECK (orphans = 0));
        INSERT INTO visit_v4_guard
          SELECT count(*) FROM visit WHERE place_id NOT IN (SELECT id FROM place);
        DROP TABLE visit_v4_guard;
        CREATE TABLE visit_v4 (
          id INTEGER PRIMARY KEY,
          place_id TEXT NOT NULL,
          \(visitColumns)
          name TEXT NOT NULL,
          latitude REAL NOT NULL CHECK (latitude BETWEEN -90 AND 90),
          longitude REAL NOT NULL CHECK (longitude BETWEEN -180 AND 180),
          \(descriptionColumns)
          place_removed INTEGER
        ) STRICT;
        INSERT INTO visit_v4 (id, place_id, arrival, departure, fix_count, best_accuracy,
          last_fix, source, name, latitude, longitude, category, subtitle, address, town, url,
          image, detail)
        SELECT v.id, v.place_id, v.arrival, v.departure, v.fix_count, v.best_accuracy,
          v.last_fix, v.source, p.name, p.latitude, p.longitude, p.category, p.subtitle,
          p.address, p.town, p.url, p.image, p.detail
        FROM visit v JOIN place p ON p.id = v.place_id;
        DROP TABLE visit;
        ALTER TABLE visit_v4 RENAME TO visit;
        CREATE UNIQUE INDEX visit_place_arrival ON visit (place_id, arrival)
          WHERE place_removed IS NULL;
        CREATE UNIQUE INDEX visit_open ON visit (place_id)
          WHERE departure IS NULL AND place_removed IS NULL;
        CREATE INDEX visit_arrival ON visit (arrival);
        CREATE TABLE event_v4 (
          id INTEGER PRIMARY KEY,
          class TEXT NOT NULL CHECK (class IN ('ARRIVAL', 'DEPARTURE')),
          time INTEGER NOT NULL,
          place_id TEXT NOT NULL,
          latitude REAL,
          longitude REAL,
          arrival INTEGER,
          reason TEXT NOT NULL CHECK (json_valid(reason)),
          place_removed INTEGER
        ) STRICT;
        INSERT INTO event_v4 (id, class, time, place_id, latitude, longitude, arrival, reason)
        SELECT id, class, time, place_id, latitude, longitude, arrival, reason FROM event;
        DROP TABLE event;
        ALTER TABLE event_v4 RENAME TO event;
        CREATE UNIQUE INDEX event_unique ON event (class, time, place_id)
          WHERE place_removed IS NULL;
        CREATE INDEX event_place ON event (place_id, time);
        """),
    Migration(
      version: 5, name: "the recorded track",
      sql: """
        -- One row per kept fix (the thinning rule is TrackThinner's). time is the primary key:
        -- the table is stored in time order (the rowid is the time index), appending is cheap,
        -- and a point recorded again (the same log replayed) is the same row. segment numbers
        -- the stretches of continuous fixes: a new one after each fix loss. altitude is above
        -- mean sea level, speed in metres per second, course in degrees, accuracy the
        -- horizontal error in metres; NULL when the receiver did not report it.
        CREATE TABLE track_point (
          time INTEGER PRIMARY KEY NOT NULL,
          \(trackColumns)
        ) STRICT;
        """),
    Migration(
      version: 6, name: "place groups",
      sql: """
        -- A place's group (GeoJSON properties.group) and how the group shares a fix inside
        -- several of its places (properties.overlap: 'all' or 'nearest'); NULL: no group, and
        -- the default sharing.
        ALTER TABLE place ADD COLUMN place_group TEXT;
        ALTER TABLE place ADD COLUMN overlap TEXT
          CHECK (overlap IS NULL OR overlap IN ('all', 'nearest'));
        """),
    Migration(
      version: 7, name: "grant revocations",
      sql: """
        -- One row per `waymark auth revoke` ('*' for a reset), whether or not a grant was
        -- stored: the daemon ends the "allow once" answers of the clients named here (which
        -- are not in authorization_grant). The newest rows only are kept.
        CREATE TABLE grant_revocation (
          id INTEGER PRIMARY KEY,
          client_id TEXT NOT NULL
        ) STRICT;
        """),
    Migration(
      version: 8, name: "stays anywhere",
      sql: """
        -- Stays found from the fixes alone (StayDetector), whether or not a place is declared
        -- there. arrival is the first fix of the stay and unique (recording the same stay again
        -- finds its row); departure the last fix inside, NULL while open (one open stay at
        -- most). latitude/longitude are the error-weighted centre, accuracy its horizontal
        -- accuracy in metres; last_fix is the newest fix counted, saved while the stay is open
        -- so that a restarted daemon continues it. place_id names the declared place the
        -- centre lay in (when recorded, or when a place was accepted later), NULL at none.
        CREATE TABLE stay (
          id INTEGER PRIMARY KEY,
          arrival INTEGER NOT NULL UNIQUE,
          \(stayColumns)
        ) STRICT;
        CREATE UNIQUE INDEX stay_open ON stay (departure IS NULL) WHERE departure IS NULL;
        """),
    Migration(
      version: 9, name: "held monitors",
      sql: """
        -- Monitors waymarkd holds for apps (protocol 1.3, MONITOR): one row per peer uid,
        -- client id and monitor name. state is the monitor's conditions, records and detection
        -- state as JSON (the Waymark library's format); next_sequence the number the next
        -- event gets.
        CREATE TABLE held_monitor (
          id INTEGER PRIMARY KEY,
          uid INTEGER NOT NULL CHECK (uid >= 0),
          client_id TEXT NOT NULL,
          name TEXT NOT NULL,
          state TEXT NOT NULL CHECK (json_valid(state)),
          next_sequence INTEGER NOT NULL DEFAULT 1 CHECK (next_sequence >= 1),
          UNIQUE (uid, client_id, name)
        ) STRICT;
        -- The events an app has not acknowledged, oldest first by sequence (bounded per
        -- monitor by the daemon: past the bound the oldest rows are deleted).
        CREATE TABLE held_monitor_event (
          monitor_id INTEGER NOT NULL REFERENCES held_monitor (id) ON DELETE CASCADE,
          sequence INTEGER NOT NULL CHECK (sequence >= 1),
          identifier TEXT NOT NULL,
          state TEXT NOT NULL CHECK (state IN ('unknown', 'satisfied', 'unsatisfied')),
          time INTEGER NOT NULL,
          PRIMARY KEY (monitor_id, sequence)
        ) STRICT, WITHOUT ROWID;
        """),
    Migration(
      version: 10, name: "inferred departures",
      sql: """
        -- A stay whose device left while the logger slept (it reappeared within walking
        -- reach after a gap): departure is then inferred in the gap, and observed_departure
        -- is the last fix seen at the stay before it. NULL: the departure was observed (every
        -- stay recorded before this version).
        ALTER TABLE stay ADD COLUMN observed_departure INTEGER
          CHECK (observed_departure IS NULL OR observed_departure >= arrival);
        """),
    Migration(
      version: 11, name: "Home Assistant discovery, Traccar",
      sql: """
        -- The outbox takes two kinds: 'homeAssistant' (a discovery config, the state or the
        -- availability: retained, each replacing the one waiting for its topic) and 'osmand' (a
        -- location for a Traccar server, sent over HTTP in the OsmAnd protocol, not to the MQTT
        -- broker: payload is its query, topic empty). A CHECK cannot be altered, so the table is
        -- made again with its rows and its ids.
        CREATE TABLE outbox_v11 (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          kind TEXT NOT NULL
            CHECK (kind IN ('location', 'transition', 'waypoints', 'homeAssistant', 'osmand')),
          topic TEXT NOT NULL,
          payload TEXT NOT NULL,
          qos INTEGER NOT NULL CHECK (qos IN (0, 1, 2)),
          retain INTEGER NOT NULL DEFAULT 0 CHECK (retain IN (0, 1)),
          created INTEGER NOT NULL
        ) STRICT;
        INSERT INTO outbox_v11 (id, kind, topic, payload, qos, retain, created)
          SELECT id, kind, topic, payload, qos, retain, created FROM outbox;
        DROP TABLE outbox;
        ALTER TABLE outbox_v11 RENAME TO outbox;
        CREATE INDEX outbox_kind ON outbox (kind, id);
        -- The retained topics waymarkd published for an integration that can be turned off
        -- (Home Assistant's discovery configs, state and availability): when it is turned off,
        -- each gets an empty retained message, which removes it from the broker, and its row
        -- goes.
        CREATE TABLE retained_topic (
          topic TEXT PRIMARY KEY,
          integration TEXT NOT NULL
        ) STRICT, WITHOUT ROWID;
        """),
    Migration(
      version: 12, name: "place snapshot",
      sql: """
        -- The places' version: bumped by every insert and delete of a place and every update of
        -- a column a place monitor reads, whoever writes (waymark places, an upsert, the sqlite3
        -- shell). A later migration that adds such a column adds it to place_version_update.
        CREATE TABLE place_version (
          id INTEGER PRIMARY KEY CHECK (id = 1),
          version INTEGER NOT NULL
        ) STRICT;
        INSERT INTO place_version (id, version) VALUES (1, 0);
        CREATE TRIGGER place_version_insert AFTER INSERT ON place
        BEGIN UPDATE place_version SET version = version + 1; END;
        CREATE TRIGGER place_version_delete AFTER DELETE ON place
        BEGIN UPDATE place_version SET version = version + 1; END;
        CREATE TRIGGER place_version_update
        AFTER UPDATE OF id, name, latitude, longitude, radius, exit_radius, maximum_accuracy,
          confirmations, dwell_seconds, place_group, overlap ON place
        BEGIN UPDATE place_version SET version = version + 1; END;
        -- The daemon's built place monitor (packed names, overrides, spatial index) for the
        -- places at one version, in a format of its own: read back at start while the version
        -- and format match, instead of reading and indexing every place.
        CREATE TABLE place_snapshot (
          id INTEGER PRIMARY KEY CHECK (id = 1),
          version INTEGER NOT NULL,
          format INTEGER NOT NULL,
          data BLOB NOT NULL
        ) STRICT;
        """),
    Migration(
      version: 13, name: "devices",
      sql: """
        -- Several devices' histories in one store (a fleet's logs replayed into it): the state a
        -- device carries from one fix to the next is kept per device, named by a text id
        -- ('local' is waymarkd's own receiver; every row of an older store is 'local's). Visits,
        -- events and stays carry their device, and their uniqueness and "one open" rules hold per
        -- device; the monitor's saved state is per device and place, the last fix and the track
        -- per device. Places, grants, the outbox and the held monitors are the store's.
        ALTER TABLE visit ADD COLUMN device TEXT NOT NULL DEFAULT 'local';
        DROP INDEX visit_place_arrival;
        CREATE UNIQUE INDEX visit_place_arrival ON visit (device, place_id, arrival)
          WHERE place_removed IS NULL;
        DROP INDEX visit_open;
        CREATE UNIQUE INDEX visit_open ON visit (device, place_id)
          WHERE departure IS NULL AND place_removed IS NULL;
        ALTER TABLE event ADD COLUMN device TEXT NOT NULL DEFAULT 'local';
        DROP INDEX event_unique;
        CREATE UNIQUE INDEX event_unique ON event (device, class, time, place_id)
          WHERE place_removed IS NULL;
        CREATE TABLE monitor_state_v13 (
          device TEXT NOT NULL DEFAULT 'local',
          place_id TEXT NOT NULL REFERENCES place (id) ON DELETE CASCADE,
          snapshot TEXT NOT NULL,
          last_fix_time INTEGER,
          PRIMARY KEY (device, place_id)
        ) STRICT;
        INSERT INTO monitor_state_v13 (place_id, snapshot, last_fix_time)
          SELECT place_id, snapshot, last_fix_time FROM monitor_state;
        DROP TABLE monitor_state;
        ALTER TABLE monitor_state_v13 RENAME TO monitor_state;
        CREATE INDEX monitor_state_place ON monitor_state (place_id);
        CREATE TABLE last_fix_v13 (
          device TEXT PRIMARY KEY NOT NULL,
          \(lastFixColumns)
        ) STRICT;
        INSERT INTO last_fix_v13 (device, time, latitude, longitude, accuracy, source)
          SELECT 'local', time, latitude, longitude, accuracy, source FROM last_fix;
        DROP TABLE last_fix;
        ALTER TABLE last_fix_v13 RENAME TO last_fix;
        -- The track of every device but 'local' (a replayed fleet's): one point per device and
        -- millisecond, stored in that order (appending a device's next point is cheap). 'local''s
        -- track, waymarkd's, stays in track_point, keyed by its time alone: its appends cost what
        -- they did, and an existing store's points are not copied. The key's columns come first:
        -- SQLite 3.40's integrity_check misreads a WITHOUT ROWID row whose key does not lead.
        CREATE TABLE device_track_point (
          device TEXT NOT NULL CHECK (device <> 'local'),
          time INTEGER NOT NULL,
          \(trackColumns),
          PRIMARY KEY (device, time)
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE stay_v13 (
          id INTEGER PRIMARY KEY,
          arrival INTEGER NOT NULL,
          \(stayColumns),
          observed_departure INTEGER
            CHECK (observed_departure IS NULL OR observed_departure >= arrival),
          device TEXT NOT NULL DEFAULT 'local',
          UNIQUE (device, arrival)
        ) STRICT;
        INSERT INTO stay_v13 (id, arrival, departure, latitude, longitude, accuracy, fix_count,
          last_fix, place_id, source, observed_departure)
          SELECT id, arrival, departure, latitude, longitude, accuracy, fix_count, last_fix,
            place_id, source, observed_departure
          FROM stay;
        DROP TABLE stay;
        ALTER TABLE stay_v13 RENAME TO stay;
        CREATE UNIQUE INDEX stay_open ON stay (device) WHERE departure IS NULL;
        CREATE INDEX stay_arrival ON stay (arrival);
        """),
  ]

  /// A place's descriptive columns: in `place` since version 1, and copied into each `visit`
  /// since version 4 (so that a visit keeps describing a place that is gone).
  private static let descriptionColumns =
    "category TEXT, subtitle TEXT, address TEXT, town TEXT, url TEXT, image TEXT, detail TEXT,"

  /// The last fix's columns after its key, the same in version 2's `last_fix` and version 13's.
  private static let lastFixColumns =
    "time INTEGER NOT NULL, latitude REAL NOT NULL, longitude REAL NOT NULL, accuracy REAL, "
    + "source TEXT"

  /// A track point's columns after its time, the same in version 5's `track_point` and version
  /// 13's.
  private static let trackColumns = """
    segment INTEGER NOT NULL CHECK (segment >= 1),
      latitude REAL NOT NULL CHECK (latitude BETWEEN -90 AND 90),
      longitude REAL NOT NULL CHECK (longitude BETWEEN -180 AND 180),
      altitude REAL, speed REAL, course REAL, accuracy REAL
    """

  /// A stay's columns after its arrival, the same in version 8's `stay` and version 13's.
  private static let stayColumns = """
    departure INTEGER CHECK (departure IS NULL OR departure >= arrival),
      latitude REAL NOT NULL CHECK (latitude BETWEEN -90 AND 90),
      longitude REAL NOT NULL CHECK (longitude BETWEEN -180 AND 180),
      accuracy REAL NOT NULL CHECK (accuracy >= 0),
      fix_count INTEGER NOT NULL CHECK (fix_count >= 0),
      last_fix INTEGER NOT NULL, place_id TEXT, source TEXT
    """

  /// A visit's times, counts and source, the same in version 1's `visit` and version 4's.
  private static let visitColumns = """
    arrival INTEGER NOT NULL, departure INTEGER CHECK (departure IS NULL OR departure >= arrival),
      fix_count INTEGER NOT NULL DEFAULT 0, best_accuracy REAL, last_fix INTEGER, source TEXT,
    """
}
