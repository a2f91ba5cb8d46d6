import Foundation
import ShortcutSyncDomain
import ShortcutSyncTestSupport
import Testing

/// `PushJSON`, which reads every push, says what `JSONDecoder` says: the same events from valid
/// bodies, the same error (kind, place and type) from invalid ones.
@Suite struct PushJSONTests {
    struct Body: Codable {
        var events: [Event]
    }

    /// What a decoding came to, in terms both decoders must agree on.
    enum Outcome: Equatable, CustomStringConvertible {
        case events([Event])
        case syntaxError
        case error(String)

        var description: String {
            switch self {
            case .events(let events): "\(events.count) events"
            case .syntaxError: "not JSON"
            case .error(let text): text
            }
        }
    }

    static func outcome(_ decode: () throws -> [Event]) -> Outcome {
        do {
            return .events(try decode())
        } catch let error as DecodingError {
            func pointer(_ path: [any CodingKey]) -> String {
                path.map { "/" + ($0.intValue.map(String.init) ?? $0.stringValue) }.joined()
            }
            switch error {
            case .keyNotFound(let key, let context): return .error("keyNotFound \(pointer(context.codingPath + [key]))")
            case .typeMismatch(let type, let context): return .error("typeMismatch \(pointer(context.codingPath)) \(type)")
            case .valueNotFound(let type, let context): return .error("valueNotFound \(pointer(context.codingPath)) \(type)")
            case .dataCorrupted(let context):
                if context.codingPath.isEmpty, context.underlyingError != nil { return .syntaxError }
                return .error("dataCorrupted \(pointer(context.codingPath)) \(context.debugDescription)")
            @unknown default: return .error("\(error)")
            }
        } catch {
            return .error("not a DecodingError: \(error)")
        }
    }

    /// Both decoders agree. Two differences are intended: a number that is not an integer where an
    /// integer belongs (`"seq": 1.5`) JSONDecoder reports as a body that is "not valid JSON",
    /// with no place, where PushJSON names the field; and an id not in the canonical form that
    /// Foundation still reads on Linux (a sign or a space in a group, `anIdIsReadOnlyInItsCanonicalForm`)
    /// PushJSON refuses.
    static func expectSame(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        var foundation = outcome { try JSONDecoder().decode(Body.self, from: Data(bytes)).events }
        // The one type the domain's decoder reads (an archive holds it) that no push may carry.
        if case .events(let events) = foundation, let index = events.firstIndex(where: { !$0.type.isPushed }) {
            foundation = .error("dataCorrupted /events/\(index)/type \(events[index].type.rawValue) is written by the service; a device cannot push it")
        }
        let ours = outcome { try PushJSON.events(in: bytes) }
        if foundation == .error("dataCorrupted  The given data was not valid JSON."), case .error(let text) = ours,
           text.hasPrefix("dataCorrupted /events/"), text.hasSuffix("is not representable in Swift.") {
            return
        }
        #expect(ours == foundation, "\(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation)
    }

    static func histories(_ pushes: Int) -> [[Event]] {
        var scenario = Scenario(seed: 29, accounts: 2, devicesPerAccount: 3)
        return (0..<pushes).map { _ in scenario.push().events.map(\.event) }
    }

    @Test func randomHistoriesReadAsJSONDecoderReadsThem() throws {
        var events = 0
        var types: Set<EventType> = []
        for push in Self.histories(300) {
            let bytes = Array(try JSONEncoder().encode(Body(events: push)))
            #expect(try PushJSON.events(in: bytes) == push)
            Self.expectSame(bytes)
            events += push.count
            types.formUnion(push.map(\.type))
        }
        #expect(events > 500)
        #expect(types == Set(EventType.allCases.filter(\.isPushed)))
    }

