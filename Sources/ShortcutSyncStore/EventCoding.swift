import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// How events travel between Swift and their rows.
enum EventCoding {
    /// The columns `decode` reads; the event is reassembled as JSON by the server.
    static let columns = """
        position, tx_id::text::int8, account_id, stream_version, device_id, recorded_at,
        (body || jsonb_build_object('id', event_id, 'seq', seq, 'type', type,
            'hlc', jsonb_build_object('wallMillis', hlc_wall, 'counter', hlc_counter)))::text
        """

    static func decode(_ rows: PostgresRowSequence) async throws -> [RecordedEvent] {
        let decoder = JSONDecoder()
        var events: [RecordedEvent] = []
        for try await (position, txid, account, version, device, recordedAt, json) in rows.decode((Int64, Int64, UUID, Int64, UUID, Date, String).self) {
            let event: Event
            do {
                event = try decoder.decode(Event.self, from: Data(json.utf8))
            } catch {
                throw StoreError.corruptRow("event at position \(position): \(error)")
            }
            events.append(RecordedEvent(position: position, transactionID: UInt64(txid), accountId: account,
                                        streamVersion: version, deviceId: device, event: event, recordedAt: recordedAt))
        }
        return events
    }
}
