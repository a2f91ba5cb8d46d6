import PostgresNIO
@testable import ShortcutSyncStore
import Testing

/// A violated constraint is recognised by its name on one PostgreSQL and by its shard's copy on
/// a Citus worker (`<name>_<shard id>`), and nothing else.
@Suite struct ConstraintNameTests {
    @Test func aShardsCopyIsTheConstraintAndOtherNamesAreNot() {
        #expect(PSQLError.constraint("events_event_id_key", isCopyOf: "events_event_id_key"))
        #expect(PSQLError.constraint("events_event_id_key_102008", isCopyOf: "events_event_id_key"))
        #expect(!PSQLError.constraint("events_event_id_key_", isCopyOf: "events_event_id_key"))
        #expect(!PSQLError.constraint("events_event_id_key_1a", isCopyOf: "events_event_id_key"))
        #expect(!PSQLError.constraint("events_device_seq_key_102008", isCopyOf: "events_event_id_key"))
        #expect(!PSQLError.constraint("events_event_id_key2", isCopyOf: "events_event_id_key"))
    }
}
