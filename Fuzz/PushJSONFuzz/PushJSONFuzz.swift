import Foundation
import ShortcutSyncDomain

/// The fuzz target of the push body's reader (`PushJSON`, which reads every byte a device sends
/// to `POST /v1/sync/push`): built with `-sanitize=fuzzer,address -DFUZZING`, libFuzzer feeds it
/// inputs (see `.ci/fuzz`); built plainly, it replays the files or folders it is given.
///
/// For every input it must not crash or read out of bounds (the sanitizers), and it must agree
/// with `JSONDecoder` and the domain's `Decodable` conformances: the same events when both
/// take the body; nothing taken by one and refused by the other, but for text that is not JSON
/// by RFC 8259, which `PushJSON` refuses as a syntax error and `JSONDecoder` sometimes takes (a
/// trailing comma).
enum PushJSONCheck {
    struct Body: Decodable {
        var events: [Event]
    }

    static func check(_ bytes: [UInt8]) {
        let ours = Result { () throws(DecodingError) -> [Event] in try PushJSON.events(in: bytes) }
        let foundation = Result { try JSONDecoder().decode(Body.self, from: Data(bytes)).events }
        switch (ours, foundation) {
        case (.success(let events), .success(let expected)):
            guard events == expected else { fail("PushJSON read other events than JSONDecoder", bytes) }
        case (.success, .failure(let error)):
            fail("PushJSON took a body that JSONDecoder refuses (\(error))", bytes)
        case (.failure(let error), .success):
            guard case .dataCorrupted(let context) = error, context.codingPath.isEmpty, context.underlyingError != nil else {
                fail("PushJSON refused (\(error)) a JSON body that JSONDecoder takes", bytes)
            }
        case (.failure, .failure):
            break
        }
    }

    static func fail(_ why: String, _ bytes: [UInt8]) -> Never {
        fatalError("\(why): \(String(decoding: bytes.prefix(2_000), as: UTF8.self))")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func pushJSONFuzzOne(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    PushJSONCheck.check(Array(UnsafeBufferPointer(start: data, count: count)))
    return 0
}

#if FUZZING
/// libFuzzer's driver (libclang_rt.fuzzer, linked by `-sanitize=fuzzer`), run from this
/// executable's own entry point, which SwiftPM names for the target.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

@main
struct Fuzz {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(runFuzzerDriver(&argc, &argv) { data, count in pushJSONFuzzOne(data, count) })
    }
}
#else
/// Replays inputs: each argument a file, or a folder whose files are replayed.
@main
struct Replay {
    static func main() throws {
        var replayed = 0
        for argument in CommandLine.arguments.dropFirst() {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: argument, isDirectory: &isFolder) else {
                FileHandle.standardError.write(Data("error: no file or folder at \(argument)\n".utf8))
                exit(2)
            }
            let files = isFolder.boolValue
                ? try FileManager.default.contentsOfDirectory(atPath: argument).sorted().map { argument + "/" + $0 }
                : [argument]
            for file in files {
                PushJSONCheck.check(Array(try Data(contentsOf: URL(fileURLWithPath: file))))
                replayed += 1
            }
        }
        print("push-json-fuzz: \(replayed) inputs replayed, every one read as JSONDecoder reads it")
    }
}
#endif
