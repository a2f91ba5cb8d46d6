import Foundation
import Testing
import ShortcutSyncDomain

@Suite struct EventCodingTests {
    @Test func eventsAreFlatWithATypeDiscriminatorAndDefaults() throws {
        let json = """
        {"id":"6E9B3A52-2B7B-4E55-9C5A-4D38D7C1B0A1","seq":17,"hlc":{"wallMillis":1763712000123,"counter":2},
         "type":"donation","bundleId":"com.example.soup","identifier":"tomato","kind":"intent",
         "intentType":"OrderSoupIntent","title":"Tomato soup","parameters":{"size":"large","count":2}}
        """
        let event = try JSONDecoder().decode(Event.self, from: Data(json.utf8))
        #expect(event.seq == 17)
        #expect(event.hlc == HLCTimestamp(wallMillis: 1_763_712_000_123, counter: 2))
        guard case .donation(let donation) = event.body else {
            Issue.record("expected a donation, got \(event.type)")
            return
        }
        #expect(donation.eligibleForPrediction == true)
        #expect(donation.eligibleForSearch == false)
        #expect(donation.keywords == [])
        #expect(donation.parameters["count"] == .number(2))

        let again = try JSONDecoder().decode(Event.self, from: JSONEncoder().encode(event))
        #expect(again == event)
    }

    @Test func aDeletionNeedsExactlyOneSelector() throws {
        func decode(_ fields: String) throws -> Event {
            try JSONDecoder().decode(Event.self, from: Data("""
            {"id":"\(UUID())","seq":1,"hlc":{"wallMillis":1,"counter":0},"type":"deletion","bundleId":"com.example.soup"\(fields)}
            """.utf8))
        }
        #expect(try decode(#","all":true"#).body == .deletion(Deletion(bundleId: "com.example.soup", selector: .all)))
        #expect(try decode(#","groupIdentifier":"g""#).body == .deletion(Deletion(bundleId: "com.example.soup", selector: .groupIdentifier("g"))))
        #expect(throws: DecodingError.self) { try decode("") }
        #expect(throws: DecodingError.self) { try decode(#","all":true,"identifiers":["a"]"#) }
        #expect(throws: DecodingError.self) { try decode(#","all":false"#) }
    }

    @Test func anUnknownTypeIsRefused() {
        let json = #"{"id":"\#(UUID())","seq":1,"hlc":{"wallMillis":1,"counter":0},"type":"shortcutRenamed"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Event.self, from: Data(json.utf8)) }
    }
}