    /// Every member of events of each type, removed or replaced by a value of each JSON kind.
    @Test func bodiesBrokenInEachFieldFailAsJSONDecoderFails() throws {
        let replacements: [Any] = [NSNull(), 5, 1.5, 1e3, 1e30, -1, "x", "6F9619FF-8B86-D011-B42D-00C04FC964FF", "donation",
                                   true, false, [Any](), ["a", 1], [String: Any](), ["k": "v"]]
        var firstOfType: [EventType: Event] = [:]
        for event in Self.histories(200).joined() where firstOfType[event.type] == nil { firstOfType[event.type] = event }
        firstOfType[.deletion] = Event(seq: 1, hlc: .init(wallMillis: 5), body: .deletion(.init(bundleId: "a.b", selector: .all)))
        var cases = 0, refused = 0
        for event in firstOfType.values {
            let object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(event)) as? [String: Any])
            for path in Self.paths(in: object) {
                for replacement in [nil] + replacements.map(Optional.some) {
                    let broken = Self.replacing(path, in: object, with: replacement)
                    let bytes = Array(try JSONSerialization.data(withJSONObject: ["events": [broken]]))
                    Self.expectSame(bytes)
                    if case .events = Self.outcome({ try PushJSON.events(in: bytes) }) {} else { refused += 1 }
                    cases += 1
                }
            }
        }
        #expect(cases > 500)
        #expect(refused > cases / 2)
    }

    /// The service writes a device's sign-out itself: a push carrying one is refused, as the
    /// generated decoder refuses a type the API does not list.
    @Test func aSignOutIsNeverPushed() throws {
        let bytes = Array(#"{"events":[{"id":"6f1d3e2a-3f4b-4c5d-8e9f-0a1b2c3d4e5f","seq":1,"hlc":{"wallMillis":1,"counter":0},"type":"deviceSignedOut"}]}"#.utf8)
        #expect(throws: DecodingError.self) { try PushJSON.events(in: bytes) }
        Self.expectSame(bytes)
        let event = Event(seq: 1, hlc: HLCTimestamp(wallMillis: 1), body: .signedOut)
        #expect(EventValidator(nowMillis: 1).violations(ofBatch: [event]).map(\.pointer) == ["/events/0/type"])
        #expect(EventValidator(nowMillis: 1).violations(of: event).isEmpty, "an archive holds it (admin export and import)")
    }

    /// Foundation's `UUID(uuidString:)` reads "-621E1F8-…" as FA21E1F8-… on Linux, so JSONDecoder
    /// takes such an id as another one; PushJSON refuses it, naming the field, as any malformed id.
    @Test func anIdIsReadOnlyInItsCanonicalForm() throws {
        let event = #"{"id":"%@","seq":1,"hlc":{"wallMillis":1,"counter":0},"type":"voiceShortcutDeleted","voiceShortcutId":"%@"}"#
        let good = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
        for (id, voice, pointer) in [("-621E1F8-C36C-495A-93FC-0C247A3E6E5F", good, "/events/0/id"),
                                     (good, " 621E1F8-C36C-495A-93FC-0C247A3E6E5F", "/events/0/voiceShortcutId")] {
            let bytes = Array(#"{"events":["#.utf8) + Array(event.replacingOccurrences(of: "%@", with: id, options: [], range: event.range(of: "%@"))
                .replacingOccurrences(of: "%@", with: voice).utf8) + Array("]}".utf8)
            #expect(throws: DecodingError.self) { try PushJSON.events(in: bytes) }
            #expect(Self.outcome { try PushJSON.events(in: bytes) } == .error("dataCorrupted \(pointer) Attempted to decode UUID from invalid UUID string."))
            #expect(UUID(uuidString: id) != nil && UUID(uuidString: voice) != nil, "Foundation reads both")
        }
        let bytes = Array(#"{"events":["#.utf8) + Array(event.replacingOccurrences(of: "%@", with: good.lowercased()).utf8) + Array("]}".utf8)
        Self.expectSame(bytes)
    }

    @Test func theBodyItselfBrokenFailsAsJSONDecoderFails() throws {
        for text in [#"{}"#, #"[]"#, #"5"#, #"null"#, #"{"events":null}"#, #"{"events":{}}"#, #"{"events":[null]}"#,
                     #"{"events":[5]}"#, #"{"events":[[]]}"#, #"{"events":[]}"#] {
            Self.expectSame(Array(text.utf8))
        }
    }

    /// Text that is not JSON (RFC 8259) is a syntax error, whatever it holds. JSONDecoder refuses
    /// it too, but sometimes as a value of the wrong type, and it takes a trailing comma after
    /// the last member of an object.
    @Test func textThatIsNotJSONIsASyntaxError() throws {
        let texts = ["", " ", "{", #"{"events":[}"#, #"{"events":[],}"#, #"{"events":[1,]}"#, #"{"events" [] }"#,
                     #"{events:[]}"#, #"{"events":[]} x"#, #"{"events":[01]}"#, #"{"events":[1.]}"#, #"{"events":[-]}"#,
                     #"{"events":[.5]}"#, #"{"events":[tru]}"#, #"{"events":["\x"]}"#, #"{"events":["\u12"]}"#,
                     #"{"events":["\ud800"]}"#, #"{"events":["\udc00"]}"#, "{\"events\":[\"a\u{01}b\"]}", "{'events':[]}",
                     String(repeating: "[", count: 600) + String(repeating: "]", count: 600)]
        let invalidUTF8 = Array(#"{"events":[""#.utf8) + [0xFF, 0xFE] + Array(#""]}"#.utf8)
        for bytes in texts.map({ Array($0.utf8) }) + [invalidUTF8] {
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(Self.outcome { try PushJSON.events(in: bytes) } == .syntaxError, "\(text)")
            if case .events = Self.outcome({ try JSONDecoder().decode(Body.self, from: Data(bytes)).events }) {
                #expect(text == #"{"events":[],}"#, "JSONDecoder took \(text)")
            }
        }
    }

    /// A member name given twice in any object is refused as text that is not JSON to read: readers
    /// disagree on which value counts (JSONDecoder takes the first, JSONSerialization and jsonb
    /// the last), and the fuzzer found a body whose events differed between them. Many names
    /// in one object are told apart at the cost of a set, not of a scan each.
    @Test func aMemberNameGivenTwiceIsRefused() throws {
        let event = Array(#"{"events":[{"id":"6E9B3A52-2B7B-4E55-9C5A-4D38D7C1B001","seq":1,"hlc":{"wallMillis":1764000000000,"counter":0},"type":"voiceShortcutDeleted","voiceShortcutId":"6E9B3A52-2B7B-4E55-9C5A-4D38D7C1B0A1"}]}"#.utf8)
        for text in [#"{"events":[],"events":[]}"#,
                     #"{"events":[{"id":"6E9B3A52-2B7B-4E55-9C5A-4D38D7C1B001","seq":1,"seq":2}]}"#,
                     #"{"events":[{"parameters":{"a":1,"b":2,"a":3}}]}"#,
                     #"{"events":[{"parameters":{"ab":1,"b":2,"a\u0062":3}}]}"#, #"{"events":[{"parameters":{"\u00e9":1,"é":2}}]}"#,
                     // The names before are found past their values, however deep these are.
                     #"{"events":[{"parameters":{"b":[1,[2]],"a":{"x":[1,{"a":2}]},"a":3}}]}"#] {
            #expect(Self.outcome { try PushJSON.events(in: Array(text.utf8)) } == .syntaxError, "\(text)")
        }
        let many = "{" + (0..<5_000).map { #""k\#($0)":0"# }.joined(separator: ",") + #","k17":1}"#
        #expect(Self.outcome { try PushJSON.events(in: Array(many.utf8)) } == .syntaxError)
        let escaped = "{" + (0..<20).map { #""k\#($0)":0"# }.joined(separator: ",") + #","k\u00317":1}"#
        #expect(Self.outcome { try PushJSON.events(in: Array(escaped.utf8)) } == .syntaxError)
        // Past sixteen names, the set of them is made from the names before, found past their
        // values (the first one's nested), and not from the names these hold.
        let afterNested = #"{"k0":[[0,0,0,0],{"k7":[0]}],"# + (1..<20).map { #""k\#($0)":0"# }.joined(separator: ",")
        #expect(Self.outcome { try PushJSON.events(in: Array((afterNested + #","k5":1}"#).utf8)) } == .syntaxError)
        #expect(Self.outcome { try PushJSON.events(in: Array((afterNested + #","k20":1}"#).utf8)) } != .syntaxError)
        #expect(Self.outcome { try PushJSON.events(in: event) } == Self.outcome { try JSONDecoder().decode(Body.self, from: Data(event)).events })
        if case .events(let events) = Self.outcome({ try PushJSON.events(in: event) }) { #expect(events.count == 1) } else { Issue.record("a valid body was refused") }
    }

    /// Every input of the fuzzer's corpus (Fuzz/corpus/push-json), read as JSONDecoder reads it,
    /// or refused as not JSON.
    @Test func theFuzzCorpusReadsAsJSONDecoderReadsIt() throws {
        let folder = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../Fuzz/corpus/push-json").standardized
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(files.count >= 10)
        for file in files {
            let bytes = Array(try Data(contentsOf: folder.appending(path: file)))
            let ours = Self.outcome { try PushJSON.events(in: bytes) }
            if ours != .syntaxError { Self.expectSame(bytes) }
        }
    }

    @Test func escapesAndUnicodeReadAsJSONDecoderReadsThem() throws {
        let awkward = #"quote \" backslash \\ slash \/ \b\f\n\r\t \u00e9 \u6c64 \ud83c\udf45 raw é 汤 🍅"#
        let event = #"{"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","seq":1,"hlc":{"wallMillis":5,"counter":0},"type":"donation","#
            + #""bundleId":"a.b","identifier":"\#(awkward)","kind":"intent","title":"t","parameters":{"\#(awkward)":[1,-0.5,2e-3,1E+2,"\#(awkward)",{}]}}"#
        let bytes = Array(#"{"events":[\#(event)]}"#.utf8)
        Self.expectSame(bytes)
        let read = try PushJSON.events(in: bytes)
        guard case .donation(let donation) = read.first?.body else { Issue.record("not a donation"); return }
        #expect(donation.identifier.hasSuffix("raw é 汤 🍅"))
        #expect(donation.identifier.contains("\u{6c64} 🍅"))
    }

    /// The reader looks at a string eight bytes at a time until a byte ends it, starts an escape
    /// or is not allowed: each such byte, and each kind of character, at every place of strings
    /// of every length around the word's, in a member name and in a value, reads as JSONDecoder
    /// reads it (or is refused as not JSON where JSONDecoder refuses it).
    @Test func aStringReadEightBytesAtATimeReadsAsJSONDecoderReadsIt() throws {
        let pieces: [[UInt8]] = [Array(#"\""#.utf8), Array(#"\\"#.utf8), Array(#"\n"#.utf8), Array(#"\u0041"#.utf8), [0x01], [0x1F],
                                 Array("é".utf8), Array("汤".utf8), Array("🍅".utf8), [0xFF], [0xE6, 0xB1], [0xC3], [0x80], [0xED, 0xA0, 0x80],
                                 [0x7F], [0x20], [0x21], [0x23], [0x5B], [0x5D]]
        for length in 0...19 {
            for place in 0...length {
                for piece in pieces {
                    var text = Array(repeating: UInt8(ascii: "a"), count: length)
                    text.insert(contentsOf: piece, at: place)
                    let prefix = Array(#"{"events":[{"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","seq":1,"hlc":{"wallMillis":5,"counter":0},"type":"donation","bundleId":"a.b","identifier":""#.utf8)
                    let value = prefix + text + Array(#"","kind":"intent","title":"t"}]}"#.utf8)
                    let name = prefix + Array(#"i","kind":"intent","title":"t","parameters":{""#.utf8) + text + Array(#"":1}}]}"#.utf8)
                    for body in [value, name] {
                        // JSONDecoder calls text that is not JSON "not valid JSON" without a reason.
                        let foundation = Self.outcome { try JSONDecoder().decode(Body.self, from: Data(body)).events }
                        if foundation == .error("dataCorrupted  The given data was not valid JSON.") {
                            #expect(Self.outcome { try PushJSON.events(in: body) } == .syntaxError, "\(String(decoding: body, as: UTF8.self))")
                        } else {
                            Self.expectSame(body)
                        }
                    }
                }
            }
        }
    }

    /// Member names the reader knows are read as its own strings; one that differs from a known
    /// name in a byte, or is a known name with an escape in it, is still itself.
    @Test func memberNamesNearTheKnownOnesReadAsJSONDecoderReadsThem() throws {
        for name in ["identifier", "identifieR", "identifie", "identifierr", #"identifie\u0072"#, "eligibleForPrediction",
                     "eligibleForPredictioN", "subtitle", "subtitlE", "", "a"] {
            let text = #"{"events":[{"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","seq":1,"hlc":{"wallMillis":5,"counter":0},"type":"donation","bundleId":"a.b","identifier":"x","kind":"intent","title":"t","parameters":{"\#(name)":1}}]}"#
            Self.expectSame(Array(text.utf8))
            let renamed = text.replacingOccurrences(of: #""identifier":"x""#, with: #""\#(name)":"x""#)
            Self.expectSame(Array(renamed.utf8))
        }
    }

    // MARK: Helpers

    /// The path of every value in the object, containers and their members alike.
    static func paths(in value: Any, at path: [String] = []) -> [[String]] {
        var paths: [[String]] = path.isEmpty ? [] : [path]
        if let object = value as? [String: Any] {
            for (key, member) in object { paths += Self.paths(in: member, at: path + [key]) }
        } else if let array = value as? [Any] {
            for (index, element) in array.enumerated() { paths += Self.paths(in: element, at: path + [String(index)]) }
        }
        return paths
    }

    /// The value with what is at `path` replaced, or removed when `replacement` is nil.
    static func replacing(_ path: [String], in value: Any, with replacement: Any?) -> Any {
        guard let first = path.first else { return replacement ?? NSNull() }
        if var object = value as? [String: Any] {
            object[first] = path.count == 1 ? replacement : replacing(Array(path.dropFirst()), in: object[first]!, with: replacement)
            return object
        }
        if var array = value as? [Any], let index = Int(first) {
            if path.count == 1 {
                if let replacement { array[index] = replacement } else { array.remove(at: index) }
            } else {
                array[index] = replacing(Array(path.dropFirst()), in: array[index], with: replacement)
            }
            return array
        }
        return value
    }
}
