import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// How events travel between Swift and their rows.
enum EventCoding {
    /// The columns `decode` reads; the event is reassembled as JSON by the server.
    static let columns = """
        position, account_id, version, device_id, recorded_at,
        (body || jsonb_build_object('id', event_id, 'seq', seq, 'type', type,
            'hlc', jsonb_build_object('wallMillis', hlc_wall, 'counter', hlc_counter)))::text
        """

    static func decode<Rows: AsyncSequence>(_ rows: Rows) async throws -> [RecordedEvent] where Rows.Element == PostgresRow {
        let decoder = JSONDecoder()
        var events: [RecordedEvent] = []
        for try await (position, account, version, device, recordedAt, json) in rows.decode((Int64, UUID, Int64, UUID, Date, String).self) {
            let event: Event
            do {
                event = try decoder.decode(Event.self, from: Data(json.utf8))
            } catch {
                throw StoreError.corruptRow("event \(version) of account \(account): \(error)")
            }
            events.append(RecordedEvent(position: position, accountId: account, version: version, deviceId: device,
                                        event: event, recordedAt: recordedAt))
        }
        return events
    }
}
